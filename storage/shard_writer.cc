#include "storage/shard_writer.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <utility>

#include "storage/crc32.h"
#include "storage/file_io.h"
#include "storage/float_convert.h"
#include "storage/safetensors.h"
#include "storage/shard_file_sink.h"
#include "storage/shard_listing.h"
#include "storage/shard_spill.h"
#include "storage/site_statistics.h"

namespace actex {

namespace {

constexpr size_t kCopyChunkBytes = size_t{1} << 20;
constexpr const char* kMetadataFile = "metadata.json";
const char* const kIdTensors[] = {"token_ids", "doc_ids", "positions"};

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

}  // namespace

struct ShardWriter::State {
  ShardWriterOptions options;
  WriteBudget budget;
  std::optional<ShardSpill> spill;  // the open shard: sites in order, then kIdTensors
  std::vector<uint8_t> scratch;     // spill bytes on their way into a shard
  std::vector<uint16_t> converted;  // half-precision rows on their way into a spill
  // The open shard (when spill holds one): its ended chunks, then maybe an open one.
  int shard_number = 0;
  int64_t shard_docs = 0, shard_tokens = 0;
  int64_t first_doc_id = 0, last_doc_id = -1;
  std::vector<SiteStatistics> open_statistics;  // per site, over the shard's ended chunks
  nlohmann::ordered_json ended_chunks = nlohmann::ordered_json::array();  // [chunk, documents]
  // The chunk whose documents are coming (-1: none), and the shard as it was before
  // its first document, to cut back to if it never ends.
  int64_t open_chunk = -1;
  struct Boundary {
    std::vector<int64_t> spill_mark;
    int64_t docs = 0, tokens = 0, last_doc_id = -1;
  } boundary;
  std::vector<SiteStatistics> chunk_statistics;  // per site, over the open chunk
  std::set<int64_t> chunks_seen;                 // listed, ended or open
  std::optional<ShardListing> listing;
  // Shard files closed (written, fsynced, renamed) but not yet listed: listed
  // together once options.listing_interval passed since the last listing.
  struct Sealed {
    nlohmann::ordered_json entry;            // as metadata.json will list it
    std::vector<SiteStatistics> statistics;  // per site
  };
  std::vector<Sealed> sealed;
  std::chrono::steady_clock::time_point last_listing = std::chrono::steady_clock::now();
  bool finished = false;
  std::string failure;  // set by the first error; every later call reports it

