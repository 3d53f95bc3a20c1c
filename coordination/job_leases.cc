#include "coordination/job_leases.h"

#include <spdlog/spdlog.h>

#include <filesystem>

namespace actex {
namespace {

using Kind = LeaseTable::Record::Kind;

constexpr char kListedPrefix[] = "listed/";

}  // namespace

std::expected<std::unique_ptr<JobLeases>, std::string> JobLeases::Open(const std::string& log_path,
                                                                       int64_t chunk_docs,
                                                                       LeaseTable::Share share) {
  std::unique_ptr<JobLeases> leases(new JobLeases());
  leases->table_ = LeaseTable(share);
  auto log = LeaseLog::Open(log_path, chunk_docs, &leases->table_);
  if (!log) return std::unexpected(log.error());
  leases->log_ = std::move(*log);
  return leases;
}

std::expected<std::unique_ptr<JobLeases>, std::string> JobLeases::OpenStandbyCopy(
    const std::string& path, int64_t chunk_docs, LeaseTable::Share share) {
  // A copy of an earlier run may lag behind what host 0's log holds now.
  std::error_code error;
  std::filesystem::remove(path, error);
  if (error) return std::unexpected("cannot remove the old " + path + ": " + error.message());
  return Open(path, chunk_docs, share);
}

std::string JobLeases::ListedKey(int host) { return kListedPrefix + std::to_string(host); }

std::string JobLeases::FormatChunks(const std::vector<int64_t>& chunks) {
  std::string text;
  for (size_t i = 0; i < chunks.size();) {
    size_t last = i;
    while (last + 1 < chunks.size() && chunks[last + 1] == chunks[last] + 1) ++last;
    text += (text.empty() ? "" : ",") + std::to_string(chunks[i]);
    if (last > i) text += "-" + std::to_string(chunks[last]);
    i = last + 1;
  }
  return text;
}

std::expected<std::vector<int64_t>, std::string> JobLeases::ParseChunks(const std::string& text) {
  std::vector<int64_t> chunks;
  std::string_view rest = text;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view run = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const size_t dash = run.find('-');
    auto first = ParseChunkNumber(run.substr(0, dash));
    auto last = dash == std::string_view::npos ? first : ParseChunkNumber(run.substr(dash + 1));
    if (!first) return std::unexpected(first.error());
    if (!last) return std::unexpected(last.error());
    if (*last < *first || (!chunks.empty() && *first <= chunks.back())) {
      return std::unexpected("chunk list \"" + text + "\" is not ascending");
    }
    for (int64_t chunk = *first; chunk <= *last; ++chunk) chunks.push_back(chunk);
  }
  return chunks;
}

std::expected<void, std::string> JobLeases::Adopt(
    int host, const std::map<std::string, std::string>& published) {
  auto found = published.find(ListedKey(host));
  if (found == published.end()) return {};
  auto chunks = ParseChunks(found->second);
  if (!chunks) return std::unexpected("host " + std::to_string(host) + ": " + chunks.error());
  for (int64_t chunk : *chunks) {
    const LeaseTable::Record listed{Kind::kListed, chunk, Holder(host)};
    if (table_.IsListed(chunk)) continue;  // the log knew it
    if (auto holder = table_.HolderOf(chunk); holder && *holder != Holder(host)) {
      // A host listed it and was lost before saying so, and the chunk went to
      // another: both folders hold it now, and `actex verify` will say so.
      spdlog::warn("chunk {} is listed in host {}'s folder and was granted to {} as well", chunk,
                   host, *holder);
      continue;
    }
    if (auto appended = log_->Append(listed); !appended) return appended;
  }
  return {};
}

std::expected<void, std::string> JobLeases::Begin(
    const std::map<std::string, std::string>& published) {
  std::set<int> present;
  for (const auto& [key, value] : published) {
    if (!key.starts_with(kListedPrefix)) continue;
    auto host = ParseChunkNumber(std::string_view(key).substr(sizeof(kListedPrefix) - 1));
    if (!host) return std::unexpected("published key " + key + ": " + host.error());
    present.insert(static_cast<int>(*host));
  }
  // Leases of an earlier run are void: its hosts are gone. What the folders of this
  // run list is listed. A host not in this run (the job has fewer now) keeps what it
  // was listing: only its folder can tell.
  for (int host : present) {
    if (auto released = log_->Append({Kind::kReleased, -1, Holder(host)}); !released) {
      return released;
    }
  }
  for (int host : present) {
    if (auto adopted = Adopt(host, published); !adopted) return adopted;
  }
  for (const std::string& holder : table_.holders()) {
    lost_.insert(holder);
    if (auto lost = log_->Append({Kind::kLost, -1, holder}); !lost) return lost;
  }
  spdlog::info("leases: {} at the start", Progress());
  return {};
}

