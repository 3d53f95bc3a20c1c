#include "bench/child_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace actex {

std::expected<ChildResult, std::string> RunChild(const std::vector<std::string>& args,
                                                 const std::string& log_path) {
  std::vector<char*> argv;
  std::vector<std::string> owned = args;
  for (std::string& arg : owned) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return std::unexpected("cannot start " + args[0] + ": " + std::strerror(spawned));
  }
  int status = 0;
  rusage usage{};
  while (wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) return std::unexpected("wait4: " + std::string(std::strerror(errno)));
  }
  ChildResult result;
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.peak_rss_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux: kilobytes
  std::ifstream log(log_path);
  if (!log) return std::unexpected("cannot read " + log_path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << log.rdbuf();
  result.output = text.str();
  return result;
}

std::string JoinArgs(const std::vector<std::string>& args) {
  std::string line;
  for (const std::string& arg : args) line += (line.empty() ? "" : " ") + arg;
  return line;
}

}  // namespace actex
