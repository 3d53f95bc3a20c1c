#include "storage/chunk_digest.h"

#include <sodium.h>

#include <algorithm>
#include <cstring>

namespace actex {

namespace {

constexpr size_t kDigestBytes = 16;
constexpr int kChunksNamed = 3;

// What a record gave the model, as the digest tells it.
enum class RecordKind : uint8_t { kRejected = 0, kText = 1, kTokenIds = 2 };

// Where a chunk's records lie: runs of lines (or rows) per file, in reading order.
class RecordPlaces {
 public:
  void Clear() { runs_.clear(); }
  void Add(const std::string& file, int64_t line) {
    if (!runs_.empty() && runs_.back().file == file && runs_.back().last + 1 == line) {
      runs_.back().last = line;
      return;
    }
    runs_.push_back({file, line, line});
  }
  // "lines 65-128 of a.jsonl and lines 1-3 of b.jsonl"
  std::string Describe() const {
    std::string text;
    for (const Run& run : runs_) {
      if (!text.empty()) text += " and ";
      text += run.first == run.last ? "line " + std::to_string(run.first)
                                    : "lines " + std::to_string(run.first) + "-" +
                                          std::to_string(run.last);
      text += " of " + run.file;
    }
    return text;
  }

 private:
  struct Run {
    std::string file;
    int64_t first = 0, last = 0;
  };
  std::vector<Run> runs_;
};

}  // namespace

struct ChunkDigest::State {
  crypto_generichash_state hash;
};

ChunkDigest::ChunkDigest() : state_(std::make_unique<State>()) {
  // Picks libsodium's fastest BLAKE2b for this CPU; idempotent and thread-safe. On
  // failure (-1) the portable one stays, which digests the same.
  [[maybe_unused]] const int started = sodium_init();
  Reset();
}
ChunkDigest::~ChunkDigest() = default;
ChunkDigest::ChunkDigest(ChunkDigest&&) noexcept = default;
ChunkDigest& ChunkDigest::operator=(ChunkDigest&&) noexcept = default;

void ChunkDigest::Reset() {
  crypto_generichash_init(&state_->hash, nullptr, 0, kDigestBytes);
}

void ChunkDigest::Add(const CorpusRecord& record) {
  auto update = [this](const void* bytes, size_t size) {
    crypto_generichash_update(&state_->hash, static_cast<const unsigned char*>(bytes), size);
  };
  // Fixed-width little-endian fields (x86-64 and AArch64 alike), then the content,
  // its length first so that no two record sequences hash the same bytes.
  const int64_t doc_id = record.doc_id;
  update(&doc_id, sizeof doc_id);
  RecordKind kind = RecordKind::kText;
  if (!record.reject_reason.empty()) {
    kind = RecordKind::kRejected;
  } else if (record.pretokenized) {
    kind = RecordKind::kTokenIds;
  }
  update(&kind, sizeof kind);
  if (kind == RecordKind::kRejected) return;
  const void* content = record.text.data();
  uint64_t size = record.text.size();
  if (kind == RecordKind::kTokenIds) {
    content = record.input_ids.data();
    size = record.input_ids.size() * sizeof(int32_t);
  }
  update(&size, sizeof size);
  update(content, size);
}

std::string ChunkDigest::Hex() const {
  crypto_generichash_state copy;
  std::memcpy(&copy, &state_->hash, sizeof copy);
  unsigned char digest[kDigestBytes];
  crypto_generichash_final(&copy, digest, sizeof digest);
  char hex[2 * kDigestBytes + 1];
  sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
  return hex;
}

std::expected<std::vector<ChangedChunk>, std::string> FindChangedChunks(
    CorpusOptions options, ChunkRule chunks, const std::map<int64_t, std::string>& listed) {
  std::vector<ChangedChunk> changed;
  if (listed.empty()) return changed;
  const int64_t last_chunk = listed.rbegin()->first;
  // A Parquet row group none of whose chunks is listed need not be decoded.
  options.wants_docs = [&listed, chunks](int64_t first_doc_id, int64_t last_doc_id) {
    auto chunk = listed.lower_bound(chunks.ChunkOf(first_doc_id));
    return chunk != listed.end() && chunk->first <= chunks.ChunkOf(last_doc_id);
  };
  auto reader = CorpusReader::Open(options);
  if (!reader) return std::unexpected(reader.error());
  ChunkDigest digest;
  RecordPlaces places;
  auto current = listed.end();  // the listed chunk being read
  std::map<int64_t, std::string> unread = listed;
  auto compare = [&] {
    if (current == listed.end()) return;
    const std::string now = digest.Hex();
    if (now != current->second) changed.push_back({current->first, current->second, now, places.Describe()});
    current = listed.end();
  };
  while (true) {
    auto record = (*reader)->Next();
    if (!record) return std::unexpected(record.error());
    if (!*record) break;
    const int64_t chunk = chunks.ChunkOf((*record)->doc_id);
    if (chunk > last_chunk) break;
    if (current == listed.end() || current->first != chunk) {
      compare();
      current = listed.find(chunk);
      if (current == listed.end()) continue;
      unread.erase(chunk);
      digest.Reset();
      places.Clear();
    }
    digest.Add(**record);
    places.Add((*record)->file, (*record)->line);
  }
  compare();
  for (const auto& [chunk, listed_digest] : unread) {
    changed.push_back({chunk, listed_digest, "", "past the corpus's end"});
  }
  std::ranges::sort(changed, {}, &ChangedChunk::chunk);
  return changed;
}

std::string DescribeChangedChunks(const std::string& folder,
                                  const std::vector<ChangedChunk>& changed) {
  std::string text = folder + " was written from another corpus than the one read now: ";
  for (size_t i = 0; i < changed.size() && i < kChunksNamed; ++i) {
    if (i > 0) text += "; ";
    text += "chunk " + std::to_string(changed[i].chunk) + " (" + changed[i].where + ") " +
            (changed[i].now.empty() ? "is gone" : "reads differently now");
  }
  if (changed.size() > kChunksNamed) {
    text += "; and " + std::to_string(changed.size() - kChunksNamed) + " more chunk(s)";
  }
  return text + " (the files were edited, reordered or replaced since)";
}

}  // namespace actex
