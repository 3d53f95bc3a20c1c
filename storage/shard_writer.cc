#include "storage/shard_writer.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "storage/crc32.h"
#include "storage/file_io.h"
#include "storage/float_convert.h"
#include "storage/safetensors.h"
#include "storage/shard_file_sink.h"
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

// One tensor's rows for the open shard, in the output dtype, in a file that was
// unlinked as soon as it was created: it takes no name in the directory and the
// kernel reclaims it even if the process dies.
struct Spill {
  std::string path;
  ScopedFd fd;
  int64_t bytes = 0;
};

}  // namespace

struct ShardWriter::State {
  ShardWriterOptions options;
  WriteBudget budget;
  std::vector<Spill> spills;        // sites in order, then token_ids, doc_ids, positions
  std::vector<uint8_t> scratch;     // spill bytes on their way into a shard
  std::vector<uint16_t> converted;  // half-precision rows on their way into a spill
  // The open shard (spills.empty() when none is open).
  int shard_number = 0;
  int64_t shard_docs = 0, shard_tokens = 0, shard_bytes = 0;
  int64_t first_doc_id = 0, last_doc_id = -1;
  nlohmann::ordered_json shards = nlohmann::ordered_json::array();
  nlohmann::json resume_next, resume_listed;  // the pending point; the one stored
  ShardStats stats;
  // Per site: over the listed shards (stored in metadata.json with them, so a resume
  // continues from exactly what is listed), and over the open shard.
  std::vector<SiteStatistics> listed_statistics, open_statistics;
  bool statistics_known = true;  // false when continuing an output written without them
  bool finished = false;
  std::string failure;  // set by the first error; every later call reports it

  std::string PathOf(const std::string& name) const { return options.dir + "/" + name; }
  std::expected<void, std::string> WriteMetadata(bool complete);
  std::expected<void, std::string> OpenSpills();
  std::expected<void, std::string> SpillRows(Spill& spill, const DocumentActivations& document,
                                             size_t site);
  std::expected<void, std::string> CloseShard();
  void ContinueFrom(const nlohmann::json& earlier);
  std::expected<void, std::string> Fail(std::string message) {
    failure = std::move(message);
    return std::unexpected(failure);
  }
};

std::expected<void, std::string> ShardWriter::State::WriteMetadata(bool complete) {
  nlohmann::ordered_json sites = nlohmann::ordered_json::array();
  for (const auto& [name, width] : options.sites)
    sites.push_back({{"name", name}, {"width", width}});
  nlohmann::ordered_json metadata = {
      {"format", "actex-activations"},
      {"version", 1},
      {"complete", complete},
      {"config", nlohmann::ordered_json::parse(options.run_config.dump(
                     -1, ' ', false, nlohmann::json::error_handler_t::replace))},
      {"sites", sites},
      {"dtype", MetadataDtype(options.dtype)},
      {"shards", shards},
      {"totals",
       {{"docs", stats.docs},
        {"tokens", stats.tokens},
        {"shards", stats.shards},
        {"bytes", stats.bytes}}}};
  if (!resume_listed.is_null()) metadata["resume"] = resume_listed;
  nlohmann::ordered_json statistics;  // null when not known
  for (size_t i = 0; statistics_known && i < options.sites.size(); ++i) {
    statistics[options.sites[i].first] = listed_statistics[i].ToJson();
  }
  metadata["statistics"] = statistics;
  std::string text =
      metadata.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  return WriteFileAtomically(PathOf(kMetadataFile), text, &budget);
}

void ShardWriter::State::ContinueFrom(const nlohmann::json& earlier) {
  for (const auto& shard : earlier["shards"]) {
    shards.push_back(nlohmann::ordered_json::parse(shard.dump()));
    ++stats.shards;
    stats.docs += shard.value("docs", int64_t{0});
    stats.tokens += shard.value("tokens", int64_t{0});
    stats.bytes += shard.value("bytes", int64_t{0});
    last_doc_id = shard.value("last_doc_id", last_doc_id);
  }
  shard_number = static_cast<int>(stats.shards);
  if (earlier.contains("resume")) resume_listed = earlier["resume"];
  const nlohmann::json& statistics = earlier.value("statistics", nlohmann::json());
  for (size_t i = 0; i < options.sites.size(); ++i) {
    auto earlier_site = statistics.is_object() && statistics.contains(options.sites[i].first)
                            ? SiteStatistics::FromJson(statistics[options.sites[i].first])
                            : std::unexpected(std::string("absent"));
    if (earlier_site && earlier_site->width() == options.sites[i].second) {
      listed_statistics[i] = *earlier_site;
    } else if (!earlier["shards"].empty()) {
      statistics_known = false;  // the listed shards' rows cannot be read back here
    }
  }
}

