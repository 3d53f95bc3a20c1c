#include "storage/activation_shuffle.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "base/machine_memory.h"
#include "base/whole_file.h"
#include "storage/bucket_files.h"
#include "storage/crc32.h"
#include "storage/destination_folder.h"
#include "storage/file_io.h"
#include "storage/safetensors.h"
#include "storage/shuffle_journal.h"
#include "storage/shuffle_rows.h"
#include "storage/shuffled_files.h"
#include "storage/shuffled_output.h"

namespace actex {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Numbered(const char* pattern, int64_t n) {
  char name[64];
  std::snprintf(name, sizeof(name), pattern, static_cast<long long>(n));
  return name;
}

class Shuffle {
 public:
  Shuffle(const ShuffleOptions& options, SourceOutput source, RecordLayout layout)
      : options_(options), source_(std::move(source)), layout_(std::move(layout)) {
    budget_.remaining = options.fail_after_bytes;
    work_ = (fs::path(options.out_dir) / ".shuffle_work").string();
    entry_bytes_ = layout_.record_bytes + 8;
  }

  std::expected<ShuffleResult, CommandError> Run();

 private:
  std::string Bucket(int b) const { return work_ + "/" + Numbered("bucket_%05lld.bin", b); }
  std::expected<void, CommandError> Start();
  std::expected<void, std::string> Scatter();
  std::expected<void, std::string> Permute();
  // Lists files the writer finished in metadata.json.
  std::expected<void, std::string> ListFinished(ShuffledFileWriter& files, int64_t rows_done);
  std::expected<void, std::string> SaveState() {
    return WriteFileAtomically(work_ + "/state.json", state_.dump(), &budget_);
  }
  std::expected<void, std::string> SaveMetadata() {
    return WriteFileAtomically(options_.out_dir + "/metadata.json", metadata_.dump(1), &budget_);
  }
  void Log(const std::string& line) const {
    if (options_.log) options_.log(line);
  }

