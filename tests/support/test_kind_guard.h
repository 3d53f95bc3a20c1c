#ifndef ACTEX_TESTS_SUPPORT_TEST_KIND_GUARD_H_
#define ACTEX_TESTS_SUPPORT_TEST_KIND_GUARD_H_

// Keeps `unit` and `parity` tests what their label says (tests/README.md): in one
// process, without tcp sockets or other programs. Every test binary links this; ctest
// runs those cases with ACTEX_TEST_LABEL set, and the binary then forbids the calls
// below before its first test.

#include <expected>
#include <string>

namespace actex::test_support {

// From now on, on every thread of this process and of the children it forks, opening an
// IPv4 or IPv6 socket or starting a program (execve, execveat) ends the process with
// exit code 1 and a message on the test's stderr that names the call and where such a
// test belongs (a child of posix_spawn or popen, which reset signal handlers, dies of
// SIGSYS instead). Forking, threads, inproc and unix sockets stay allowed. Cannot be
// undone. Returns the kernel's refusal (no seccomp filters here) as an error.
std::expected<void, std::string> ForbidCallsOfProcessTests();

}  // namespace actex::test_support

#endif  // ACTEX_TESTS_SUPPORT_TEST_KIND_GUARD_H_
