#include <cmath>

#include "sae/sae_files.h"
#include "sae/sae_folders.h"
#include "storage/json_field.h"
#include "storage/safetensors.h"

namespace actex {
namespace {

// The hook name SAELens 6 keeps in `metadata`, or SAELens 5 at the top level.
std::expected<void, std::string> ReadHookName(const nlohmann::json& config, const JsonPlace& place,
                                              SaeModel* sae) {
  const auto metadata = config.find("metadata");
  if (metadata != config.end() && metadata->is_object() && metadata->contains("hook_name")) {
    auto hook_name = JsonStringField(*metadata, place.Member("metadata"), "hook_name");
    if (!hook_name) return std::unexpected(hook_name.error());
    sae->site = *hook_name;
    sae->site_source = std::string("metadata.hook_name \"") + *hook_name + "\" in " + place.file;
    return {};
  }
  if (config.contains("hook_name")) {
    auto hook_name = JsonStringField(config, place, "hook_name");
    if (!hook_name) return std::unexpected(hook_name.error());
    sae->site = *hook_name;
    sae->site_source = std::string("hook_name \"") + *hook_name + "\" in " + place.file;
    return {};
  }
  return std::unexpected(
      place.file +
      ": no metadata.hook_name (nor hook_name): the site the SAE was trained on is unknown");
}

// `architecture`, and for topk its `k` and `rescale_acts_by_decoder_norm`.
std::expected<void, std::string> ReadArchitecture(const nlohmann::json& config,
                                                  const JsonPlace& place, SaeModel* sae,
                                                  bool* rescale_by_decoder_norm) {
  auto architecture = JsonStringField(config, place, "architecture");
  if (!architecture) return std::unexpected(architecture.error());
  *rescale_by_decoder_norm = false;
  if (*architecture == "standard") {
    sae->activation = SaeActivation::kRelu;
  } else if (*architecture == "jumprelu") {
    sae->activation = SaeActivation::kJumpRelu;
  } else if (*architecture == "topk") {
    sae->activation = SaeActivation::kTopK;
    auto k = JsonIntField(config, place, "k", 1);
    if (!k) return std::unexpected(k.error());
    sae->k = *k;
    if (config.contains("rescale_acts_by_decoder_norm")) {
      auto rescale = JsonBoolField(config, place, "rescale_acts_by_decoder_norm");
      if (!rescale) return std::unexpected(rescale.error());
      *rescale_by_decoder_norm = *rescale;
    }
  } else {
    return std::unexpected(place.file + ": architecture \"" + *architecture +
                           "\" is not implemented (actex encodes standard, jumprelu and topk)");
  }
  return {};
}

// `normalize_activations` and `reshape_activations`: only what needs nothing at run time.
std::expected<void, std::string> CheckInputProcessing(const nlohmann::json& config,
                                                      const JsonPlace& place) {
  if (config.contains("normalize_activations")) {
    auto normalize = JsonStringField(config, place, "normalize_activations");
    if (!normalize) return std::unexpected(normalize.error());
    if (*normalize != "none") {
      return std::unexpected(
          place.file + ": normalize_activations \"" + *normalize +
          "\" is not implemented (only \"none\"; fold a scaling factor or whitening into the "
          "weights with SAELens's fold_activation_norm_scaling_factor or fold_activation_whitening "
          "and save again)");
    }
  }
  if (config.contains("reshape_activations")) {
    auto reshape = JsonStringField(config, place, "reshape_activations");
    if (!reshape) return std::unexpected(reshape.error());
    // "hook_z" flattens [heads, d_head] head-major: actex's z site is already that row.
    if (*reshape != "none" && *reshape != "hook_z") {
      return std::unexpected(place.file + ": reshape_activations \"" + *reshape +
                             "\" is not implemented (only \"none\" and \"hook_z\")");
    }
  }
  return {};
}

// Each latent's decoder row norm ||W_dec[i, :]||, the factor SAELens's TopKSAE.encode
// multiplies the pre-activations by when rescale_acts_by_decoder_norm is set.
std::vector<float> DecoderRowNorms(const std::vector<float>& decoder, int64_t d_sae, int64_t d_in) {
  std::vector<float> norms(static_cast<size_t>(d_sae));
  for (int64_t latent = 0; latent < d_sae; ++latent) {
    double sum = 0;
    for (int64_t i = 0; i < d_in; ++i) {
      const double value = decoder[latent * d_in + i];
      sum += value * value;
    }
    norms[latent] = static_cast<float>(std::sqrt(sum));
  }
  return norms;
}

}  // namespace

std::expected<SaeModel, std::string> ReadSaeLensFolder(const std::string& dir) {
  const std::string config_path = dir + "/" + kSaeLensConfigFile;
  auto config = ReadSaeConfig(config_path);
  if (!config) return std::unexpected(config.error());
  const JsonPlace place{config_path, ""};
  SaeModel sae;
  sae.dir = dir;
  sae.format = SaeFormat::kSaeLens;
  bool rescale_by_decoder_norm = false;
  if (auto read = ReadArchitecture(*config, place, &sae, &rescale_by_decoder_norm); !read) {
    return std::unexpected(read.error());
  }
  if (auto checked = CheckInputProcessing(*config, place); !checked) {
    return std::unexpected(checked.error());
  }
  auto d_in = JsonIntField(*config, place, "d_in", 1);
  if (!d_in) return std::unexpected(d_in.error());
  auto d_sae = JsonIntField(*config, place, "d_sae", 1);
  if (!d_sae) return std::unexpected(d_sae.error());
  sae.d_in = *d_in;
  sae.d_sae = *d_sae;
  if (config->contains("apply_b_dec_to_input")) {
    auto apply = JsonBoolField(*config, place, "apply_b_dec_to_input");
    if (!apply) return std::unexpected(apply.error());
    sae.subtract_decoder_bias = *apply;
  }
  if (auto read = ReadHookName(*config, place, &sae); !read) return std::unexpected(read.error());

  auto weights = SafetensorsFile::Open(dir + "/" + kSaeLensWeightsFile);
  if (!weights) return std::unexpected(weights.error());
  const SafetensorsFile& file = **weights;
  if (auto read = ReadSaeEncoderTensors(file, {"W_enc", true, "b_enc", "b_dec"}, &sae); !read) {
    return std::unexpected(read.error());
  }
  if (sae.activation == SaeActivation::kJumpRelu) {
    auto threshold = ReadSaeTensor(file, "threshold", {sae.d_sae});
    if (!threshold) return std::unexpected(threshold.error());
    sae.threshold = std::move(*threshold);
  }
  if (rescale_by_decoder_norm) {
    auto decoder = ReadSaeTensor(file, "W_dec", {sae.d_sae, sae.d_in});
    if (!decoder) return std::unexpected(decoder.error());
    sae.latent_scale = DecoderRowNorms(*decoder, sae.d_sae, sae.d_in);
  }
  return sae;
}

}  // namespace actex
