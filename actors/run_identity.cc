#include "actors/run_identity.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "base/absolute_path.h"
#include "storage/sae_record.h"

namespace actex {
namespace {

constexpr const char* kResumeHint = "; run the same command to resume it, or give --overwrite";

std::string Recorded(const nlohmann::json& config, const char* key) {
  auto it = config.find(key);
  return it != config.end() && it->is_string() ? it->get<std::string>() : "";
}

// Two spellings of one path, or two paths to one file or folder.
bool SamePlace(const std::string& before, const std::string& now) {
  if (AbsolutePath(before) == AbsolutePath(now)) return true;
  std::error_code error;
  return std::filesystem::equivalent(before, now, error) && !error;
}

std::expected<void, std::string> CheckSameModel(const std::string& dir,
                                                const nlohmann::json& earlier,
                                                const nlohmann::json& now) {
  const std::string folder_before = AbsolutePath(Recorded(earlier, "model_dir"));
  const std::string folder_now = AbsolutePath(Recorded(now, "model_dir"));
  const bool same_folder = SamePlace(folder_before, folder_now);
  const auto files_before = earlier.find("model_fingerprint");
  if (files_before == earlier.end()) {
    // Written before the files were recorded: the folder is all there is to compare.
    if (same_folder) return {};
    return std::unexpected("--model: " + dir + " was written with the model in " + folder_before +
                           ", this run gives " + folder_now + ", another folder" + kResumeHint);
  }
  const nlohmann::json files_now = now.value("model_fingerprint", nlohmann::json());
  if (*files_before == files_now) {
    if (!same_folder) {
      spdlog::info("{}: the model moved from {} to {}; its files are the same, so the run resumes",
                   dir, folder_before, folder_now);
    }
    return {};
  }
  if (same_folder) {
    return std::unexpected("--model: the files in " + folder_now + " changed since " + dir +
                           " was written (config.json, the weights' headers or the tokenizer "
                           "differ); restore them to resume, or give --overwrite");
  }
  return std::unexpected("--model: " + dir + " was written with the model in " + folder_before +
                         ", this run gives " + folder_now + ", whose files differ" + kResumeHint);
}

std::string ListText(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text.empty() ? "nothing" : text;
}

std::vector<std::string> Inputs(const nlohmann::json& config) {
  std::vector<std::string> inputs;
  auto data = config.find("data");
  if (data == config.end() || !data->is_array()) return inputs;
  for (const auto& input : *data) {
    inputs.push_back(input.is_string() ? AbsolutePath(input.get<std::string>()) : input.dump());
  }
  return inputs;
}

std::expected<void, std::string> CheckSameCorpus(const std::string& dir,
                                                 const nlohmann::json& earlier,
                                                 const nlohmann::json& now) {
  const std::vector<std::string> before = Inputs(earlier), inputs = Inputs(now);
  std::vector<std::string> differ;
  for (size_t i = 0; i < std::max(before.size(), inputs.size()); ++i) {
    if (i >= before.size()) {
      differ.push_back(inputs[i] + " (not read then)");
    } else if (i >= inputs.size()) {
      differ.push_back(before[i] + " (not given now)");
    } else if (!SamePlace(before[i], inputs[i])) {
      differ.push_back(before[i] + " (now " + inputs[i] + ")");
    }
  }
  if (!differ.empty()) {
    return std::unexpected("--data: " + dir + " was written from " + ListText(before) +
                           ", this run reads " + ListText(inputs) +
                           "; what differs: " + ListText(differ) + kResumeHint);
  }
  const nlohmann::json size_before = earlier.value("corpus_size", nlohmann::json());
  const nlohmann::json size_now = now.value("corpus_size", nlohmann::json());
  if (size_before != size_now) {
    return std::unexpected("--data: the corpus files " + ListText(inputs) + " changed since " +
                           dir + " was written: they held " + size_before.dump() + ", now " +
                           size_now.dump() + "; restore them to resume, or give --overwrite");
  }
  return {};
}

// The SAEs as their files: the same sites, K and digests, wherever the folders now are.
std::expected<void, std::string> CheckSameSaes(const std::string& dir,
                                               const nlohmann::json& earlier,
                                               const nlohmann::json& now) {
  const JsonPlace place{dir, "config"};
  auto before = ReadSaeRecords(earlier, place);
  if (!before) return std::unexpected("--sae: " + before.error());
  auto after = ReadSaeRecords(now, place);
  if (!after) return std::unexpected("--sae: " + after.error());
  auto described = [](std::vector<SaeRecord> records) {
    std::string text;
    for (SaeRecord& record : records) {
      record.dir.clear();
      text += (text.empty() ? "" : "; ") + DescribeSaeRecord(record);
    }
    return text.empty() ? std::string("no SAE") : text;
  };
  if (described(*before) == described(*after)) return {};
  return std::unexpected("--sae: " + dir + " was written with " + described(*before) +
                         ", this run has " + described(*after) + kResumeHint);
}

}  // namespace

bool IsInputKey(const std::string& key) {
  return key == "model_dir" || key == "model_fingerprint" || key == "data" ||
         key == "corpus_size" || key == "sae" || key == kSaesConfigKey;
}

std::expected<void, std::string> CheckSameInputs(const std::string& dir,
                                                 const nlohmann::json& earlier,
                                                 const nlohmann::json& now) {
  if (auto model = CheckSameModel(dir, earlier, now); !model) return model;
  if (auto saes = CheckSameSaes(dir, earlier, now); !saes) return saes;
  return CheckSameCorpus(dir, earlier, now);
}

}  // namespace actex
