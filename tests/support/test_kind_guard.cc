#include "tests/support/test_kind_guard.h"

#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace actex::test_support {
namespace {

constexpr char kSocketMessage[] =
    "\ntest kind guard: this test opened a tcp socket (socket(AF_INET or AF_INET6)), which "
    "only `process` tests may do: move it to its folder's *_process_test binary or say "
    "OverTcp in its name (tests/README.md)\n";
constexpr char kProgramMessage[] =
    "\ntest kind guard: this test started a program (execve), which only `process` tests "
    "may do: move it to its folder's *_process_test binary (tests/README.md)\n";

// The test's stderr, kept at this descriptor when the guard is installed: a forbidden
// call is most often made by a child the test forked to start a program, whose stderr
// the test reads into a string, not onto the log.
constexpr int kTestStderr = 1021;

// Runs on the thread that made a forbidden call: says which, and ends the process
// (only async-signal-safe calls here).
void OnForbiddenCall(int, siginfo_t* info, void*) {
  const bool socket_call = info->si_syscall == __NR_socket;
  const char* message = socket_call ? kSocketMessage : kProgramMessage;
  const size_t length = socket_call ? sizeof(kSocketMessage) - 1 : sizeof(kProgramMessage) - 1;
  if (write(kTestStderr, message, length) < 0) {
    [[maybe_unused]] ssize_t written = write(STDERR_FILENO, message, length);
  }
  _exit(1);
}

// Ends the process's tests before the first one when ctest gave this case a label
// that keeps it in one process.
class TestKindGuard : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* label = std::getenv("ACTEX_TEST_LABEL");
    if (label == nullptr) return;  // run by hand, or a `process` case
    auto forbidden = ForbidCallsOfProcessTests();
    if (!forbidden) FAIL() << "a `" << label << "` test cannot be guarded: " << forbidden.error();
    // A program started by posix_spawn or popen dies of SIGSYS before it can say why
    // (they reset the handler), so every log says what the case may not do.
    std::fprintf(stderr,
                 "test kind guard: a `%s` case, so opening a tcp socket or starting a program "
                 "ends it (a program so started dies of SIGSYS); see tests/README.md\n",
                 label);
  }
};

[[maybe_unused]] ::testing::Environment* const kGuard =
    ::testing::AddGlobalTestEnvironment(new TestKindGuard);

}  // namespace

std::expected<void, std::string> ForbidCallsOfProcessTests() {
#if defined(__x86_64__)
  if (dup2(STDERR_FILENO, kTestStderr) < 0) {
    return std::unexpected(std::string("dup2(stderr): ") + std::strerror(errno));
  }
  struct sigaction action {};
  action.sa_sigaction = OnForbiddenCall;
  action.sa_flags = SA_SIGINFO;
  if (sigaction(SIGSYS, &action, nullptr) != 0) {
    return std::unexpected(std::string("sigaction(SIGSYS): ") + std::strerror(errno));
  }
  // Jump offsets count the instructions skipped: 11 is the trap, 10 the allow.
  sock_filter filter[] = {
      /* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      /* 2 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      /* 3 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      /* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execve, 6, 0),
      /* 5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_execveat, 5, 0),
      /* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 3),
      /* 7 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])),
      /* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET, 2, 0),
      /* 9 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_INET6, 1, 0),
      /* 10 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      /* 11 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
  };
  sock_fprog program{.len = static_cast<unsigned short>(std::size(filter)), .filter = filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return std::unexpected(std::string("prctl(PR_SET_NO_NEW_PRIVS): ") + std::strerror(errno));
  }
  // TSYNC: the threads libraries started before main (OpenBLAS's) are guarded too.
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &program) != 0) {
    return std::unexpected(std::string("seccomp(SECCOMP_SET_MODE_FILTER): ") +
                           std::strerror(errno));
  }
  return {};
#else
  return std::unexpected(std::string("the guard's filter is written for x86-64 only"));
#endif
}

}  // namespace actex::test_support
