#ifndef ACTEX_ACTORS_UPLOAD_COMMAND_H_
#define ACTEX_ACTORS_UPLOAD_COMMAND_H_

#include <chrono>
#include <expected>
#include <functional>
#include <string>

namespace actex {

// The longest wait between two attempts at an upload: the doubling waits stop here,
// and --upload-backoff may not start above it.
inline constexpr double kMaxBackoffSeconds = 300;

// How a node uploads what it writes (the --upload-* flags). Not part of the run's
// identity: a rerun may change them (fix a bucket name, add --delete-after-upload).
struct UploadOptions {
  std::string command;  // --upload-cmd template (below); empty: nothing is uploaded
  bool delete_after_upload = false;
  int retries = 5;                // further attempts after a failed one
  double backoff_seconds = 2.0;   // wait before the first retry; doubles, at most 300 s
                                  // (kMaxBackoffSeconds)
  double timeout_seconds = 3600;  // one attempt is killed after this long
};

// --upload-cmd is a shell command template with three placeholders:
//   {path}      the file's local path (absolute)
//   {name}      its name inside the host folder (shard_000001.safetensors, metadata.json)
//   {host_dir}  the host folder's name (host_00)
// e.g. 'gsutil cp {path} gs://bucket/prefix/{host_dir}/{name}'. Each value is put in
// single quotes, so a path with spaces or quotes stays one word.

// Refuses a template without {path} or with a placeholder other than the three,
// naming it, so a typo fails before any work rather than after the first shard.
std::expected<void, std::string> CheckUploadTemplate(const std::string& command_template);

// The template with every placeholder replaced by its shell-quoted value.
std::string ExpandUploadTemplate(const std::string& command_template, const std::string& path,
                                 const std::string& name, const std::string& host_dir);

struct CommandOutcome {
  bool succeeded = false;  // exited with status 0
  bool timed_out = false;
  bool stopped = false;  // `should_stop` turned true; the command was killed
  int exit_code = -1;    // when it exited
  int signal = 0;        // when a signal ended it
  std::string output;    // the last few KB of its stdout and stderr, together

  // "exit status 1: <output's last line>", "killed by signal 9", "timed out after 30 s".
  std::string Describe() const;
};

// Runs `/bin/sh -c command` in a process group of its own, with stdin from /dev/null
// and stdout and stderr captured. Returns when it exits; when `timeout` passes or
// `should_stop()` (polled every 100 ms) turns true first, the whole group is killed
// (SIGTERM, then SIGKILL after 2 s). Errors are failures to start it at all.
std::expected<CommandOutcome, std::string> RunShellCommand(
    const std::string& command, std::chrono::milliseconds timeout,
    const std::function<bool()>& should_stop);

}  // namespace actex

#endif  // ACTEX_ACTORS_UPLOAD_COMMAND_H_