std::expected<void, std::string> ShardWriter::State::OpenSpills() {
  ++shard_number;
  const size_t count = options.sites.size() + std::size(kIdTensors);
  for (size_t i = 0; i < count; ++i) {
    Spill spill;
    spill.path = PathOf(".shard_" + std::to_string(shard_number) + ".spill." + std::to_string(i));
    int fd = ::open(spill.path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return std::unexpected(OsError("cannot create spill file", spill.path, errno));
    spill.fd = ScopedFd(fd);
    if (::unlink(spill.path.c_str()) != 0) {
      return std::unexpected(OsError("cannot unlink spill file", spill.path, errno));
    }
    spills.push_back(std::move(spill));
  }
  shard_docs = shard_tokens = shard_bytes = 0;
  return {};
}

std::expected<void, std::string> ShardWriter::State::SpillRows(Spill& spill,
                                                               const DocumentActivations& document,
                                                               size_t site) {
  const std::span<const float> values = document.sites[site];
  if (options.dtype == OutputDtype::kF32) {
    spill.bytes += static_cast<int64_t>(values.size_bytes());
    return WriteAll(spill.fd.get(), values.data(), values.size_bytes(), spill.path, &budget);
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
    const size_t bytes = chunk.size() * sizeof(uint16_t);
    if (auto written = WriteAll(spill.fd.get(), out, bytes, spill.path, &budget); !written) {
      return written;
    }
    spill.bytes += static_cast<int64_t>(bytes);
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
    // A buffered copy rather than copy_file_range: the CRC needs every byte anyway.
    for (Spill& spill : spills) {
      for (int64_t offset = 0; offset < spill.bytes;) {
        const size_t piece = static_cast<size_t>(
            std::min<int64_t>(spill.bytes - offset, static_cast<int64_t>(scratch.size())));
        if (auto ok = PreadAll(spill.fd.get(), scratch.data(), piece, offset, spill.path); !ok) {
          return std::unexpected(ok.error());
        }
        if (auto ok = (*sink)->Write(scratch.data(), piece); !ok) {
          return std::unexpected(ok.error());
        }
        offset += static_cast<int64_t>(piece);
      }
    }
    if (auto ok = (*sink)->Finish(); !ok) return std::unexpected(ok.error());
    if (auto ok = CommitRename(tmp_path, path); !ok) return std::unexpected(ok.error());
    return std::make_pair((*sink)->crc32(), (*sink)->bytes_written());
  }();
  if (!written) {
    ::unlink(tmp_path.c_str());
    return std::unexpected(written.error());
  }
  spills.clear();  // closing the descriptors frees the unlinked spill files

  shards.push_back({{"file", name},
                    {"first_doc_id", first_doc_id},
                    {"last_doc_id", last_doc_id},
                    {"docs", shard_docs},
                    {"tokens", shard_tokens},
                    {"bytes", written->second},
                    {"crc32", FormatCrc32(written->first)}});
  spdlog::debug("wrote {}: docs {}..{} ({} docs, {} tokens, {} bytes)", path, first_doc_id,
                last_doc_id, shard_docs, shard_tokens, written->second);
  ++stats.shards;
  stats.docs += shard_docs;
  stats.tokens += shard_tokens;
  stats.bytes += written->second;
  for (size_t i = 0; i < open_statistics.size(); ++i) {
    listed_statistics[i].Merge(open_statistics[i]);
    open_statistics[i] = SiteStatistics(options.sites[i].second);
  }
  resume_listed = resume_next;
  return WriteMetadata(/*complete=*/false);
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
  if (options.sites.empty()) return std::unexpected(std::string("no activation site to write"));
  std::set<std::string> names(std::begin(kIdTensors), std::end(kIdTensors));
  names.insert("__metadata__");
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
    state.listed_statistics.emplace_back(site.second);
    state.open_statistics.emplace_back(site.second);
  }
  if (continues) state.ContinueFrom(state.options.continue_from);
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
  if (document.doc_id < 0 || document.doc_id <= state.last_doc_id) {
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

  if (state.spills.empty()) {
    if (auto opened = state.OpenSpills(); !opened) return state.Fail(opened.error());
    state.first_doc_id = document.doc_id;
  }
  const size_t sites = document.sites.size();
  for (size_t i = 0; i < sites; ++i) {
    if (auto spilled = state.SpillRows(state.spills[i], document, i); !spilled) {
      return state.Fail(spilled.error());
    }
    state.open_statistics[i].AddRows(document.sites[i].data(), static_cast<int64_t>(tokens));
  }
  const std::vector<int64_t> doc_ids(tokens, document.doc_id);
  const std::pair<const void*, size_t> id_bytes[] = {
      {document.token_ids.data(), document.token_ids.size_bytes()},
      {doc_ids.data(), doc_ids.size() * sizeof(int64_t)},
      {document.positions.data(), document.positions.size_bytes()}};
  for (size_t i = 0; i < std::size(id_bytes); ++i) {
    Spill& spill = state.spills[sites + i];
    const auto [data, size] = id_bytes[i];
    if (auto written = WriteAll(spill.fd.get(), data, size, spill.path, &state.budget); !written) {
      return state.Fail(written.error());
    }
    spill.bytes += static_cast<int64_t>(size);
  }
  state.last_doc_id = document.doc_id;
  ++state.shard_docs;
  state.shard_tokens += static_cast<int64_t>(tokens);
  state.shard_bytes = 0;
  for (const Spill& spill : state.spills) state.shard_bytes += spill.bytes;
  if (state.shard_bytes >= state.options.shard_bytes) {
    if (auto closed = state.CloseShard(); !closed) return state.Fail(closed.error());
  }
  return {};
}

std::expected<void, std::string> ShardWriter::Finish(bool complete) {
  State& state = *state_;
  if (!state.failure.empty()) {
    return std::unexpected("shard writer stopped by an earlier error: " + state.failure);
  }
  if (state.finished) return {};
  if (!state.spills.empty()) {
    if (auto closed = state.CloseShard(); !closed) return state.Fail(closed.error());
  }
  if (auto written = state.WriteMetadata(complete); !written) {
    return state.Fail(written.error());
  }
  state.finished = true;
  return {};
}

void ShardWriter::SetResumePoint(nlohmann::json point) { state_->resume_next = std::move(point); }

const ShardStats& ShardWriter::stats() const { return state_->stats; }

ListedShard ShardWriter::listed_shard(int64_t index) const {
  const auto& shard = state_->shards.at(static_cast<size_t>(index));
  return {shard.value("file", ""), shard.value("bytes", int64_t{0}), shard.value("crc32", "")};
}

}  // namespace actex
