#include <filesystem>

#include "sae/sae_files.h"
#include "sae/sae_folders.h"
#include "sae/sae_site.h"
#include "storage/json_field.h"
#include "storage/safetensors.h"

namespace actex {
namespace {

// A boolean field that must be false (or absent) for actex to encode the SAE.
std::expected<void, std::string> RequireFalse(const nlohmann::json& config, const JsonPlace& place,
                                              const char* field, const char* why) {
  if (!config.contains(field)) return {};
  auto value = JsonBoolField(config, place, field);
  if (!value) return std::unexpected(value.error());
  if (*value) return std::unexpected(place.file + ": " + field + " is true: " + why);
  return {};
}

// num_latents, or d_in × expansion_factor when num_latents is 0, as sparsify computes it.
std::expected<int64_t, std::string> LatentCount(const nlohmann::json& config,
                                                const JsonPlace& place, int64_t d_in) {
  auto num_latents = JsonIntField(config, place, "num_latents", 0);
  if (!num_latents) return std::unexpected(num_latents.error());
  if (*num_latents > 0) return *num_latents;
  auto expansion_factor = JsonIntField(config, place, "expansion_factor", 1);
  if (!expansion_factor) return std::unexpected(expansion_factor.error());
  return d_in * *expansion_factor;
}

// The last component of `dir` ("layers.5" of "out/layers.5/" as of "out/layers.5").
std::string FolderName(const std::string& dir) {
  std::filesystem::path path = std::filesystem::path(dir).lexically_normal();
  if (!path.has_filename()) path = path.parent_path();
  return path.filename().string();
}

}  // namespace

std::expected<SaeModel, std::string> ReadSparsifyFolder(const std::string& dir) {
  // The hookpoint first: it is the folder's name, and a folder of no known site is
  // refused before its files are read.
  const std::string hookpoint = FolderName(dir);
  auto site = SiteOfSparsifyHookpoint(hookpoint);
  if (!site) return std::unexpected(dir + ": " + site.error());
  const std::string config_path = dir + "/" + kSparsifyConfigFile;
  auto config = ReadSaeConfig(config_path);
  if (!config) return std::unexpected(config.error());
  const JsonPlace place{config_path, ""};
  if (config->contains("activation")) {
    auto activation = JsonStringField(*config, place, "activation");
    if (!activation) return std::unexpected(activation.error());
    if (*activation != "topk") {
      return std::unexpected(config_path + ": activation \"" + *activation +
                             "\" is not implemented (actex encodes sparsify's \"topk\")");
    }
  }
  if (auto refused = RequireFalse(*config, place, "transcode",
                                  "a transcoder reads another module's input; actex encodes "
                                  "SAEs of a site");
      !refused) {
    return std::unexpected(refused.error());
  }
  if (auto refused = RequireFalse(*config, place, "skip_connection",
                                  "a skip connection (W_skip) is not implemented");
      !refused) {
    return std::unexpected(refused.error());
  }
  SaeModel sae;
  sae.dir = dir;
  sae.format = SaeFormat::kSparsify;
  sae.activation = SaeActivation::kTopK;
  sae.subtract_decoder_bias = true;
  sae.site = *site;
  sae.site_source = "sparsify hookpoint \"" + hookpoint + "\" (the folder's name)";
  auto d_in = JsonIntField(*config, place, "d_in", 1);
  if (!d_in) return std::unexpected(d_in.error());
  sae.d_in = *d_in;
  auto d_sae = LatentCount(*config, place, sae.d_in);
  if (!d_sae) return std::unexpected(d_sae.error());
  sae.d_sae = *d_sae;
  auto k = JsonIntField(*config, place, "k", 1);
  if (!k) return std::unexpected(k.error());
  sae.k = *k;

  auto weights = SafetensorsFile::Open(dir + "/" + kSparsifyWeightsFile);
  if (!weights) return std::unexpected(weights.error());
  const SafetensorsFile& file = **weights;
  if (auto read =
          ReadSaeEncoderTensors(file, {"encoder.weight", false, "encoder.bias", "b_dec"}, &sae);
      !read) {
    return std::unexpected(read.error());
  }
  return sae;
}

}  // namespace actex
