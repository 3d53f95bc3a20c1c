#ifndef ACTEX_STORAGE_REJECTS_LOG_H_
#define ACTEX_STORAGE_REJECTS_LOG_H_

#include <cstdint>
#include <expected>
#include <memory>
#include <string>

namespace actex {

// OUT/host_NN/rejects.jsonl: one {"doc_id", "file", "line", "reason"} object per
// skipped corpus line, flushed as it is written so a crash loses none.
class RejectsLog {
 public:
  static std::expected<std::unique_ptr<RejectsLog>, std::string> Open(const std::string& path);
  std::expected<void, std::string> Add(int64_t doc_id, const std::string& file, int64_t line,
                                       const std::string& reason);
  // Lines added through this object (not those already in an appended-to file).
  int64_t count() const;
  ~RejectsLog();

 private:
  RejectsLog();
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace actex

#endif  // ACTEX_STORAGE_REJECTS_LOG_H_
