// The upload command: its template, and running it with a timeout and a stop.
#include "actors/upload_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "extraction_reader.h"
#include "tests/support/test_files.h"

namespace actex {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

TEST(UploadTemplate, NeedsPathAndKnowsOnlyItsThreePlaceholders) {
  EXPECT_TRUE(CheckUploadTemplate("gsutil cp {path} gs://b/p/{host_dir}/{name}").has_value());
  auto no_path = CheckUploadTemplate("gsutil cp x gs://b/{name}");
  ASSERT_FALSE(no_path.has_value());
  EXPECT_THAT(no_path.error(), HasSubstr("no {path}"));
  auto typo = CheckUploadTemplate("cp {path} /r/{hostdir}/{name}");
  ASSERT_FALSE(typo.has_value());
  EXPECT_THAT(typo.error(), HasSubstr("{hostdir}"));
  // Shell syntax that merely uses braces is the shell's business.
  EXPECT_TRUE(CheckUploadTemplate("cp {path} \"${BUCKET}\"/{name} && echo {a,b}").has_value());
}

TEST(UploadTemplate, QuotesEachValueSoPathsStayOneWord) {
  EXPECT_EQ(
      ExpandUploadTemplate("cp {path} r/{host_dir}/{name}", "/o/it's here/s.st", "s.st", "host_00"),
      "cp '/o/it'\\''s here/s.st' r/'host_00'/'s.st'");
  // The quoted value really reaches the command as one argument.
  TempDir dir;
  const std::string odd = dir.Write("it's a file", "contents");
  auto outcome = RunShellCommand(
      ExpandUploadTemplate("cp {path} " + dir.path() + "/copy", odd, "n", "h"), seconds(10), {});
  ASSERT_TRUE(outcome.has_value()) << outcome.error();
  EXPECT_TRUE(outcome->succeeded) << outcome->Describe();
  std::ifstream copy(dir.path() + "/copy");
  std::string text;
  std::getline(copy, text);
  EXPECT_EQ(text, "contents");
}

TEST(ShellCommand, ReportsExitStatusAndTheLastLineItPrinted) {
  auto outcome =
      RunShellCommand("echo progress; echo 'AccessDenied: bucket' >&2; exit 3", seconds(10), {});
  ASSERT_TRUE(outcome.has_value()) << outcome.error();
  EXPECT_FALSE(outcome->succeeded);
  EXPECT_EQ(outcome->exit_code, 3);
  EXPECT_EQ(outcome->Describe(), "exit status 3: AccessDenied: bucket");

  auto fine = RunShellCommand("true", seconds(10), {});
  ASSERT_TRUE(fine.has_value());
  EXPECT_TRUE(fine->succeeded);
  EXPECT_EQ(fine->exit_code, 0);
}

TEST(ShellCommand, TimeoutKillsTheWholeProcessGroup) {
  TempDir dir;
  const std::string marker = dir.path() + "/survivor";
  const Clock::time_point start = Clock::now();
  // A child in the background would outlive a kill of the shell alone.
  auto outcome =
      RunShellCommand("(sleep 3; touch " + marker + ") & sleep 30", milliseconds(300), {});
  ASSERT_TRUE(outcome.has_value()) << outcome.error();
  EXPECT_TRUE(outcome->timed_out);
  EXPECT_FALSE(outcome->succeeded);
  EXPECT_THAT(outcome->Describe(), HasSubstr("timed out"));
  EXPECT_LT(Clock::now() - start, seconds(3));
  std::this_thread::sleep_for(milliseconds(3500));
  EXPECT_FALSE(std::ifstream(marker).good()) << "a child of the command outlived the timeout";
}

TEST(ShellCommand, StopRequestKillsARunningCommand) {
  std::atomic<bool> stop = false;
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(200));
    stop = true;
  });
  const Clock::time_point start = Clock::now();
  auto outcome = RunShellCommand("sleep 30", seconds(60), [&] { return stop.load(); });
  stopper.join();
  ASSERT_TRUE(outcome.has_value()) << outcome.error();
  EXPECT_TRUE(outcome->stopped);
  EXPECT_FALSE(outcome->succeeded);
  EXPECT_LT(Clock::now() - start, seconds(5));
}

TEST(ShellCommand, CommandThatLeavesABackgroundChildStillEndsWhenTheShellExits) {
  const Clock::time_point start = Clock::now();
  auto outcome = RunShellCommand("sleep 5 & echo started", seconds(30), {});
  ASSERT_TRUE(outcome.has_value()) << outcome.error();
  EXPECT_TRUE(outcome->succeeded) << outcome->Describe();
  EXPECT_LT(Clock::now() - start, seconds(4));
}

}  // namespace
}  // namespace actex
