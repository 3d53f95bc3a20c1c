// LauncherIdsFrom: the host id and count that srun and a Kubernetes Indexed Job give a
// node through its environment.
#include "actors/cli/launcher_env.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace actex {
namespace {

using ::testing::HasSubstr;

// An environment of exactly these variables.
EnvironmentLookup Environment(std::map<std::string, std::string> variables) {
  return [variables = std::move(variables)](const char* name) -> const char* {
    auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  };
}

TEST(LauncherEnv, SrunGivesTheHostIdAndCount) {
  auto ids = LauncherIdsFrom(Environment({{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "4"}}));
  ASSERT_TRUE(ids) << ids.error();
  EXPECT_EQ(ids->host_id, 3);
  EXPECT_EQ(ids->num_hosts, 4);
}

TEST(LauncherEnv, AnIndexedJobGivesTheHostIdButNoCount) {
  auto ids = LauncherIdsFrom(Environment({{"JOB_COMPLETION_INDEX", "2"}}));
  ASSERT_TRUE(ids) << ids.error();
  EXPECT_EQ(ids->host_id, 2);
  EXPECT_EQ(ids->num_hosts, std::nullopt);
}

TEST(LauncherEnv, NoLauncherGivesNothing) {
  auto ids = LauncherIdsFrom(Environment({{"HOSTNAME", "actex-0"}}));
  ASSERT_TRUE(ids) << ids.error();
  EXPECT_EQ(ids->host_id, std::nullopt);
  EXPECT_EQ(ids->num_hosts, std::nullopt);
}

TEST(LauncherEnv, BothLaunchersAgreeingIsFine) {
  auto ids = LauncherIdsFrom(Environment({{"SLURM_PROCID", "1"}, {"JOB_COMPLETION_INDEX", "1"}}));
  ASSERT_TRUE(ids) << ids.error();
  EXPECT_EQ(ids->host_id, 1);
}

TEST(LauncherEnv, LaunchersDisagreeingAreRefused) {
  auto ids = LauncherIdsFrom(Environment({{"SLURM_PROCID", "1"}, {"JOB_COMPLETION_INDEX", "2"}}));
  ASSERT_FALSE(ids);
  EXPECT_THAT(ids.error(), HasSubstr("SLURM_PROCID=1 and JOB_COMPLETION_INDEX=2 disagree"));
  EXPECT_THAT(ids.error(), HasSubstr("--host-id"));
}

TEST(LauncherEnv, AValueThatIsNotACountIsNamed) {
  for (auto [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"JOB_COMPLETION_INDEX", "x1"},
                                                        {"SLURM_PROCID", "-1"},
                                                        {"SLURM_NTASKS", "0"},
                                                        {"JOB_COMPLETION_INDEX", ""}}) {
    auto ids = LauncherIdsFrom(Environment({{name, value}}));
    ASSERT_FALSE(ids) << name << "=" << value;
    EXPECT_THAT(ids.error(), HasSubstr(name + "=\"" + value + "\" is not a whole number"));
  }
}

}  // namespace
}  // namespace actex