  const ShuffleOptions& options_;
  SourceOutput source_;
  RecordLayout layout_;
  WriteBudget budget_;
  std::string work_;
  int64_t entry_bytes_;  // key + record
  json metadata_, state_;
  ShuffleResult result_;
  int64_t rows_ = 0;
  std::set<int64_t> listed_files_;  // by an earlier, stopped run
};

std::expected<void, CommandError> Shuffle::Start() {
  auto journal = OpenShuffleJournal(options_, source_, layout_, work_, entry_bytes_, &budget_);
  if (!journal) return std::unexpected(journal.error());
  metadata_ = std::move(journal->metadata);
  state_ = std::move(journal->state);
  result_.resumed = journal->resumed;
  listed_files_ = std::move(journal->listed_files);
  return {};
}

std::expected<void, std::string> Shuffle::Scatter() {
  if (state_["scatter_done"].get<size_t>() == source_.shards.size()) return {};
  const int buckets = state_["buckets"].get<int>();
  auto bucket_bytes = state_["bucket_bytes"].get<std::vector<int64_t>>();
  auto files = BucketFiles::Prepare([this](int b) { return Bucket(b); }, bucket_bytes);
  if (!files) return std::unexpected(files.error());
  const int64_t quarter = options_.memory_bytes / 4;
  const int64_t buffer_entries = std::max<int64_t>(
      1, std::min<int64_t>((int64_t{1} << 20) / entry_bytes_, quarter / buckets / entry_bytes_));
  std::vector<std::vector<uint8_t>> buffers(static_cast<size_t>(buckets));
  const int64_t chunk_rows = std::max<int64_t>(1, quarter / 2 / (layout_.record_bytes * 2));
  std::vector<uint8_t> records;
  const std::set<int32_t> skip(options_.skip_token_ids.begin(), options_.skip_token_ids.end());
  auto flush = [&](int b) -> std::expected<void, std::string> {
    auto wrote = files->Append(b, buffers[b].data(), buffers[b].size(), &budget_);
    bucket_bytes[b] += static_cast<int64_t>(buffers[b].size());
    buffers[b].clear();
    return wrote;
  };
  // A checkpoint (buckets synced, state saved) after the shard that brings the
  // bytes scattered since the last one to a quarter of --memory, and after the last:
  // a resume redoes at most that much.
  int64_t unsaved_bytes = 0, kept = 0, skipped = 0;
  int64_t row = 0;  // source row numbering
  for (size_t s = 0; s < source_.shards.size(); ++s) {
    const SourceShard& shard = source_.shards[s];
    if (static_cast<int64_t>(s) < state_["scatter_done"].get<int64_t>()) {
      row += shard.tokens;
      continue;
    }
    auto rows = SourceShardRows::Open(shard, source_, work_ + "/inflated.tmp");
    if (!rows) return std::unexpected(rows.error());
    for (int64_t begin = 0; begin < shard.tokens; begin += chunk_rows) {
      const int64_t count = std::min(chunk_rows, shard.tokens - begin);
      records.resize(static_cast<size_t>(count * layout_.record_bytes));
      if (auto read = (*rows)->Read(begin, count, layout_, records.data()); !read) return read;
      for (int64_t i = 0; i < count; ++i, ++row) {
        const uint8_t* record = records.data() + i * layout_.record_bytes;
        if (skip.count(layout_.token_id(record))) {
          ++skipped;
          continue;
        }
        ++kept;
        unsaved_bytes += entry_bytes_;
        const uint64_t key = ShuffleKey(options_.seed, row);
        const int b = static_cast<int>((static_cast<unsigned __int128>(key) * buckets) >> 64);
        auto& buffer = buffers[b];
        buffer.insert(buffer.end(), reinterpret_cast<const uint8_t*>(&key),
                      reinterpret_cast<const uint8_t*>(&key) + 8);
        buffer.insert(buffer.end(), record, record + layout_.record_bytes);
        if (static_cast<int64_t>(buffer.size()) >= buffer_entries * entry_bytes_) {
          if (auto flushed = flush(b); !flushed) return flushed;
        }
      }
    }
    if (unsaved_bytes < quarter && s + 1 < source_.shards.size()) continue;
    for (int b = 0; b < buckets; ++b) {
      if (auto flushed = flush(b); !flushed) return flushed;
    }
    if (auto synced = files->SyncWritten(); !synced) return synced;
    state_["bucket_bytes"] = bucket_bytes;
    state_["rows"] = state_["rows"].get<int64_t>() + kept;
    state_["skipped"] = state_["skipped"].get<int64_t>() + skipped;
    state_["scatter_done"] = s + 1;
    if (auto saved = SaveState(); !saved) return saved;
    unsaved_bytes = kept = skipped = 0;
    Log("scattered " + std::to_string(s + 1) + " of " + std::to_string(source_.shards.size()) +
        " source shards");
  }
  return {};
}

std::expected<void, std::string> Shuffle::ListFinished(ShuffledFileWriter& files,
                                                       int64_t rows_done) {
  auto finished = files.Sync(rows_done);
  if (!finished) return std::unexpected(finished.error());
  for (const ShuffledFileWriter::Finished& file : *finished) {
    metadata_["files"].push_back({{"index", file.index},
                                  {"file", file.name},
                                  {"rows", file.rows},
                                  {"bytes", file.bytes},
                                  {"crc32", FormatCrc32(file.crc32)}});
    json& totals = metadata_["totals"];
    totals["rows"] = totals["rows"].get<int64_t>() + file.rows;
    totals["files"] = totals["files"].get<int64_t>() + 1;
    totals["bytes"] = totals["bytes"].get<int64_t>() + file.bytes;
    if (auto saved = SaveMetadata(); !saved) return saved;
  }
  return {};
}

std::expected<void, std::string> Shuffle::Permute() {
  const int buckets = state_["buckets"].get<int>();
  const auto bucket_bytes = state_["bucket_bytes"].get<std::vector<int64_t>>();
  ShuffledFileWriter files(options_.out_dir, layout_, rows_, options_.rows_per_file, options_.seed,
                           options_.memory_bytes / 16, &budget_, listed_files_);
  std::vector<uint8_t> entries;
  std::vector<std::pair<uint64_t, uint32_t>> order;  // (key, entry)
  int64_t first_row = 0;
  for (int b = 0; b < buckets; ++b) {
    const int64_t rows = bucket_bytes[b] / entry_bytes_;
    if (b < state_["permute_done"].get<int>()) {
      first_row += rows;
      continue;
    }
    if (bucket_bytes[b] > options_.memory_bytes / 2) {
      return std::unexpected(Bucket(b) + " holds " + std::to_string(bucket_bytes[b]) +
                             " bytes, more than half of --memory: give more --memory");
    }
    entries.resize(static_cast<size_t>(bucket_bytes[b]));
    {
      ScopedFd fd(::open(Bucket(b).c_str(), O_RDONLY | O_CLOEXEC));
      if (fd.get() < 0) return std::unexpected(OsError("cannot open", Bucket(b), errno));
      if (auto read = PreadAll(fd.get(), entries.data(), entries.size(), 0, Bucket(b)); !read) {
        return read;
      }
    }
    order.resize(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) {
      std::memcpy(&order[i].first, entries.data() + i * entry_bytes_, 8);
      order[i].second = static_cast<uint32_t>(i);
    }
    std::sort(order.begin(), order.end());  // entries arrived in source row order: ties by row
    if (auto wrote = files.Write(entries, order, first_row); !wrote) return wrote;
    first_row += rows;
    if (auto listed = ListFinished(files, first_row); !listed) return listed;
    state_["permute_done"] = b + 1;
    if (auto saved = SaveState(); !saved) return saved;
    ::unlink(Bucket(b).c_str());
    Log("wrote bucket " + std::to_string(b + 1) + "/" + std::to_string(buckets));
  }
  return {};
}

std::expected<ShuffleResult, CommandError> Shuffle::Run() {
  if (auto started = Start(); !started) return std::unexpected(started.error());
  if (!metadata_.value("complete", false)) {
    if (auto scattered = Scatter(); !scattered) return CommandError::Stopped(scattered.error());
    rows_ = state_["rows"].get<int64_t>();
    metadata_["rows"] = rows_;
    metadata_["skipped"] = state_["skipped"];
    if (auto saved = SaveMetadata(); !saved) return CommandError::Stopped(saved.error());
    if (auto permuted = Permute(); !permuted) return CommandError::Stopped(permuted.error());
    metadata_["complete"] = true;
    if (auto saved = SaveMetadata(); !saved) return CommandError::Stopped(saved.error());
    std::error_code error;
    fs::remove_all(work_, error);
    result_.buckets = state_["buckets"].get<int>();
  }
  result_.rows = metadata_["rows"].get<int64_t>();
  result_.skipped = metadata_["skipped"].get<int64_t>();
  result_.files = metadata_["totals"]["files"].get<int64_t>();
  result_.bytes = metadata_["totals"]["bytes"].get<int64_t>();
  return result_;
}

}  // namespace

