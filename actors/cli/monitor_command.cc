// actex monitor ENDPOINT: subscribes to a job's monitor events (a node's PUB, or the
// coordinator's XPUB that re-publishes every host's, and the standby's it names) and
// shows them live. It only ever connects and subscribes, so it can attach to and
// leave a running job at any time.
#include <signal.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "actors/cli/commands.h"
#include "actors/cli/monitor_feed.h"
#include "actors/cli/monitor_heard.h"
#include "actors/cli/monitor_view.h"
#include "base/unix_time.h"
#include "transport/connection_watch.h"
#include "transport/wire.h"

namespace actex {
namespace {

// Exit codes besides 0 (finished, or left with Ctrl-C); 1: an error event, or no stdout.
constexpr int kExitError = 1;
constexpr int kExitCannotConnect = 2;
constexpr int kExitTimedOut = 3;

constexpr auto kPollSlice = std::chrono::milliseconds(100);
constexpr auto kRedrawInterval = std::chrono::seconds(1);
// Skipped messages logged one by one in JSON mode before going quiet.
constexpr int64_t kLoggedSkips = 5;

struct MonitorFlags {
  std::vector<std::string> endpoints;  // the first, then any the user adds
  bool json = false;
  bool exit_when_finished = false;
  double timeout_seconds = 0;     // 0: wait for ever
  double warn_after_seconds = 5;  // --warn-after: silence before saying what was heard
  std::string job_key_file;       // the job's key, when its nodes run with one
};

// The one piece of process-wide state: a signal handler can only reach a flag it finds
// without arguments. std::atomic<bool> is lock-free and constant-initialized here, so
// touching it from the handler is async-signal-safe. Only the handler writes it.
std::atomic<bool>& LeaveRequested() {
  static std::atomic<bool> leave{false};
  static_assert(std::atomic<bool>::is_always_lock_free);
  return leave;
}

void OnLeaveSignal(int) { LeaveRequested().store(true); }

// SIGINT (Ctrl-C) and SIGTERM end the watch cleanly instead of killing the process.
void InstallLeaveHandler() {
  struct sigaction action {};
  action.sa_handler = OnLeaveSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

class Monitor {
 public:
  Monitor(const MonitorFlags& flags, bool table) : flags_(flags), table_(table) {}

  // Until the job finished (--exit-when-finished), --timeout passed in silence, or
  // Ctrl-C; returns the exit code.
  int Run();

 private:
  using Clock = std::chrono::steady_clock;

  // The silence since the last event: past --timeout the monitor gives up (its exit
  // code); past --warn-after it says, once per state, what it heard so far, so a wrong
  // address or a stranger's port is named within seconds instead of a blank wait.
  std::optional<int> WeighSilence();
  // Reads the message queued on the feed: a monitor event is shown (or printed as a
  // JSON line) unless another relay brought it already, anything else skipped. Returns
  // the exit code when the monitor leaves (stdout closed; --exit-when-finished).
  std::optional<int> TakeMessage();
  // Host 0 named the standby's feed: listen there too, to go on after a takeover.
  void FollowStandby(const MonitorEventMessage& event);
  // Counts what the connection events say about the peer.
  void Listen(ConnectionWatch& watch);
  // The line on `seconds` of silence.
  std::string Silence(double seconds, bool waiting) const;
  // Redraws the screen: the header, what the silence means, the table.
  void Draw();
  // Writes `event` as one JSON line to stdout; false when stdout is closed.
  bool PrintJsonLine(const MonitorEventMessage& event);
  // Counts a message that is no monitor event; without the table, logs the first few.
  void Skip(const std::string& reason);
  // Final table (so the screen shows the end state), then why the monitor stopped.
  int Leave(int code, const std::string& why);

  const MonitorFlags& flags_;
  const bool table_;
  zmq::context_t context_{1};
  MonitorFeed feed_{context_};
  MonitorView view_;
  MonitorHeard heard_;
  std::string status_;  // what the silence means, shown above the table
  Clock::time_point last_event_;
  // What the last line said about the silence was about; kEvents: nothing said.
  MonitorHeard::State said_ = MonitorHeard::State::kEvents;
};

int Monitor::Run() {
  // Watched before it connects, or a connection made at once (loopback) goes unseen.
  // Destroyed before the socket, as it must be.
  auto watch = ConnectionWatch::Create(context_, feed_.socket());
  if (!watch) spdlog::warn("{}; silence will not be explained", watch.error());
  if (auto connected = feed_.Connect(flags_.endpoints, flags_.job_key_file); !connected) {
    spdlog::error("{}", connected.error());
    return kExitCannotConnect;
  }
  last_event_ = Clock::now();
  Clock::time_point next_draw = Clock::now();
  while (!LeaveRequested().load()) {
    if (watch) Listen(**watch);
    if (table_ && Clock::now() >= next_draw) {
      Draw();
      next_draw = Clock::now() + kRedrawInterval;
    }
    if (auto left = WeighSilence()) return *left;
    zmq::pollitem_t item{feed_.socket().handle(), 0, ZMQ_POLLIN, 0};
    try {
      if (zmq::poll(&item, 1, kPollSlice) == 0) continue;
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) continue;  // a signal: the loop condition looks at it
      return Leave(kExitCannotConnect, std::string("polling the socket failed: ") + e.what());
    }
    if (auto left = TakeMessage()) return *left;
  }
  return Leave(0, "");
}

std::optional<int> Monitor::WeighSilence() {
  const std::chrono::duration<double> quiet = Clock::now() - last_event_;
  if (flags_.timeout_seconds > 0 && quiet.count() >= flags_.timeout_seconds) {
    return Leave(
        kExitTimedOut,
        fmt::format("no monitor event from {} for {} s, giving up (--timeout): {}", feed_.named(),
                    flags_.timeout_seconds, Silence(quiet.count(), /*waiting=*/false)));
  }
  if (flags_.warn_after_seconds > 0 && quiet.count() >= flags_.warn_after_seconds &&
      heard_.events == 0 && heard_.state() != said_) {
    said_ = heard_.state();
    status_ = Silence(quiet.count(), /*waiting=*/true);
    spdlog::warn("{}", status_);
  }
  return std::nullopt;
}

std::optional<int> Monitor::TakeMessage() {
  // A whole message is queued now, so what Receive refuses is about the message.
  auto message = Receive(feed_.socket());
  auto event = message ? message->As<MonitorEventMessage>()
                       : std::expected<MonitorEventMessage, std::string>(
                             std::unexpected(message.error().message));
  if (!event) {
    Skip(event.error());
    return std::nullopt;
  }
  last_event_ = Clock::now();
  if (!feed_.FirstCopy(*event)) return std::nullopt;
  if (event->kind == kStandbyEventKind) FollowStandby(*event);
  if (heard_.events++ == 0 && said_ != MonitorHeard::State::kEvents) {
    spdlog::info("monitor events arrive from {}", feed_.named());
    status_.clear();
  }
  view_.Apply(*event, UnixSeconds());
  if (!table_ && !PrintJsonLine(*event)) return Leave(kExitError, "stdout is closed");
  if (flags_.exit_when_finished && event->kind == "error") {
    return Leave(kExitError,
                 fmt::format("host {} reported an error: {}", event->host_id, event->message));
  }
  if (flags_.exit_when_finished && view_.AllFinished()) return Leave(0, "");
  return std::nullopt;
}

void Monitor::FollowStandby(const MonitorEventMessage& event) {
  auto followed = feed_.Follow(event.message);
  // Said once per endpoint, and not over the table (whose last lines name the feed).
  if (!followed) spdlog::warn("not following the standby coordinator's feed: {}", followed.error());
  if (followed && *followed && !table_) {
    spdlog::info("following the standby coordinator's feed at {} too", event.message);
  }
}

void Monitor::Listen(ConnectionWatch& watch) {
  for (const ConnectionEvent& event : watch.Drain()) {
    if (event.kind == ConnectionEvent::Kind::kConnected) ++heard_.connections;
    if (event.kind == ConnectionEvent::Kind::kHandshakeFailed) ++heard_.strangers;
  }
}

std::string Monitor::Silence(double seconds, bool waiting) const {
  return heard_.Describe(feed_.named(), seconds, !flags_.job_key_file.empty(), waiting);
}

void Monitor::Draw() {
  // Home the cursor, rewrite every line clearing its tail, then clear what is below:
  // no full-screen clear, so the table does not flicker.
  std::string screen = "\x1b[H\x1b[2K";
  screen += fmt::format("actex monitor {}  (Ctrl-C leaves; the job goes on)\n", feed_.named());
  if (!status_.empty()) screen += "\x1b[2K" + status_ + "\n";
  std::string table = view_.RenderTable(UnixSeconds());
  for (size_t start = 0; start < table.size();) {
    const size_t end = table.find('\n', start);
    screen += "\x1b[2K" + table.substr(start, end - start) + "\n";
    start = end + 1;
  }
  screen += "\x1b[J";
  std::fwrite(screen.data(), 1, screen.size(), stdout);
  std::fflush(stdout);
}

bool Monitor::PrintJsonLine(const MonitorEventMessage& event) {
  const std::string line = MonitorView::JsonLine(event) + '\n';
  std::fwrite(line.data(), 1, line.size(), stdout);
  return std::fflush(stdout) == 0 && !std::ferror(stdout);
}

void Monitor::Skip(const std::string& reason) {
  view_.RecordSkipped(reason);
  ++heard_.skipped;
  // The table shows skips itself; a log line would scribble over it.
  if (table_) return;
  if (view_.skipped() <= kLoggedSkips) spdlog::warn("skipped a message: {}", reason);
  if (view_.skipped() == kLoggedSkips) spdlog::warn("further skipped messages are only counted");
}

int Monitor::Leave(int code, const std::string& why) {
  if (table_) Draw();
  if (view_.skipped() > 0) {
    spdlog::info("skipped {} message(s) that were not monitor events", view_.skipped());
  }
  if (!why.empty()) spdlog::error("{}", why);
  return code;
}

}  // namespace

CommandRunner AddMonitorCommand(CLI::App& command) {
  auto flags = std::make_shared<MonitorFlags>();
  command
      .add_option("ENDPOINT", flags->endpoints,
                  "a node's or the coordinator's event publisher, tcp://HOST:PORT or ipc://PATH; "
                  "several: each event once (host 0's and the standby's, say)")
      ->required()
      ->expected(1, static_cast<int>(MonitorFeed::kMaxFollowed))
      ->check(
          CLI::Validator([](std::string& endpoint) { return MonitorFeed::CheckEndpoint(endpoint); },
                         "", "endpoint"));
  command.add_flag("--json", flags->json,
                   "print every event as one JSON line (also when stdout is not a terminal)");
  command.add_flag("--exit-when-finished", flags->exit_when_finished,
                   "exit 0 once every host seen sent \"finished\" or was lost (the job went on "
                   "without it), 1 at an \"error\" event");
  command
      .add_option("--timeout", flags->timeout_seconds,
                  "exit 3 when no event arrived for this many seconds")
      ->check(CLI::PositiveNumber);
  command
      .add_option("--warn-after", flags->warn_after_seconds,
                  "before any event arrived, say on stderr after this many seconds what was "
                  "heard from ENDPOINT (nothing, a connection but no event, or bytes that are "
                  "not ZeroMQ) and keep waiting; 0: never")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  command
      .add_option("--job-key-file", flags->job_key_file,
                  "the job's key file, when its nodes run with one")
      ->envname("ACTEX_JOB_KEY_FILE");
  command.footer(
      "The job's monitor publisher is host 0's actex node (or actex simulate) at its "
      "--coordinator PORT+1; it names the standby coordinator's, which the monitor follows "
      "too, so it goes on when host 0 is lost. Until its first event the monitor says on "
      "stderr, after --warn-after seconds, whether nothing answers at ENDPOINT, something "
      "that is not ZeroMQ does, or a publisher sends nothing, and keeps waiting.\n"
      "Exit codes: 0 finished or left with Ctrl-C, 1 an error event (with "
      "--exit-when-finished), 2 cannot connect, 3 --timeout passed without an event.");
  return [flags] {
    InstallLeaveHandler();
    const bool table = !flags->json && isatty(STDOUT_FILENO) == 1;
    return Monitor(*flags, table).Run();
  };
}

}  // namespace actex
