// What the MonitorView tests share: a host's event and a line of the table.
#ifndef ACTEX_TESTS_ACTORS_CLI_MONITOR_EVENTS_H_
#define ACTEX_TESTS_ACTORS_CLI_MONITOR_EVENTS_H_

#include <cstdint>
#include <sstream>
#include <string>
#include <utility>

#include "transport/schema.h"

namespace actex::monitor_view_test {

// Host `host`'s event `kind` at unix time `at`, `docs` documents done (all computed,
// all listed, 100 tokens each) of `total` (-1: unknown); host 0 runs at 200 tokens/s,
// the others at 100.
inline MonitorEventMessage Event(std::string kind, int32_t host, double at, int64_t docs,
                                 int64_t total = -1) {
  MonitorEventMessage event;
  event.kind = std::move(kind);
  event.host_id = host;
  event.unix_seconds = at;
  event.docs_done = docs;
  event.docs_computed = docs;
  event.docs_total = total;
  event.tokens_done = docs * 100;
  event.docs_through_listed = docs;
  event.tokens_computed = docs * 100;
  event.tokens_per_second = host == 0 ? 200 : 100;
  return event;
}

// The table line whose first column is `first_cell` ("0", "1", "total"), or "" if none.
inline std::string Row(const std::string& table, const std::string& first_cell) {
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(first_cell + " ")) return line;
  }
  return "";
}

}  // namespace actex::monitor_view_test

#endif  // ACTEX_TESTS_ACTORS_CLI_MONITOR_EVENTS_H_