  std::string PathOf(const std::string& name) const { return options.dir + "/" + name; }
  std::expected<void, std::string> WriteMetadata(bool complete);
  std::expected<void, std::string> OpenShard();
  std::expected<void, std::string> SpillRows(const DocumentActivations& document, size_t site);
  std::expected<void, std::string> CloseShard();
  std::expected<void, std::string> CutBackOpenChunk();
  // Asks options.before_listing about `chunks` ([chunk, documents] pairs).
  std::expected<void, std::string> AllowListing(const nlohmann::ordered_json& chunks);
  // Lists the sealed shards, and `without_documents` chunks, in one metadata.json.
  std::expected<void, std::string> ListSealed(const nlohmann::ordered_json& without_documents);
  // ListSealed once listing_interval passed since the last listing.
  std::expected<void, std::string> ListSealedWhenDue();
  // Closes the open shard (if it holds documents) and lists the chunks ended since.
  std::expected<void, std::string> ListEnded();
  std::expected<void, std::string> Fail(std::string message) {
    failure = std::move(message);
    return std::unexpected(failure);
  }
};

std::expected<void, std::string> ShardWriter::State::WriteMetadata(bool complete) {
  return WriteFileAtomically(
      PathOf(kMetadataFile),
      listing->MetadataText(complete, options.run_config, MetadataDtype(options.dtype)), &budget);
}

std::expected<void, std::string> ShardWriter::State::OpenShard() {
  auto opened = ShardSpill::Create(options.dir, ++shard_number,
                                   options.sites.size() + std::size(kIdTensors), &budget);
  if (!opened) return std::unexpected(opened.error());
  spill.emplace(std::move(*opened));
  shard_docs = shard_tokens = 0;
  return {};
}

std::expected<void, std::string> ShardWriter::State::SpillRows(const DocumentActivations& document,
                                                               size_t site) {
  const std::span<const float> values = document.sites[site];
  if (options.dtype == OutputDtype::kF32) {
    return spill->Append(site, values.data(), values.size_bytes());
  }
  // Convert through a fixed scratch buffer so a long document costs no extra memory.
  const size_t per_chunk = converted.size();
  uint16_t* out = converted.data();
  for (size_t begin = 0; begin < values.size(); begin += per_chunk) {
    const auto chunk = values.subspan(begin, std::min(per_chunk, values.size() - begin));
    if (options.dtype == OutputDtype::kBF16) {
      ConvertToBfloat16(chunk, out);
    } else {
      ConvertToHalf(chunk, out);
    }
    if (auto spilled = spill->Append(site, out, chunk.size() * sizeof(uint16_t)); !spilled) {
      return spilled;
    }
  }
  return {};
}

std::expected<void, std::string> ShardWriter::State::CloseShard() {
  std::vector<TensorToWrite> layout;
  for (const auto& [name, width] : options.sites) {
    layout.push_back({name, SafetensorsDtype(options.dtype), {shard_tokens, width}, nullptr});
  }
  layout.push_back({"token_ids", "I32", {shard_tokens}, nullptr});
  layout.push_back({"doc_ids", "I64", {shard_tokens}, nullptr});
  layout.push_back({"positions", "I32", {shard_tokens}, nullptr});
  std::map<std::string, std::string> tensor_metadata = options.tensor_metadata;
  tensor_metadata["format"] = "pt";
  auto header = EncodeSafetensorsHeader(layout, tensor_metadata);
  if (!header) return std::unexpected(options.dir + ": " + header.error());

  const std::string name = ShardFileName(shard_number, options.gzip);
  const std::string path = PathOf(name);
  const std::string tmp_path = path + ".tmp";
  auto written = [&]() -> std::expected<std::pair<uint32_t, int64_t>, std::string> {
    auto sink = ShardFileSink::Create(tmp_path, options.gzip, &budget);
    if (!sink) return std::unexpected(sink.error());
    if (auto ok = (*sink)->Write(header->data(), header->size()); !ok) {
      return std::unexpected(ok.error());
    }
    if (auto ok = spill->CopyTo(**sink, scratch); !ok) return std::unexpected(ok.error());
    if (auto ok = (*sink)->Finish(); !ok) return std::unexpected(ok.error());
    if (auto ok = CommitRename(tmp_path, path); !ok) return std::unexpected(ok.error());
    return std::make_pair((*sink)->crc32(), (*sink)->bytes_written());
  }();
  if (!written) {
    ::unlink(tmp_path.c_str());
    return std::unexpected(written.error());
  }
  spill.reset();  // closing the descriptors frees the unlinked spill files
  spdlog::debug("wrote {}: docs {}..{} ({} docs, {} tokens, {} bytes)", path, first_doc_id,
                last_doc_id, shard_docs, shard_tokens, written->second);
  sealed.push_back({{{"file", name},
                     {"first_doc_id", first_doc_id},
                     {"last_doc_id", last_doc_id},
                     {"docs", shard_docs},
                     {"tokens", shard_tokens},
                     {"bytes", written->second},
                     {"crc32", FormatCrc32(written->first)},
                     {"chunks", ended_chunks}},
                    open_statistics});
  ended_chunks = nlohmann::ordered_json::array();
  for (size_t i = 0; i < open_statistics.size(); ++i) {
    open_statistics[i] = SiteStatistics(options.sites[i].second);
  }
  return ListSealedWhenDue();
}

std::expected<void, std::string> ShardWriter::State::ListSealed(
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

std::expected<void, std::string> ShardWriter::State::ListSealedWhenDue() {
  if (sealed.empty() ||
      std::chrono::steady_clock::now() - last_listing < options.listing_interval) {
    return {};
  }
  return ListSealed(nlohmann::ordered_json::array());
}

std::expected<void, std::string> ShardWriter::State::AllowListing(
    const nlohmann::ordered_json& chunks) {
  if (!options.before_listing) return {};
  std::vector<int64_t> numbers;
  for (const auto& chunk : chunks) numbers.push_back(chunk[0].get<int64_t>());
  return options.before_listing(numbers);
}

std::expected<void, std::string> ShardWriter::State::ListEnded() {
  if (spill && shard_docs > 0) {
    if (auto closed = CloseShard(); !closed) return closed;
  }
  spill.reset();
  // What is left ended in no shard: chunks without documents.
  return ListSealed(std::exchange(ended_chunks, nlohmann::ordered_json::array()));
}

std::expected<void, std::string> ShardWriter::State::CutBackOpenChunk() {
  if (spill) {
    if (auto cut = spill->CutBackTo(boundary.spill_mark); !cut) return cut;
  }
  shard_docs = boundary.docs;
  shard_tokens = boundary.tokens;
  last_doc_id = boundary.last_doc_id;
  for (size_t i = 0; i < chunk_statistics.size(); ++i) {
    chunk_statistics[i] = SiteStatistics(options.sites[i].second);
  }
  open_chunk = -1;
  return {};
}

ShardWriter::ShardWriter() : state_(std::make_unique<State>()) {}
ShardWriter::~ShardWriter() = default;

std::expected<std::unique_ptr<ShardWriter>, std::string> ShardWriter::Open(
    ShardWriterOptions options) {
  if (options.dir.empty()) return std::unexpected(std::string("output directory is empty"));
  if (options.shard_bytes <= 0) {
    return std::unexpected("shard size must be positive, got " +
                           std::to_string(options.shard_bytes));
  }
  if (options.chunk_docs <= 0) {
    return std::unexpected("chunk size must be positive, got " +
                           std::to_string(options.chunk_docs));
  }
  if (options.sites.empty()) return std::unexpected(std::string("no activation site to write"));
  std::set<std::string> names(std::begin(kIdTensors), std::end(kIdTensors));
  names.insert(kSafetensorsMetadataKey);
  for (const auto& [name, width] : options.sites) {
    if (name.empty() || !names.insert(name).second) {
      return std::unexpected("site name \"" + name +
                             "\" is empty, repeated or reserved (token_ids, doc_ids, positions)");
    }
    if (width <= 0) {
      return std::unexpected("site \"" + name + "\" has width " + std::to_string(width));
    }
  }
  if (auto made = MakeDirectories(options.dir); !made) return std::unexpected(made.error());
  const std::string metadata_path = options.dir + "/" + kMetadataFile;
  const bool continues = !options.continue_from.is_null();
  if (std::error_code error; !continues && std::filesystem::exists(metadata_path, error)) {
    return std::unexpected(metadata_path +
                           " already exists: the directory holds an earlier run's shards; "
                           "choose another output directory or remove it");
  }
  std::unique_ptr<ShardWriter> writer(new ShardWriter());
  State& state = *writer->state_;
  state.options = std::move(options);
  state.budget.remaining = state.options.fail_after_bytes;
  state.scratch.resize(kCopyChunkBytes);
  state.converted.resize(kCopyChunkBytes / sizeof(uint16_t));
  for (const auto& site : state.options.sites) {
    state.open_statistics.emplace_back(site.second);
    state.chunk_statistics.emplace_back(site.second);
  }
  state.listing.emplace(state.options.sites);
  if (continues) {
    state.listing->ContinueFrom(state.options.continue_from);
    state.shard_number = static_cast<int>(state.listing->stats().shards);
    state.chunks_seen = state.listing->listed_chunks();
  }
  // Written now so an unwritable directory fails before any work, and so a run
  // that dies early still leaves a metadata.json saying it is incomplete.
  if (auto written = state.WriteMetadata(/*complete=*/false); !written) {
    return std::unexpected(written.error());
  }
  return writer;
}

std::expected<void, std::string> ShardWriter::Add(const DocumentActivations& document) {
  State& state = *state_;
  if (!state.failure.empty()) {
    return std::unexpected("shard writer stopped by an earlier error: " + state.failure);
  }
  if (state.finished) return std::unexpected(std::string("shard writer: Add after Finish"));
  const std::string doc = "document " + std::to_string(document.doc_id);
  const size_t tokens = document.token_ids.size();
  if (document.doc_id < 0) return std::unexpected(doc + ": a doc id is never negative");
  const int64_t chunk = document.doc_id / state.options.chunk_docs;
  if (state.open_chunk >= 0 && chunk != state.open_chunk) {
    return std::unexpected(doc + " belongs to chunk " + std::to_string(chunk) + ", but chunk " +
                           std::to_string(state.open_chunk) + " has not ended");
  }
  if (state.open_chunk < 0 && state.chunks_seen.contains(chunk)) {
    return std::unexpected(doc + ": its chunk " + std::to_string(chunk) +
                           " was listed or ended already");
  }
  if (state.open_chunk >= 0 && document.doc_id <= state.last_doc_id) {
    return std::unexpected(doc + ": doc ids must increase strictly; the previous one was " +
                           std::to_string(state.last_doc_id));
  }
  if (tokens == 0) {
    // It would be counted in "docs" yet appear in no tensor: the caller should
    // reject it instead.
    return std::unexpected(doc + ": has no tokens");
  }
  if (document.positions.size() != tokens) {
    return std::unexpected(doc + ": " + std::to_string(tokens) + " token ids but " +
                           std::to_string(document.positions.size()) + " positions");
  }
  if (document.sites.size() != state.options.sites.size()) {
    return std::unexpected(doc + ": " + std::to_string(document.sites.size()) +
                           " sites, the writer has " + std::to_string(state.options.sites.size()));
  }
  for (size_t i = 0; i < document.sites.size(); ++i) {
    const auto& [name, width] = state.options.sites[i];
    if (document.sites[i].size() != tokens * static_cast<size_t>(width)) {
      return std::unexpected(doc + ": site \"" + name + "\" has " +
                             std::to_string(document.sites[i].size()) + " values, expected " +
                             std::to_string(tokens) + " tokens x " + std::to_string(width));
    }
  }

  if (!state.spill) {
    if (auto opened = state.OpenShard(); !opened) return state.Fail(opened.error());
    state.first_doc_id = document.doc_id;
  }
  if (state.open_chunk < 0) {
    state.boundary = {state.spill->Mark(), state.shard_docs, state.shard_tokens, state.last_doc_id};
    state.open_chunk = chunk;
    state.chunks_seen.insert(chunk);
  }
  const size_t sites = document.sites.size();
  for (size_t i = 0; i < sites; ++i) {
    if (auto spilled = state.SpillRows(document, i); !spilled) {
      return state.Fail(spilled.error());
    }
    state.chunk_statistics[i].AddRows(document.sites[i].data(), static_cast<int64_t>(tokens));
  }
  const std::vector<int64_t> doc_ids(tokens, document.doc_id);
  const std::pair<const void*, size_t> id_bytes[] = {
      {document.token_ids.data(), document.token_ids.size_bytes()},
      {doc_ids.data(), doc_ids.size() * sizeof(int64_t)},
      {document.positions.data(), document.positions.size_bytes()}};
  for (size_t i = 0; i < std::size(id_bytes); ++i) {
    const auto [data, size] = id_bytes[i];
    if (auto spilled = state.spill->Append(sites + i, data, size); !spilled) {
      return state.Fail(spilled.error());
    }
  }
  state.last_doc_id = document.doc_id;
  ++state.shard_docs;
  state.shard_tokens += static_cast<int64_t>(tokens);
  return {};
}

std::expected<void, std::string> ShardWriter::EndChunk(int64_t chunk, int64_t documents) {
  State& state = *state_;
  if (!state.failure.empty()) {
    return std::unexpected("shard writer stopped by an earlier error: " + state.failure);
  }
  if (state.finished) return std::unexpected(std::string("shard writer: EndChunk after Finish"));
  const std::string what = "chunk " + std::to_string(chunk);
  if (state.open_chunk >= 0 && chunk != state.open_chunk) {
    return std::unexpected(what + " ended while chunk " + std::to_string(state.open_chunk) +
                           " is open");
  }
  if (state.open_chunk < 0 && (chunk < 0 || state.chunks_seen.contains(chunk))) {
    return std::unexpected(what + " was listed or ended already");
  }
  if (documents < 1 || documents > state.options.chunk_docs) {
    return std::unexpected(what + ": " + std::to_string(documents) +
                           " documents, not 1 to the chunk size " +
                           std::to_string(state.options.chunk_docs));
  }
  state.chunks_seen.insert(chunk);
  state.ended_chunks.push_back({chunk, documents});
  state.open_chunk = -1;
  for (size_t i = 0; i < state.chunk_statistics.size(); ++i) {
    state.open_statistics[i].Merge(state.chunk_statistics[i]);
    state.chunk_statistics[i] = SiteStatistics(state.options.sites[i].second);
  }
  if (state.spill && state.spill->bytes() >= state.options.shard_bytes) {
    if (auto closed = state.CloseShard(); !closed) return state.Fail(closed.error());
  } else if (auto listed = state.ListSealedWhenDue(); !listed) {
    return state.Fail(listed.error());
  }
  return {};
}

std::expected<void, std::string> ShardWriter::Finish(bool complete) {
  State& state = *state_;
  if (!state.failure.empty()) {
    return std::unexpected("shard writer stopped by an earlier error: " + state.failure);
  }
  if (state.finished) return {};
  // An input that ended normally ended every chunk; one still open is dropped all the
  // same, and the output is then not complete.
  const int64_t unended = state.open_chunk;
  if (unended >= 0) {
    if (auto cut = state.CutBackOpenChunk(); !cut) return state.Fail(cut.error());
  }
  if (auto listed = state.ListEnded(); !listed) return state.Fail(listed.error());
  if (auto written = state.WriteMetadata(complete && unended < 0); !written) {
    return state.Fail(written.error());
  }
  state.finished = true;
  if (complete && unended >= 0) {
    return std::unexpected("the input ended inside chunk " + std::to_string(unended) +
                           ", which was not listed");
  }
  return {};
}

std::expected<void, std::string> ShardWriter::ListEnded() {
  State& state = *state_;
  if (!state.failure.empty()) {
    return std::unexpected("shard writer stopped by an earlier error: " + state.failure);
  }
  if (state.finished) return std::unexpected(std::string("shard writer: ListEnded after Finish"));
  if (state.open_chunk >= 0) {
    return std::unexpected("chunk " + std::to_string(state.open_chunk) +
                           " is open: nothing is listed before it ends");
  }
  if (auto listed = state.ListEnded(); !listed) return state.Fail(listed.error());
  return {};
}

const std::set<int64_t>& ShardWriter::listed_chunks() const {
  return state_->listing->listed_chunks();
}

const ShardStats& ShardWriter::stats() const { return state_->listing->stats(); }

ListedShard ShardWriter::listed_shard(int64_t index) const {
  const auto& shard = state_->listing->shards().at(static_cast<size_t>(index));
  return {shard.value("file", ""), shard.value("bytes", int64_t{0}), shard.value("crc32", "")};
}

}  // namespace actex
