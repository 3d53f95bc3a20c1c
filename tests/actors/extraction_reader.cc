#include "extraction_reader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "storage/chunk_rule.h"
#include "storage/safetensors.h"
#include "storage/shard_listing.h"

namespace actex {
namespace {

template <typename T>
std::vector<T> Values(const SafetensorsTensor& tensor) {
  std::vector<T> values(tensor.bytes.size() / sizeof(T));
  std::memcpy(values.data(), tensor.bytes.data(), tensor.bytes.size());
  return values;
}

}  // namespace

std::map<int64_t, DocumentRows> ReadHostFolder(const std::string& host_dir) {
  std::map<int64_t, DocumentRows> documents;
  std::ifstream file(host_dir + "/metadata.json");
  auto metadata = nlohmann::json::parse(file, nullptr, false);
  if (metadata.is_discarded()) {
    ADD_FAILURE() << host_dir << "/metadata.json is missing or invalid";
    return documents;
  }
  for (const auto& listed : metadata["shards"]) {
    auto shard = SafetensorsFile::Open(host_dir + "/" + listed["file"].get<std::string>());
    if (!shard) {
      ADD_FAILURE() << shard.error();
      continue;
    }
    const auto& tensors = (*shard)->tensors();
    auto doc_ids = Values<int64_t>(tensors.at("doc_ids"));
    auto token_ids = Values<int32_t>(tensors.at("token_ids"));
    auto positions = Values<int32_t>(tensors.at("positions"));
    for (const auto& [name, tensor] : tensors) {
      if (name == "doc_ids" || name == "token_ids" || name == "positions") continue;
      const size_t width = tensor.shape.at(1);
      if (tensor.dtype == "I32") {  // an integer site: expert ids
        auto values = Values<int32_t>(tensor);
        for (size_t row = 0; row < doc_ids.size(); ++row) {
          auto& rows = documents[doc_ids[row]].integer_sites[name];
          rows.insert(rows.end(), values.begin() + row * width, values.begin() + (row + 1) * width);
        }
        continue;
      }
      EXPECT_EQ(tensor.dtype, "F32") << name;
      auto values = Values<float>(tensor);
      for (size_t row = 0; row < doc_ids.size(); ++row) {
        auto& rows = documents[doc_ids[row]].sites[name];
        rows.insert(rows.end(), values.begin() + row * width, values.begin() + (row + 1) * width);
      }
    }
    for (size_t row = 0; row < doc_ids.size(); ++row) {
      documents[doc_ids[row]].token_ids.push_back(token_ids[row]);
      documents[doc_ids[row]].positions.push_back(positions[row]);
    }
  }
  return documents;
}

std::map<int64_t, DocumentRows> ReadJob(const std::string& out) {
  std::map<int64_t, DocumentRows> documents;
  for (const auto& entry : std::filesystem::directory_iterator(out)) {
    if (!entry.is_directory()) continue;  // OUT/.host_NN.lock
    for (auto& [doc, rows] : ReadHostFolder(entry.path().string())) {
      EXPECT_FALSE(documents.contains(doc)) << "document " << doc << " written twice";
      documents[doc] = std::move(rows);
    }
  }
  return documents;
}

std::multiset<int64_t> RejectedIds(const std::string& out) {
  std::multiset<int64_t> rejected;
  for (const auto& entry : std::filesystem::directory_iterator(out)) {
    if (!entry.is_directory()) continue;
    std::ifstream metadata_file(entry.path() / "metadata.json");
    const auto metadata = nlohmann::json::parse(metadata_file, nullptr, false);
    auto listed = ListedChunks(metadata);
    if (!listed) {
      ADD_FAILURE() << entry.path() << ": " << listed.error();
      continue;
    }
    const nlohmann::json config = metadata.value("config", nlohmann::json());
    const ChunkRule chunks =
        ChunkRule::Of(config.is_object() ? config.value("chunk_docs", int64_t{1}) : 1)
            .value_or(ChunkRule());
    std::ifstream file(entry.path() / "rejects.jsonl");
    for (std::string line; std::getline(file, line);) {
      const int64_t doc_id = nlohmann::json::parse(line)["doc_id"].get<int64_t>();
      if (listed->contains(chunks.ChunkOf(doc_id))) rejected.insert(doc_id);
    }
  }
  return rejected;
}

std::string InputIdsLine(const std::vector<int32_t>& ids) {
  std::string line = "{\"input_ids\":[";
  for (size_t i = 0; i < ids.size(); ++i) line += (i ? "," : "") + std::to_string(ids[i]);
  return line + "]}\n";
}

std::vector<float> FixtureTensor(const std::string& file, const std::string& name) {
  auto fixture = SafetensorsFile::Open(file);
  if (!fixture) {
    ADD_FAILURE() << fixture.error();
    return {};
  }
  return Values<float>((*fixture)->tensors().at(name));
}

std::vector<int32_t> FixtureIds(const std::string& file, const std::string& name) {
  auto fixture = SafetensorsFile::Open(file);
  if (!fixture) {
    ADD_FAILURE() << fixture.error();
    return {};
  }
  return Values<int32_t>((*fixture)->tensors().at(name));
}

Deviation Compare(const std::vector<float>& actual, const std::vector<float>& reference) {
  Deviation deviation;
  EXPECT_EQ(actual.size(), reference.size());
  for (size_t i = 0; i < std::min(actual.size(), reference.size()); ++i) {
    deviation.max_abs_error =
        std::max(deviation.max_abs_error, std::fabs(double(actual[i]) - reference[i]));
    deviation.max_abs_reference =
        std::max(deviation.max_abs_reference, std::fabs(double(reference[i])));
  }
  return deviation;
}

}  // namespace actex
