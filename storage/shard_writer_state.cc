#include "storage/shard_writer_state.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <span>
#include <utility>

#include "storage/crc32.h"
#include "storage/safetensors.h"
#include "storage/shard_file_sink.h"

namespace actex {
namespace {

const char* SafetensorsDtype(OutputDtype dtype) {
  switch (dtype) {
    case OutputDtype::kF16:
      return "F16";
    case OutputDtype::kBF16:
      return "BF16";
    case OutputDtype::kF32:
      break;
  }
  return "F32";
}

const char* MetadataDtype(OutputDtype dtype) {
  switch (dtype) {
    case OutputDtype::kF16:
      return "float16";
    case OutputDtype::kBF16:
      return "bfloat16";
    case OutputDtype::kF32:
      break;
  }
  return "float32";
}

std::string ShardFileName(int number, bool gzip) {
  char name[64];
  std::snprintf(name, sizeof(name), "shard_%06d.safetensors%s", number, gzip ? ".gz" : "");
  return name;
}

// Writes the closed shard `spill` as `path`, `header` first: in place, or else through
// a sink into path.tmp (gzip, or no O_TMPFILE), fsynced and renamed over `path`.
std::expected<ShardSpill::Sealed, std::string> SealShard(ShardSpill& spill, const std::string& path,
                                                         const std::string& header, bool gzip,
                                                         WriteBudget* budget,
                                                         std::span<uint8_t> scratch) {
  if (spill.in_place()) return spill.SealInPlace(path, header, scratch);
  const std::string tmp_path = AtomicWriteTempPath(path);
  auto copied = [&]() -> std::expected<ShardSpill::Sealed, std::string> {
    auto sink = ShardFileSink::Create(tmp_path, gzip, budget);
    if (!sink) return std::unexpected(sink.error());
    if (auto ok = (*sink)->Write(header.data(), header.size()); !ok) {
      return std::unexpected(ok.error());
    }
    if (auto ok = spill.CopyTo(**sink, scratch); !ok) return std::unexpected(ok.error());
    if (auto ok = (*sink)->Finish(); !ok) return std::unexpected(ok.error());
    if (auto ok = CommitRename(tmp_path, path); !ok) return std::unexpected(ok.error());
    return ShardSpill::Sealed{(*sink)->crc32(), (*sink)->bytes_written()};
  }();
  if (!copied) ::unlink(tmp_path.c_str());
  return copied;
}

// A shard's metadata.json entry with what its seal wrote.
nlohmann::ordered_json WithSeal(nlohmann::ordered_json entry, const ShardSpill::Sealed& sealed) {
  entry["bytes"] = sealed.bytes;
  entry["crc32"] = FormatCrc32(sealed.crc32);
  spdlog::debug("wrote {}: {} docs, {} tokens, {} bytes", entry["file"].get<std::string>(),
                entry["docs"].get<int64_t>(), entry["tokens"].get<int64_t>(), sealed.bytes);
  return entry;
}

}  // namespace

std::expected<void, std::string> ShardWriterState::WriteMetadata(bool complete) {
  return WriteFileAtomically(
      PathOf(kMetadataFile),
      listing->MetadataText(complete, options.run_config, MetadataDtype(options.dtype)), &budget);
}

std::vector<TensorToWrite> ShardWriterState::ShardLayout(int64_t tokens) const {
  std::vector<TensorToWrite> layout;
  for (const StoredSite& site : options.sites) {
    if (site.statistics_only) continue;  // its spill is empty
    layout.push_back(
        {site.name, site.Dtype(SafetensorsDtype(options.dtype)), {tokens, site.width}, nullptr});
  }
  layout.push_back({"token_ids", "I32", {tokens}, nullptr});
  layout.push_back({"doc_ids", "I64", {tokens}, nullptr});
  layout.push_back({"positions", "I32", {tokens}, nullptr});
  return layout;
}

std::map<std::string, std::string> ShardWriterState::ShardMetadata() const {
  std::map<std::string, std::string> metadata = options.tensor_metadata;
  metadata["format"] = "pt";
  return metadata;
}

std::expected<void, std::string> ShardWriterState::OpenShard() {
  const size_t tensors = options.sites.size() + std::size(kIdTensors);
  // Room for the longest header a shard can have (every number in it is widest at the
  // most tokens): a plain shard's first tensor is written in place after it, and a
  // gzip shard's header is as long, so that it decompresses to the plain shard.
  auto widest = EncodeSafetensorsHeader(ShardLayout(kMostShardTokens), ShardMetadata());
  if (!widest) return std::unexpected(options.dir + ": " + widest.error());
  header_room = std::ssize(*widest);
  std::expected<ShardSpill, std::string> opened;
  if (options.gzip) {
    opened = ShardSpill::Create(options.dir, ++shard_number, tensors, &budget);
  } else {
    const auto first_stored = std::ranges::find_if(
        options.sites, [](const StoredSite& site) { return !site.statistics_only; });
    opened = ShardSpill::CreateInPlace(options.dir, ++shard_number, tensors,
                                       static_cast<size_t>(first_stored - options.sites.begin()),
                                       header_room, &budget);
  }
  if (!opened) return std::unexpected(opened.error());
  spill.emplace(std::move(*opened));
  shard_docs = shard_tokens = 0;
  return {};
}

std::expected<void, std::string> ShardWriterState::CloseShard() {
  auto header = EncodeSafetensorsHeader(ShardLayout(shard_tokens), ShardMetadata(),
                                        static_cast<size_t>(header_room));
  if (!header) return std::unexpected(options.dir + ": " + header.error());
  const std::string name = ShardFileName(shard_number, options.gzip);
  const std::string path = PathOf(name);
  std::optional<ShardSpill::Sealed> written;  // sealed here (else in the background)
  if (!SealsInBackground()) {
    auto sealed_here = SealShard(*spill, path, *header, options.gzip, &budget, scratch);
    if (!sealed_here) return std::unexpected(sealed_here.error());
    written = *sealed_here;
    spill.reset();  // closing the descriptors frees the unlinked spill files
  }
  nlohmann::ordered_json entry = {
      {"file", name},       {"first_doc_id", first_doc_id}, {"last_doc_id", last_doc_id},
      {"docs", shard_docs}, {"tokens", shard_tokens},       {"bytes", 0},
      {"crc32", ""},        {"chunks", ended_chunks}};
  if (!examples.empty()) {
    const std::string examples_name = ExamplesFileName(name);
    auto saved = examples.Save(PathOf(examples_name), examples_name, &budget);
    if (!saved) return std::unexpected(saved.error());
    entry["examples"] = {{"file", saved->file}, {"bytes", saved->bytes}, {"crc32", saved->crc32}};
  }
  if (written) {
    sealed.push_back({WithSeal(std::move(entry), *written), open_statistics});
  } else {
    // One seal at a time: the one before this must be done (at most two shards'
    // spills on disk, the one sealing and the one filling).
    if (auto collected = CollectSealing(/*wait=*/true); !collected) return collected;
    sealing = std::make_unique<Sealing>(Sealing{.spill = std::move(*spill),
                                                .path = path,
                                                .header = std::move(*header),
                                                .entry = std::move(entry),
                                                .statistics = open_statistics});
    spill.reset();
    Sealing* job = sealing.get();
    auto seal = [job, gzip = options.gzip] {
      job->result = SealShard(job->spill, job->path, job->header, gzip, nullptr, job->scratch);
    };
    sealing_run.emplace(seal_thread.Start(seal));
    if (!sealing_run->started()) seal();  // no thread to be had: seal it here
  }
  ended_chunks = nlohmann::ordered_json::array();
  for (size_t i = 0; i < open_statistics.size(); ++i) {
    open_statistics[i] = SiteStatistics(options.sites[i].width);
  }
  return ListSealedWhenDue();
}

std::expected<void, std::string> ShardWriterState::CollectSealing(bool wait) {
  if (!sealing || (!wait && !sealing_run->Done())) return {};
  sealing_run.reset();  // waits for the seal
  const std::unique_ptr<Sealing> done = std::move(sealing);
  if (!done->result) return std::unexpected(done->result.error());
  sealed.push_back({WithSeal(std::move(done->entry), *done->result), std::move(done->statistics)});
  return {};
}

std::expected<void, std::string> ShardWriterState::ListSealed(
    const nlohmann::ordered_json& without_documents) {
  nlohmann::ordered_json chunks = nlohmann::ordered_json::array();
  for (const Sealed& shard : sealed) {
    for (const auto& chunk : shard.entry["chunks"]) chunks.push_back(chunk);
  }
  for (const auto& chunk : without_documents) chunks.push_back(chunk);
  if (chunks.empty()) return {};
  if (auto allowed = AllowListing(chunks); !allowed) return allowed;
  for (Sealed& shard : sealed) listing->List(std::move(shard.entry), shard.statistics);
  sealed.clear();
  if (!without_documents.empty()) listing->ListWithoutDocuments(without_documents);
  last_listing = std::chrono::steady_clock::now();
  return WriteMetadata(/*complete=*/false);
}

std::expected<void, std::string> ShardWriterState::ListSealedWhenDue() {
  if (auto collected = CollectSealing(/*wait=*/false); !collected) return collected;
  if (sealed.empty() ||
      std::chrono::steady_clock::now() - last_listing < options.listing_interval) {
    return {};
  }
  return ListSealed(nlohmann::ordered_json::array());
}

std::expected<void, std::string> ShardWriterState::AllowListing(
    const nlohmann::ordered_json& chunks) {
  if (!options.before_listing) return {};
  std::vector<int64_t> numbers;
  for (const auto& chunk : chunks) numbers.push_back(chunk[0].get<int64_t>());
  return options.before_listing(numbers);
}

std::expected<void, std::string> ShardWriterState::ListEnded() {
  if (spill && shard_docs > 0) {
    if (auto closed = CloseShard(); !closed) return closed;
  }
  spill.reset();
  if (auto collected = CollectSealing(/*wait=*/true); !collected) return collected;
  // What is left ended in no shard: chunks without documents.
  return ListSealed(std::exchange(ended_chunks, nlohmann::ordered_json::array()));
}

std::expected<void, std::string> ShardWriterState::CutBackOpenChunk() {
  if (spill) {
    if (auto cut = spill->CutBackTo(boundary.spill_mark); !cut) return cut;
  }
  shard_docs = boundary.docs;
  shard_tokens = boundary.tokens;
  last_doc_id = boundary.last_doc_id;
  for (size_t i = 0; i < chunk_statistics.size(); ++i) {
    chunk_statistics[i] = SiteStatistics(options.sites[i].width);
  }
  examples.DropChunk();
  open_chunk = -1;
  return {};
}

}  // namespace actex
