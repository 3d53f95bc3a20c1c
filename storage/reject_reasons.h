#ifndef ACTEX_STORAGE_REJECT_REASONS_H_
#define ACTEX_STORAGE_REJECT_REASONS_H_

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

namespace actex {

// Why a host folder's documents were rejected, from its rejects.jsonl, for a message
// that says what to check when a run rejected too much.
struct RejectReasons {
  // Reasons of one kind: the same text once the numbers in it are left out
  // ("token id N is outside the model's vocabulary of N").
  struct Kind {
    std::string example;  // the first reason of this kind, as logged
    int64_t count = 0;
  };
  int64_t total = 0;        // entries read
  std::vector<Kind> kinds;  // most common first (ties: first seen first)
};

// The kind a reason belongs to: the text before its first ": " (the detail after it
// varies from line to line, as a JSON parser's message does), with every number that
// does not end a word ("UTF-8" keeps its 8) written as N.
std::string RejectReasonKind(const std::string& reason);

// Reads `path` (a rejects.jsonl; absent: no rejects) and counts its entries by kind,
// keeping the `most_common` most common kinds. Lines that are not a reject entry are
// skipped (`actex verify` reports them). Errors name the file (cannot be read).
std::expected<RejectReasons, std::string> TallyRejectReasons(const std::string& path,
                                                             size_t most_common);

}  // namespace actex

#endif  // ACTEX_STORAGE_REJECT_REASONS_H_
