// The guard that keeps `unit` and `parity` tests in one process, each check in a
// forked child (a death test) that forbids the calls itself, so it runs with or without
// ctest's ACTEX_TEST_LABEL.
#include "tests/support/test_kind_guard.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

namespace actex::test_support {
namespace {

// Forbids the calls or leaves the child with exit code 2 saying why.
void Forbid() {
  auto forbidden = ForbidCallsOfProcessTests();
  if (!forbidden) {
    std::fprintf(stderr, "%s\n", forbidden.error().c_str());
    _exit(2);
  }
}

TEST(TestKindGuard, ATcpSocketEndsTheTestSayingWhereItBelongs) {
  EXPECT_EXIT(
      {
        Forbid();
        socket(AF_INET, SOCK_STREAM, 0);
        _exit(0);
      },
      ::testing::ExitedWithCode(1), "opened a tcp socket.*only `process` tests");
  EXPECT_EXIT(
      {
        Forbid();
        socket(AF_INET6, SOCK_DGRAM, 0);
        _exit(0);
      },
      ::testing::ExitedWithCode(1), "opened a tcp socket");
}

TEST(TestKindGuard, StartingAProgramEndsTheTestSayingWhereItBelongs) {
  EXPECT_EXIT(
      {
        Forbid();
        execl("/bin/true", "true", static_cast<char*>(nullptr));
        _exit(0);
      },
      ::testing::ExitedWithCode(1), "started a program.*only `process` tests");
}

TEST(TestKindGuard, ForksThreadsAndUnixSocketsStayAllowed) {
  EXPECT_EXIT(
      {
        Forbid();
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) _exit(3);
        const pid_t child = fork();
        if (child == 0) _exit(0);
        int status = 0;
        if (child < 0 || waitpid(child, &status, 0) != child || status != 0) _exit(4);
        std::thread([] {}).join();
        _exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace actex::test_support
