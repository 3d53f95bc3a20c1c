#include "storage/output_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "base/whole_file.h"

namespace actex {

namespace {

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "an unknown host";
  return name;
}

// The holder's line as it wrote it ("pid 123 on host node7"), or a note when the
// file says nothing usable (the holder may have just created it).
std::string HolderOf(const std::string& path) {
  auto text = ReadWholeFile(path);
  if (!text || text->empty()) return "another process (it has not written its pid yet)";
  std::string line = text->substr(0, text->find('\n'));
  if (line.size() > 200) line = line.substr(0, 200);
  return line;
}

}  // namespace

std::string OutputLock::PathOf(const std::string& out_dir, const std::string& folder) {
  return (std::filesystem::path(out_dir) / ("." + folder + ".lock")).string();
}

std::expected<OutputLock, OutputLock::Error> OutputLock::Acquire(const std::string& out_dir,
                                                                 const std::string& folder) {
  std::error_code error;
  std::filesystem::create_directories(out_dir, error);
  if (error) {
    return std::unexpected(
        Error{Refusal::kSystem, "cannot create " + out_dir + ": " + error.message()});
  }
  const std::string path = PathOf(out_dir, folder);
  ScopedFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (fd.get() < 0) {
    return std::unexpected(
        Error{Refusal::kSystem, OsError("cannot open the lock file", path, errno)});
  }
  int locked;
  do {
    locked = ::flock(fd.get(), LOCK_EX | LOCK_NB);
  } while (locked != 0 && errno == EINTR);
  if (locked != 0 && errno == EWOULDBLOCK) {
    return std::unexpected(Error{
        Refusal::kHeld,
        out_dir + "/" + folder + " is being written by another actex run (" + HolderOf(path) +
            ", lock file " + path +
            "): wait for it to end or stop it, then run this command again to resume; or give "
            "another --out"});
  }
  if (locked != 0) {
    return std::unexpected(Error{Refusal::kSystem, OsError("cannot lock", path, errno)});
  }
  // Only informative: who holds it, for the message of a run refused above.
  const std::string holder = "pid " + std::to_string(::getpid()) + " on host " + HostName() + "\n";
  if (::ftruncate(fd.get(), 0) != 0) {
    return std::unexpected(Error{Refusal::kSystem, OsError("cannot truncate", path, errno)});
  }
  if (auto written = WriteAll(fd.get(), holder.data(), holder.size(), path, nullptr); !written) {
    return std::unexpected(Error{Refusal::kSystem, written.error()});
  }
  return OutputLock(path, std::move(fd));
}

}  // namespace actex
