#include "storage/rejects_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "storage/file_io.h"

namespace actex {

struct RejectsLog::State {
  std::string path;
  ScopedFd fd;
  int64_t count = 0;
};

RejectsLog::RejectsLog() : state_(std::make_unique<State>()) {}
RejectsLog::~RejectsLog() = default;

std::expected<std::unique_ptr<RejectsLog>, std::string> RejectsLog::Open(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  if (!dir.empty()) {
    if (auto made = MakeDirectories(dir); !made) return std::unexpected(made.error());
  }
  // Append mode: a resumed or repeated run adds to the log instead of erasing it,
  // and each line lands whole at the end even if another writer shares the file.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return std::unexpected(OsError("cannot open rejects log", path, errno));
  std::unique_ptr<RejectsLog> log(new RejectsLog());
  log->state_->path = path;
  log->state_->fd = ScopedFd(fd);
  return log;
}

std::expected<void, std::string> RejectsLog::Add(int64_t doc_id, const std::string& file,
                                                 int64_t line, const std::string& reason) {
  nlohmann::ordered_json entry = {
      {"doc_id", doc_id}, {"file", file}, {"line", line}, {"reason", reason}};
  // File names need not be UTF-8; replacing bad bytes keeps the log valid JSON.
  std::string text = entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  // One unbuffered write per line: the line is in the kernel once Add returns.
  if (auto written = WriteAll(state_->fd.get(), text.data(), text.size(), state_->path, nullptr);
      !written) {
    return written;
  }
  ++state_->count;
  return {};
}

int64_t RejectsLog::count() const { return state_->count; }

}  // namespace actex
