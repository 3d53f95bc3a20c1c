#include "actex_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace actex {
const std::string& ActexBinary() {
  static const std::string binary = ACTEX_BINARY_DIR "/actors/actex";
  return binary;
}

namespace {

ActexOutcome WaitForOutcome(ActexProcess& process, std::chrono::milliseconds limit) {
  ActexOutcome outcome;
  outcome.exit_code = process.Wait(limit);
  outcome.out = process.out();
  outcome.err = process.err();
  outcome.max_rss_kb = process.max_rss_kb();
  return outcome;
}

}  // namespace

ActexOutcome RunActex(const std::string& output_prefix, std::vector<std::string> args,
                      std::chrono::milliseconds limit, const std::string& working_dir) {
  ActexProcess process(output_prefix, std::move(args), "/dev/null", working_dir);
  return WaitForOutcome(process, limit);
}

ActexOutcome RunActex(const TempDir& dir, std::vector<std::string> args,
                      const std::string& stdin_path) {
  ActexProcess process(dir.path() + "/run", std::move(args), stdin_path);
  return WaitForOutcome(process, std::chrono::seconds(120));
}

ActexProcess::ActexProcess(const std::string& output_prefix, std::vector<std::string> args,
                           const std::string& stdin_path, const std::string& working_dir,
                           const std::vector<std::string>& launcher)
    : out_path_(output_prefix + ".out"), err_path_(output_prefix + ".err") {
  args.insert(args.begin(), ActexBinary());
  args.insert(args.begin(), launcher.begin(), launcher.end());
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, stdin_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  // After the opens above, which name the test's paths.
  if (!working_dir.empty()) posix_spawn_file_actions_addchdir_np(&actions, working_dir.c_str());
  if (posix_spawnp(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
    ADD_FAILURE() << "cannot start " << argv[0];
    pid_ = 0;
    exit_code_ = -1;
  }
  posix_spawn_file_actions_destroy(&actions);
}

ActexProcess::~ActexProcess() {
  if (!exit_code_ && pid_ > 0) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

void ActexProcess::Reap(int status, long max_rss_kb) {
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  max_rss_kb_ = max_rss_kb;
}

std::optional<int> ActexProcess::Poll() {
  if (exit_code_) return exit_code_;
  int status = 0;
  rusage usage{};
  if (wait4(pid_, &status, WNOHANG, &usage) == pid_) Reap(status, usage.ru_maxrss);
  return exit_code_;
}

int ActexProcess::Wait(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!Poll()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ADD_FAILURE() << "actex still running after " << limit.count() << " ms; stderr:\n" << err();
      kill(pid_, SIGKILL);
      int status = 0;
      rusage usage{};
      wait4(pid_, &status, 0, &usage);
      Reap(status, usage.ru_maxrss);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return *exit_code_;
}

void ActexProcess::Signal(int signal) {
  if (!exit_code_ && pid_ > 0) kill(pid_, signal);
}

std::string ActexProcess::out() const { return ReadBytes(out_path_); }
std::string ActexProcess::err() const { return ReadBytes(err_path_); }

}  // namespace actex
