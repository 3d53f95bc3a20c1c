#ifndef ACTEX_SAE_SAE_FILES_H_
#define ACTEX_SAE_SAE_FILES_H_

#include <cstdint>
#include <expected>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sae/sae_model.h"
#include "storage/safetensors.h"

namespace actex {

// What both SAE readers share: the config file and the weight tensors of a folder.

// `path` (a cfg.json) parsed; an error names the file when it is missing, unreadable,
// not JSON, or not a JSON object.
std::expected<nlohmann::json, std::string> ReadSaeConfig(const std::string& path);

// Tensor `name` of `file` as float32 (F32 read as is; BF16 and F16 widened exactly), of
// exactly `shape`; an error names the file, the tensor, and what was found instead
// (missing, another dtype, another shape).
std::expected<std::vector<float>, std::string> ReadSaeTensor(const SafetensorsFile& file,
                                                             const std::string& name,
                                                             const std::vector<int64_t>& shape);

// The names a library gives the tensors every SAE has.
struct SaeEncoderTensorNames {
  const char* encoder_weight;
  bool encoder_weight_is_d_in_by_d_sae;  // SAELens's W_enc [d_in, d_sae], transposed on reading
  const char* encoder_bias;
  const char* decoder_bias;
};

// Reads the encoder weight, encoder bias and decoder bias of `sae` (whose d_in and d_sae
// are set) from `file`, as ReadSaeTensor does each.
std::expected<void, std::string> ReadSaeEncoderTensors(const SafetensorsFile& file,
                                                       const SaeEncoderTensorNames& names,
                                                       SaeModel* sae);

// matrix [rows, cols] → [cols, rows].
std::vector<float> TransposeMatrix(const std::vector<float>& matrix, int64_t rows, int64_t cols);

}  // namespace actex

#endif  // ACTEX_SAE_SAE_FILES_H_
