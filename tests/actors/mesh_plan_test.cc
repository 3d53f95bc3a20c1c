#include "actors/mesh_plan.h"

#include <gtest/gtest.h>

#include <set>

#include "actors/host_layout.h"

namespace actex {
namespace {

TEST(MeshPlan, OneDimensionalMeshIsOneReplicaOverEveryShard) {
  auto mesh = PlanMesh("1d", 3, 2, 0, 1, 1);
  ASSERT_TRUE(mesh) << mesh.error();
  EXPECT_EQ(mesh->data, 1);
  EXPECT_EQ(mesh->model, 6);
  EXPECT_EQ(mesh->WriterHost(0), 0);
  EXPECT_EQ(mesh->ReplicasOnHost(2), std::vector<int>{0});
}

TEST(MeshPlan, TwoDimensionalMeshIsOneReplicaPerHost) {
  auto mesh = PlanMesh("2d", 3, 2, 0, 1, 1);
  ASSERT_TRUE(mesh) << mesh.error();
  EXPECT_EQ(mesh->data, 3);
  EXPECT_EQ(mesh->model, 2);
  for (int host = 0; host < 3; ++host) {
    EXPECT_EQ(mesh->WriterHost(host), host);
    EXPECT_EQ(mesh->ReplicasOnHost(host), std::vector<int>{host});
  }
}

TEST(MeshPlan, ExplicitShapeMayLetAReplicaStraddleHosts) {
  auto mesh = PlanMesh("data=2,model=3", 3, 2, 0, 1, 1);
  ASSERT_TRUE(mesh) << mesh.error();
  EXPECT_EQ(mesh->ReplicasOnHost(1), (std::vector<int>{0, 1}));  // shards 2 and 3
  EXPECT_EQ(mesh->WriterHost(1), 1);
  EXPECT_EQ(mesh->WriterHost(0), 0);
}

TEST(MeshPlan, DocumentsOwnedCountsWhatOwnsDocumentTakes) {
  for (int64_t chunk_docs : {1, 3, 128}) {
    for (int machine = 0; machine < 3; ++machine) {
      auto mesh = PlanMesh("2d", 2, 1, machine, 3, chunk_docs);
      ASSERT_TRUE(mesh.has_value()) << mesh.error();
      for (int64_t documents : {0, 1, 5, 6, 7, 100, 1001, 2000}) {
        int64_t counted = 0;
        for (int64_t doc = 0; doc < documents; ++doc) counted += mesh->OwnsDocument(doc);
        EXPECT_EQ(mesh->DocumentsOwned(documents), counted)
            << "chunks of " << chunk_docs << ", machine " << machine << " of " << documents;
      }
    }
  }
}

// Machines split the corpus by chunk number alone, whatever their meshes.
TEST(MeshPlan, EveryDocumentBelongsToExactlyOneMachineWholeChunkByWholeChunk) {
  std::vector<MeshPlan> machines = {*PlanMesh("2d", 2, 1, 0, 3, 5), *PlanMesh("1d", 3, 1, 1, 3, 5),
                                    *PlanMesh("2d", 1, 1, 2, 3, 5)};
  for (int64_t doc = 0; doc < 600; ++doc) {
    int owners = 0;
    for (int machine = 0; machine < 3; ++machine) {
      if (machines[machine].OwnsDocument(doc)) {
        ++owners;
        EXPECT_EQ(machine, doc / 5 % 3) << doc;
      }
    }
    EXPECT_EQ(owners, 1) << doc;
  }
  EXPECT_EQ(machines[1].HostFolder(0), "machine_001_host_00");
  EXPECT_FALSE(PlanMesh("2d", 3, 1, 0, 1, 0)) << "chunks of no document";
}

// A replica's writer host asks for its chunks; its other hosts read copies of those
// grants. A host may follow one replica and lead another, or follow two.
TEST(MeshPlan, TheOtherHostsOfAReplicaFollowItsWriterHost) {
  auto followers = [](const std::string& mesh, int hosts, int shards_per_host) {
    auto plan = PlanMesh(mesh, hosts, shards_per_host, 0, 1, 1);
    EXPECT_TRUE(plan) << plan.error();
    return plan ? plan->LeaseFollowers() : std::map<int, std::vector<int>>{};
  };
  using Followers = std::map<int, std::vector<int>>;
  EXPECT_EQ(followers("2d", 3, 2), Followers{});
  EXPECT_EQ(followers("1d", 3, 1), (Followers{{0, {1, 2}}}));
  EXPECT_EQ(followers("data=2,model=2", 4, 1), (Followers{{0, {1}}, {2, {3}}}));
  // Host 1 holds replica 0's rank 2 and writes replica 1.
  EXPECT_EQ(followers("data=2,model=3", 3, 2), (Followers{{0, {1}}, {1, {2}}}));
  // Host 3 holds replica 1's rank 4 and writes replica 2; host 1 follows replica 0's
  // writer and writes replica 1, which host 2 holds whole ranks of.
  EXPECT_EQ(followers("data=3,model=5", 5, 3), (Followers{{0, {1}}, {1, {2, 3}}, {3, {4}}}));
  EXPECT_EQ(followers("1d", 1, 2), Followers{}) << "a job of one host leases nothing";
}

TEST(MeshPlan, RefusesShapesThatDoNotFitNamingTheFlag) {
  for (const char* shape : {"3d", "data=2,model=2", "data=0,model=6", "data=6,model=1"}) {
    auto mesh = PlanMesh(shape, 3, 2, 0, 1, 1);
    ASSERT_FALSE(mesh) << shape;
    EXPECT_NE(mesh.error().find("--mesh"), std::string::npos) << mesh.error();
  }
  EXPECT_FALSE(PlanMesh("1d", 2, 1, 2, 2, 1));
}

TEST(HostLayout, RingIngressIsInprocInsideAHostAndTcpAcrossHosts) {
  auto mesh = PlanMesh("data=2,model=3", 3, 2, 0, 1, 1);
  HostLayout host1(*mesh, 1, "127.0.0.1");
  ASSERT_EQ(host1.shards().size(), 2u);
  // Shard 2 is replica 0 rank 2, fed by rank 1 on host 0: tcp.
  EXPECT_EQ(host1.shards()[0].ingress, "tcp://127.0.0.1:*");
  // Shard 3 is replica 1 rank 0, fed by rank 2 (shard 5) on host 2: tcp.
  EXPECT_EQ(host1.shards()[1].ingress, "tcp://127.0.0.1:*");
  EXPECT_EQ(host1.written_replica(), 1);
  HostLayout host2(*mesh, 2, "127.0.0.1");
  // Shard 5 is replica 1 rank 2, fed by rank 1 (shard 4) on the same host: inproc.
  EXPECT_TRUE(host2.shards()[1].ingress.starts_with("inproc://"));
  EXPECT_EQ(host2.written_replica(), -1);
}

TEST(HostLayout, FinalTableTakesLocalBindsAndAnnouncedPeers) {
  auto mesh = PlanMesh("1d", 2, 2, 0, 1, 1);
  HostLayout host0(*mesh, 0, "127.0.0.1");
  std::map<std::string, std::string> bound = {{HostLayout::RingKey(0, 0), "tcp://127.0.0.1:5000"},
                                              {HostLayout::RingKey(0, 1), "inproc://ring/0/1"}};
  std::map<std::string, std::string> announced = {
      {HostLayout::RingKey(0, 0), "tcp://127.0.0.1:5000"},
      {HostLayout::RingKey(0, 2), "tcp://127.0.0.1:6000"}};
  auto table = host0.FinalEndpoints(0, bound, announced);
  EXPECT_EQ(table, (std::vector<std::string>{"tcp://127.0.0.1:5000", "inproc://ring/0/1",
                                             "tcp://127.0.0.1:6000", "inproc://ring/0/3"}));
}

}  // namespace
// Hosts that share a replica stop together; chains of shared hosts make one group.
TEST(MeshPlan, HostsSharingAReplicaFormAStopGroup) {
  auto groups = [](const std::string& mesh, int hosts, int shards_per_host) {
    auto plan = PlanMesh(mesh, hosts, shards_per_host, 0, 1, 1);
    EXPECT_TRUE(plan) << plan.error();
    return plan ? plan->StopGroups() : std::vector<int>{};
  };
  EXPECT_EQ(groups("2d", 3, 2), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(groups("1d", 3, 1), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(groups("data=2,model=2", 4, 1), (std::vector<int>{0, 0, 1, 1}));
  // Host 1 holds ranks of both replicas, so all three hosts stop together.
  EXPECT_EQ(groups("data=2,model=3", 3, 2), (std::vector<int>{0, 0, 0}));
}

// The standby coordinator runs on the first host that host 0's loss leaves running,
// in leased jobs of three hosts or more.
TEST(MeshPlan, TheStandbyIsTheFirstHostOutsideHost0sStopGroup) {
  auto standby = [](const std::string& mesh, int hosts, int shards_per_host) {
    auto plan = PlanMesh(mesh, hosts, shards_per_host, 0, 1, 1);
    EXPECT_TRUE(plan) << plan.error();
    return plan ? plan->StandbyHost() : -2;
  };
  EXPECT_EQ(standby("2d", 4, 1), 1);
  EXPECT_EQ(standby("2d", 3, 2), 1);
  EXPECT_EQ(standby("data=2,model=2", 4, 1), 2);
  EXPECT_EQ(standby("2d", 2, 1), -1) << "one host left cannot tell a loss from a split";
  EXPECT_EQ(standby("1d", 3, 1), -1) << "every host stops with host 0";
  EXPECT_EQ(standby("data=2,model=3", 3, 2), -1) << "every host stops with host 0";
  EXPECT_EQ(standby("data=4,model=3", 6, 2), 3);
}

}  // namespace actex