uint64_t ShuffleKey(uint64_t seed, int64_t row) {
  // SplitMix64: the stream seeded by the mixed seed, row-th output.
  auto mix = [](uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;
  return mix(mix(seed + kGolden) + (static_cast<uint64_t>(row) + 1) * kGolden);
}

std::expected<ShuffleResult, CommandError> ShuffleActivations(const ShuffleOptions& options) {
  if (options.rows_per_file < 1) return CommandError::Refused("--rows-per-file must be >= 1");
  if (options.memory_bytes < (int64_t{1} << 20))
    return CommandError::Refused("--memory must be at least 1MB");
  // A budget past the machine's memory is a typo (100000TB) that would be believed:
  // buffers sized from it, a whole source read at once.
  if (const UsableMemory usable = UsableMemory::Find();
      usable.bytes > 0 && options.memory_bytes > usable.bytes) {
    return CommandError::Refused("--memory " + std::to_string(options.memory_bytes >> 20) +
                                 " MiB is more than " + usable.what);
  }
  auto source = ReadSourceOutput(options.source_dir);
  if (!source) return CommandError::Refused(source.error());
  if (auto destination = CheckDestinationFolder("--to", options.out_dir, options.source_dir);
      !destination) {
    return CommandError::Refused(destination.error());
  }
  auto layout = MakeRecordLayout(*source, options.sites, options.dtype);
  if (!layout) return CommandError::Refused(layout.error());
  if (layout->record_bytes * 64 > options.memory_bytes) {
    return CommandError::Refused("--memory must hold at least 64 rows of " +
                                 std::to_string(layout->record_bytes) + " bytes");
  }
  Shuffle shuffle(options, std::move(*source), std::move(*layout));
  return shuffle.Run();
}

}  // namespace actex
