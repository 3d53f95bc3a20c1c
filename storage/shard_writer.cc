#include "storage/shard_writer.h"

#include <filesystem>
#include <set>
#include <utility>

#include "storage/float_convert.h"
#include "storage/safetensors.h"
#include "storage/shard_writer_state.h"

namespace actex {
namespace {

// Where values stop being finite once rounded to `dtype`, for the statistics' count.
float OverflowMagnitude(OutputDtype dtype) {
  switch (dtype) {
    case OutputDtype::kF16:
      return kHalfOverflowMagnitude;
    case OutputDtype::kBF16:
      return kBfloat16OverflowMagnitude;
    case OutputDtype::kF32:
      break;
  }
  return SiteStatistics::kNoOverflow;
}

// Values of a document (over its sites) from which its statistics, and its groups of
// sites to spill, run on threads of their own: a 256-token document of one 896-wide
// site takes 30-40 µs of statistics (AVX-512; 0.2-0.7 ms before they were vectorized).
// The writer keeps those threads (SideThread), so each costs a hand-over, not a
// thread's start (~20 µs).
constexpr size_t kBesideValues = 65536;

}  // namespace

ShardWriter::ShardWriter() : state_(std::make_unique<ShardWriterState>()) {}
ShardWriter::~ShardWriter() = default;

std::expected<std::unique_ptr<ShardWriter>, std::string> ShardWriter::Open(
    ShardWriterOptions options) {
  if (options.dir.empty()) return std::unexpected(std::string("output directory is empty"));
  if (options.shard_bytes <= 0) {
    return std::unexpected("shard size must be positive, got " +
                           std::to_string(options.shard_bytes));
  }
  if (options.sites.empty()) return std::unexpected(std::string("no activation site to write"));
  std::set<std::string> names(std::begin(kIdTensors), std::end(kIdTensors));
  names.insert(kSafetensorsMetadataKey);
  for (const auto& [name, width, integer, statistics_only] : options.sites) {
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
  ShardWriterState& state = *writer->state_;
  state.options = std::move(options);
  state.budget.remaining = state.options.fail_after_bytes;
  state.scratch.resize(kCopyChunkBytes);
  state.GroupSites();
  for (const StoredSite& site : state.options.sites) {
    state.open_statistics.emplace_back(site.width);
    state.chunk_statistics.emplace_back(site.width);
  }
  auto examples = ShardExamples::Create(state.options.sites, state.options.sae_latents,
                                        state.options.sae_examples, state.options.dtype);
  if (!examples) return std::unexpected(examples.error());
  state.examples = std::move(*examples);
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
  ShardWriterState& state = *state_;
  if (!state.failure.empty()) {
    return std::unexpected("shard writer stopped by an earlier error: " + state.failure);
  }
  if (state.finished) return std::unexpected(std::string("shard writer: Add after Finish"));
  const std::string doc = "document " + std::to_string(document.doc_id);
  const size_t tokens = document.token_ids.size();
  if (document.doc_id < 0) return std::unexpected(doc + ": a doc id is never negative");
  const int64_t chunk = state.options.chunks.ChunkOf(document.doc_id);
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
    const auto& [name, width, integer, statistics_only] = state.options.sites[i];
    const SiteRows& rows = document.sites[i];
    if (rows.size() != tokens * static_cast<size_t>(width)) {
      return std::unexpected(doc + ": site \"" + name + "\" has " + std::to_string(rows.size()) +
                             " values, expected " + std::to_string(tokens) + " tokens x " +
                             std::to_string(width));
    }
    if (rows.integer() != integer) {
      return std::unexpected(doc + ": site \"" + name + "\" came as " +
                             (rows.integer() ? "int32s" : "floats") + ", but it is " +
                             (integer ? "an integer site" : "a float site"));
    }
  }

  // A chunk can come after higher ones (a lost host's chunk leased again): it starts a
  // shard of its own, so that every shard's doc ids increase, as verify and readers expect.
  if (state.open_chunk < 0 && state.spill && state.shard_docs > 0 &&
      document.doc_id < state.last_doc_id) {
    if (auto closed = state.CloseShard(); !closed) return state.Fail(closed.error());
  }
  // Before anything is spilled: an id out of range refuses the document whole.
  if (auto added = state.examples.AddDocument(document); !added) {
    return std::unexpected(doc + ": " + added.error());
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
  // The statistics, on a thread of their own beside the rounding and spilling when the
  // document is large enough to pay for it: the same rows added in the same order, so
  // the same sums to the bit. Integer sites have none: their entry stays empty.
  const auto add_statistics = [&state, &document, tokens] {
    for (size_t i = 0; i < document.sites.size(); ++i) {
      if (state.options.sites[i].integer) continue;
      state.chunk_statistics[i].AddRows(document.sites[i].values.data(),
                                        static_cast<int64_t>(tokens),
                                        OverflowMagnitude(state.options.dtype));
    }
  };
  size_t values = 0;
  for (const SiteRows& rows : document.sites) values += rows.size();
  // On any return below, the Running's destructor waits for the statistics.
  const bool beside = values >= kBesideValues;
  SideThread::Running statistics =
      beside ? state.statistics_thread.Start(add_statistics) : SideThread::Running::NotStarted();
  if (!statistics.started()) add_statistics();
  if (auto spilled = state.SpillDocument(document, beside); !spilled) {
    return state.Fail(spilled.error());
  }
  statistics.Wait();
  state.last_doc_id = document.doc_id;
  ++state.shard_docs;
  state.shard_tokens += static_cast<int64_t>(tokens);
  return {};
}

std::expected<void, std::string> ShardWriter::EndChunk(int64_t chunk, int64_t documents,
                                                       const std::string& digest) {
  ShardWriterState& state = *state_;
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
  if (documents < 1 || documents > state.options.chunks.docs_per_chunk()) {
    return std::unexpected(what + ": " + std::to_string(documents) +
                           " documents, not 1 to the chunk size " +
                           std::to_string(state.options.chunks.docs_per_chunk()));
  }
  state.chunks_seen.insert(chunk);
  nlohmann::ordered_json entry = {chunk, documents};
  if (!digest.empty()) entry.push_back(digest);
  state.ended_chunks.push_back(std::move(entry));
  state.open_chunk = -1;
  for (size_t i = 0; i < state.chunk_statistics.size(); ++i) {
    state.open_statistics[i].Merge(state.chunk_statistics[i]);
    state.chunk_statistics[i] = SiteStatistics(state.options.sites[i].width);
  }
  state.examples.EndChunk();
  if (state.spill && state.spill->bytes() >= state.options.shard_bytes) {
    if (auto closed = state.CloseShard(); !closed) return state.Fail(closed.error());
  } else if (auto listed = state.ListSealedWhenDue(); !listed) {
    return state.Fail(listed.error());
  }
  return {};
}

std::expected<void, std::string> ShardWriter::Finish(bool complete) {
  ShardWriterState& state = *state_;
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
  ShardWriterState& state = *state_;
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

std::vector<ListedShard> ShardWriter::listed_files(int64_t index) const {
  // The writer listed the entry itself, so every field is there.
  const auto& entry = state_->listing->shards().at(static_cast<size_t>(index));
  return ListedFilesOf(nlohmann::json::parse(entry.dump()), {}).value();
}

}  // namespace actex