std::expected<void, std::string> JobLeases::Rejoin(
    int host, const std::map<std::string, std::string>& published) {
  if (auto adopted = Adopt(host, published); !adopted) return adopted;
  lost_.erase(Holder(host));
  // What its folder does not list, it never listed: free for anyone now.
  return log_->Append({Kind::kReleased, -1, Holder(host)});
}

std::expected<std::optional<int64_t>, std::string> JobLeases::Grant(int host,
                                                                    int64_t corpus_chunks) {
  if (corpus_chunks >= 0 && table_.end() != corpus_chunks) {
    if (auto ended = log_->Append({Kind::kEnded, corpus_chunks, ""}); !ended) {
      return std::unexpected("host " + std::to_string(host) +
                             " read the corpus's end: " + ended.error());
    }
  }
  std::optional<LeaseTable::Record> grant = table_.NextGrant(Holder(host));
  if (!grant) return std::nullopt;
  if (auto granted = log_->Append(*grant); !granted) return std::unexpected(granted.error());
  return grant->chunk;
}

std::expected<void, std::string> JobLeases::List(int host, const std::vector<int64_t>& chunks) {
  for (int64_t chunk : chunks) {
    if (auto listed = log_->Append({Kind::kListed, chunk, Holder(host)}); !listed) {
      return std::unexpected("host " + std::to_string(host) + " listed a chunk: " + listed.error());
    }
  }
  return {};
}

std::expected<bool, std::string> JobLeases::BeginListing(int host,
                                                         const std::vector<int64_t>& chunks) {
  for (int64_t chunk : chunks) {
    if (table_.HolderOf(chunk) != Holder(host)) return false;
  }
  for (int64_t chunk : chunks) {
    if (auto noted = log_->Append({Kind::kListing, chunk, Holder(host)}); !noted) {
      return std::unexpected(noted.error());
    }
  }
  return true;
}

std::expected<void, std::string> JobLeases::Lose(int host) {
  lost_.insert(Holder(host));
  return log_->Append({Kind::kLost, -1, Holder(host)});
}

std::vector<std::string> JobLeases::RecordsSince(uint64_t first) const {
  const std::vector<std::string>& lines = log_->lines();
  if (first >= lines.size()) return {};
  return {lines.begin() + static_cast<std::ptrdiff_t>(first), lines.end()};
}

std::expected<void, std::string> JobLeases::Replicate(const std::vector<std::string>& records) {
  std::vector<LeaseTable::Record> parsed;
  for (const std::string& line : records) {
    auto record = ParseRecord(line);
    if (!record) return std::unexpected("a replicated lease record: " + record.error());
    parsed.push_back(*record);
  }
  if (auto appended = log_->AppendAll(parsed); !appended) {
    return std::unexpected("the standby's copy of the lease log: " + appended.error());
  }
  return {};
}

std::expected<std::vector<int64_t>, std::string> JobLeases::Reattach(
    int host, const std::vector<int64_t>& held, const std::vector<int64_t>& listed) {
  lost_.erase(Holder(host));
  for (int64_t chunk : listed) {
    if (table_.IsListed(chunk)) continue;
    if (table_.HolderOf(chunk) != Holder(host)) {
      spdlog::warn("host {} listed chunk {}, which the lease log gives to {}", host, chunk,
                   table_.HolderOf(chunk).value_or("nobody"));
      continue;
    }
    if (auto appended = log_->Append({Kind::kListed, chunk, Holder(host)}); !appended) {
      return std::unexpected(appended.error());
    }
  }
  const std::set<int64_t> known(held.begin(), held.end());
  for (int64_t chunk : known) {
    // Every grant reached the standby before the host heard of it.
    if (table_.HolderOf(chunk) != Holder(host) && !table_.IsListed(chunk)) {
      spdlog::warn("host {} holds chunk {}, which the lease log gives to {}; it cannot list it",
                   host, chunk, table_.HolderOf(chunk).value_or("nobody"));
    }
  }
  std::vector<int64_t> unknown;
  for (int64_t chunk : table_.HeldBy(Holder(host))) {
    if (!known.contains(chunk)) unknown.push_back(chunk);
  }
  return unknown;
}

bool JobLeases::stalled() const {
  if (!table_.end() || table_.NextGrant("") || table_.finished()) return false;
  for (const std::string& holder : table_.holders()) {
    if (!lost_.contains(holder)) return false;
  }
  return true;
}

std::string JobLeases::Progress() const {
  const std::optional<int64_t> end = table_.end();
  std::string progress =
      std::to_string(table_.listed_chunks()) + " of " +
      (end ? std::to_string(table_.share().ChunksBelow(*end)) : std::string("?")) +
      " chunks listed";
  for (const std::string& holder : table_.holders()) {
    const std::vector<int64_t> waiting = table_.BeingListedBy(holder);
    if (waiting.empty()) continue;
    progress += "; chunks " + FormatChunks(waiting) + " wait for " + holder +
                "'s folder (it was lost while listing them)";
  }
  return progress;
}

}  // namespace actex
