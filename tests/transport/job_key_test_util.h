#ifndef ACTEX_TESTS_TRANSPORT_JOB_KEY_TEST_UTIL_H_
#define ACTEX_TESTS_TRANSPORT_JOB_KEY_TEST_UTIL_H_

// Job keys for tests of what runs CURVE: a key file in a fresh directory, the
// context's authenticator, a plain DEALER for strangers.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "transport/actor.h"
#include "transport/job_security.h"

namespace actex::job_key_test {

// A fresh directory under /tmp, removed with everything in it.
class KeyDir {
 public:
  KeyDir() {
    char pattern[] = "/tmp/actex-job-security-XXXXXX";
    const char* made = ::mkdtemp(pattern);
    EXPECT_NE(made, nullptr);
    path_ = made ? made : "/tmp";
  }
  ~KeyDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  // Writes `text` to `name` with `mode` and returns its path.
  std::string Write(const std::string& name, const std::string& text, mode_t mode = 0600) const {
    const std::string path = File(name);
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }

 private:
  std::string path_;
};

std::shared_ptr<const JobSecurity> NewKey(const KeyDir& dir, const std::string& name) {
  const std::string path = dir.File(name);
  auto written = JobSecurity::WriteNewKeyFile(path);
  EXPECT_TRUE(written.has_value()) << written.error();
  auto security = JobSecurity::FromKeyFile(path);
  EXPECT_TRUE(security.has_value()) << security.error();
  return security.value_or(nullptr);
}

std::unique_ptr<Actor> StartAuthenticator(const JobSecurity& security, zmq::context_t& context) {
  auto authenticator = security.StartAuthenticator(context);
  EXPECT_TRUE(authenticator.has_value()) << authenticator.error();
  return authenticator ? std::move(*authenticator) : nullptr;
}

zmq::socket_t Dealer(zmq::context_t& context) {
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  return dealer;
}

}  // namespace actex::job_key_test

#endif  // ACTEX_TESTS_TRANSPORT_JOB_KEY_TEST_UTIL_H_
