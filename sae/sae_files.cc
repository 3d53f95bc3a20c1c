#include "sae/sae_files.h"

#include "base/text.h"
#include "base/whole_file.h"
#include "model/kernels/half_float.h"

namespace actex {

std::expected<nlohmann::json, std::string> ReadSaeConfig(const std::string& path) {
  auto text = ReadWholeFile(path);
  if (!text) return std::unexpected(text.error());
  nlohmann::json config = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded()) return std::unexpected(path + ": not valid JSON");
  if (!config.is_object()) return std::unexpected(path + ": not a JSON object");
  return config;
}

std::expected<std::vector<float>, std::string> ReadSaeTensor(const SafetensorsFile& file,
                                                             const std::string& name,
                                                             const std::vector<int64_t>& shape) {
  const auto found = file.tensors().find(name);
  if (found == file.tensors().end()) {
    return std::unexpected(file.path() + ": no tensor " + name);
  }
  const SafetensorsTensor& tensor = found->second;
  if (tensor.shape != shape) {
    return std::unexpected(file.path() + ": tensor " + name + " has shape " +
                           ShapeText(tensor.shape) + ", expected " + ShapeText(shape));
  }
  WeightDtype dtype;
  if (tensor.dtype == "F32") {
    dtype = WeightDtype::kF32;
  } else if (tensor.dtype == "BF16") {
    dtype = WeightDtype::kBF16;
  } else if (tensor.dtype == "F16") {
    dtype = WeightDtype::kF16;
  } else {
    return std::unexpected(file.path() + ": tensor " + name + " is " + tensor.dtype +
                           "; SAE weights must be F32, BF16 or F16");
  }
  int64_t count = 1;
  for (int64_t dimension : shape) count *= dimension;
  std::vector<float> values(static_cast<size_t>(count));
  WidenToFloat(tensor.bytes.data(), dtype, count, values.data());
  return values;
}

std::expected<void, std::string> ReadSaeEncoderTensors(const SafetensorsFile& file,
                                                       const SaeEncoderTensorNames& names,
                                                       SaeModel* sae) {
  const int64_t d_in = sae->d_in, d_sae = sae->d_sae;
  auto encoder =
      ReadSaeTensor(file, names.encoder_weight,
                    names.encoder_weight_is_d_in_by_d_sae ? std::vector<int64_t>{d_in, d_sae}
                                                          : std::vector<int64_t>{d_sae, d_in});
  if (!encoder) return std::unexpected(encoder.error());
  sae->encoder_weight = names.encoder_weight_is_d_in_by_d_sae
                            ? TransposeMatrix(*encoder, d_in, d_sae)
                            : std::move(*encoder);
  auto encoder_bias = ReadSaeTensor(file, names.encoder_bias, {d_sae});
  if (!encoder_bias) return std::unexpected(encoder_bias.error());
  sae->encoder_bias = std::move(*encoder_bias);
  auto decoder_bias = ReadSaeTensor(file, names.decoder_bias, {d_in});
  if (!decoder_bias) return std::unexpected(decoder_bias.error());
  sae->decoder_bias = std::move(*decoder_bias);
  return {};
}

std::vector<float> TransposeMatrix(const std::vector<float>& matrix, int64_t rows, int64_t cols) {
  std::vector<float> transposed(matrix.size());
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t col = 0; col < cols; ++col)
      transposed[col * rows + row] = matrix[row * cols + col];
  }
  return transposed;
}

}  // namespace actex
