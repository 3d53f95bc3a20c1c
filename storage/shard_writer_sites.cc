// A document's rows into the open shard's spill: the stored sites shared out into
// groups, each group rounded and spilled on a thread of its own (ShardWriterState's
// spill_threads, the writer's own thread among them).
#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "storage/float_convert.h"
#include "storage/shard_writer_state.h"

namespace actex {

void ShardWriterState::GroupSites() {
  std::vector<size_t> stored;  // widest first
  for (size_t site = 0; site < options.sites.size(); ++site) {
    if (!options.sites[site].statistics_only) stored.push_back(site);
  }
  std::ranges::stable_sort(stored, std::ranges::greater{},
                           [&](size_t site) { return options.sites[site].width; });
  // At most one a stored site; one where a test's budget counts the writes.
  const size_t wanted =
      WritesBeside() ? static_cast<size_t>(std::max(options.spill_threads, 1)) : 1;
  const size_t groups = std::min(wanted, std::max<size_t>(stored.size(), 1));
  // Each site, widest first, to the group with the fewest values a token so far, the
  // last of equals: the writer's own thread (group 0), which also spills the id tensors
  // and then waits for the others, takes the narrowest.
  std::vector<int64_t> load(groups, 0);
  spill_group.assign(options.sites.size(), 0);
  for (const size_t site : stored) {
    size_t group = groups - 1;
    for (size_t other = group; other-- > 0;) {
      if (load[other] < load[group]) group = other;
    }
    spill_group[site] = group;
    load[group] += options.sites[site].width;
  }
  converted.assign(groups, std::vector<uint16_t>(kCopyChunkBytes / sizeof(uint16_t)));
  spill_threads.resize(groups - 1);
}

std::expected<void, std::string> ShardWriterState::SpillDocument(
    const DocumentActivations& document, bool beside) {
  const size_t sites = document.sites.size();
  std::vector<std::expected<void, std::string>> spilled(sites);
  std::expected<void, std::string> ids;
  const auto spill_group_rows = [&](size_t group) {
    for (size_t site = 0; site < sites; ++site) {
      // A statistics-only site's spill stays empty and its shards have no tensor of it.
      if (options.sites[site].statistics_only || spill_group[site] != group) continue;
      spilled[site] = SpillRows(document, site, converted[group]);
      if (!spilled[site]) return;
    }
  };
  {
    // On any return below, each Running's destructor waits for its group.
    std::vector<SideThread::Running> running;
    running.reserve(spill_threads.size());
    for (size_t group = 1; group < converted.size(); ++group) {
      running.push_back(
          beside ? spill_threads[group - 1].Start([&, group] { spill_group_rows(group); })
                 : SideThread::Running::NotStarted());
      if (!running.back().started()) spill_group_rows(group);
    }
    spill_group_rows(0);
    const std::vector<int64_t> doc_ids(document.token_ids.size(), document.doc_id);
    const std::pair<const void*, size_t> id_bytes[] = {
        {document.token_ids.data(), document.token_ids.size_bytes()},
        {doc_ids.data(), doc_ids.size() * sizeof(int64_t)},
        {document.positions.data(), document.positions.size_bytes()}};
    for (size_t i = 0; i < std::size(id_bytes) && ids; ++i) {
      ids = spill->Append(sites + i, id_bytes[i].first, id_bytes[i].second);
    }
  }
  for (const auto& site : spilled) {
    if (!site) return site;
  }
  return ids;
}

std::expected<void, std::string> ShardWriterState::SpillRows(const DocumentActivations& document,
                                                             size_t site,
                                                             std::span<uint16_t> rounded) {
  const SiteRows& rows = document.sites[site];
  if (rows.integer() || options.dtype == OutputDtype::kF32) {
    return spill->Append(site, rows.data(), rows.size_bytes());  // I32 and F32 as they are
  }
  const std::span<const float> values = rows.values;
  // Convert through a fixed scratch buffer so a long document costs no extra memory.
  const size_t per_chunk = rounded.size();
  uint16_t* out = rounded.data();
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

}  // namespace actex
