#include "actors/upload_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

extern char** environ;

namespace actex {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kKeptOutputBytes = 4096;
constexpr auto kPollSlice = std::chrono::milliseconds(100);
constexpr auto kTermGrace = std::chrono::seconds(2);
constexpr const char* kPlaceholders[] = {"{path}", "{name}", "{host_dir}"};

std::string ShellQuote(const std::string& value) {
  std::string quoted = "'";
  for (char c : value) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// Reads what the command wrote so far; false once the pipe is closed.
bool ReadOutput(int fd, std::string* output) {
  char buffer[4096];
  while (true) {
    const ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got > 0) {
      output->append(buffer, static_cast<size_t>(got));
      if (output->size() > kKeptOutputBytes) output->erase(0, output->size() - kKeptOutputBytes);
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    return got < 0 && errno == EAGAIN;  // 0 is end of file; other errors end reading too
  }
}

// Kills the command's whole process group (the shell and whatever it started) and
// reaps the shell.
int KillGroup(pid_t pid) {
  ::kill(-pid, SIGTERM);
  const Clock::time_point deadline = Clock::now() + kTermGrace;
  int status = 0;
  while (Clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      ::kill(-pid, SIGKILL);  // anything the shell left behind
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

std::expected<void, std::string> CheckUploadTemplate(const std::string& command_template) {
  if (command_template.find("{path}") == std::string::npos) {
    return std::unexpected("--upload-cmd '" + command_template +
                           "' has no {path}: the command would not know which file to upload");
  }
  for (size_t open = command_template.find('{'); open != std::string::npos;
       open = command_template.find('{', open + 1)) {
    const size_t close = command_template.find('}', open);
    if (close == std::string::npos) break;
    const std::string placeholder = command_template.substr(open, close - open + 1);
    bool known = false;
    for (const char* name : kPlaceholders) known = known || placeholder == name;
    // Shell syntax such as ${VAR} or {a,b} is left alone; only {word} looks like ours.
    const bool looks_like_ours =
        placeholder.size() > 2 &&
        placeholder.find_first_not_of("abcdefghijklmnopqrstuvwxyz_", 1) == placeholder.size() - 1;
    const bool shell_variable = open > 0 && command_template[open - 1] == '$';
    if (!known && looks_like_ours && !shell_variable) {
      return std::unexpected("--upload-cmd: unknown placeholder " + placeholder +
                             " (known: {path}, {name}, {host_dir})");
    }
  }
  return {};
}

std::string ExpandUploadTemplate(const std::string& command_template, const std::string& path,
                                 const std::string& name, const std::string& host_dir) {
  const std::string values[] = {ShellQuote(path), ShellQuote(name), ShellQuote(host_dir)};
  std::string expanded;
  for (size_t i = 0; i < command_template.size();) {
    bool replaced = false;
    for (size_t k = 0; k < std::size(kPlaceholders) && !replaced; ++k) {
      const std::string_view placeholder = kPlaceholders[k];
      if (std::string_view(command_template).substr(i, placeholder.size()) == placeholder) {
        expanded += values[k];
        i += placeholder.size();
        replaced = true;
      }
    }
    if (!replaced) expanded += command_template[i++];
  }
  return expanded;
}

std::string CommandOutcome::Describe() const {
  std::string last_line = output;
  while (!last_line.empty() && (last_line.back() == '\n' || last_line.back() == '\r')) {
    last_line.pop_back();
  }
  if (const size_t cut = last_line.rfind('\n'); cut != std::string::npos) {
    last_line = last_line.substr(cut + 1);
  }
  std::string text;
  if (stopped) {
    text = "stopped";
  } else if (timed_out) {
    text = "timed out";
  } else if (signal != 0) {
    text = "killed by signal " + std::to_string(signal);
  } else {
    text = "exit status " + std::to_string(exit_code);
  }
  return last_line.empty() ? text : text + ": " + last_line;
}

std::expected<CommandOutcome, std::string> RunShellCommand(
    const std::string& command, std::chrono::milliseconds timeout,
    const std::function<bool()>& should_stop) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return std::unexpected(std::string("cannot create a pipe for the upload command: ") +
                           std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, "/bin/sh", &actions, &attributes,
                                    const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(pipe_fds[1]);
  if (spawned != 0) {
    ::close(pipe_fds[0]);
    return std::unexpected(std::string("cannot start /bin/sh for the upload command: ") +
                           std::strerror(spawned));
  }
  ::fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);

  CommandOutcome outcome;
  const Clock::time_point deadline = Clock::now() + timeout;
  bool reading = true;
  int status = 0;
  while (true) {
    if (reading) {
      pollfd item = {pipe_fds[0], POLLIN, 0};
      ::poll(&item, 1, static_cast<int>(kPollSlice.count()));
      reading = ReadOutput(pipe_fds[0], &outcome.output);
    } else {
      std::this_thread::sleep_for(kPollSlice / 4);
    }
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      // What the shell wrote before it exited; a background child holding the pipe
      // open must not keep us waiting.
      ReadOutput(pipe_fds[0], &outcome.output);
      break;
    }
    outcome.stopped = should_stop && should_stop();
    outcome.timed_out = !outcome.stopped && Clock::now() >= deadline;
    if (outcome.stopped || outcome.timed_out) {
      status = KillGroup(pid);
      break;
    }
  }
  ::close(pipe_fds[0]);
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
  outcome.succeeded =
      !outcome.stopped && !outcome.timed_out && WIFEXITED(status) && outcome.exit_code == 0;
  return outcome;
}

}  // namespace actex
