// Which ranks serve: packed (ranks 1..S) or spread over hosts (one per host in turn, the lowest
// free rank of each), and the indices that name servers and workers in --inject and the metrics.
#include "ps/cluster/roles.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pacer/error.h"

namespace pacer {
namespace {

std::vector<int> Servers(const Roles& roles) { return roles.server_ranks(); }

TEST(RolesTest, PackGivesRanksOneToServers) {
  const Roles roles({"a", "b", "a", "b", "a", "b"}, 2, Roles::Placement::kPack);
  EXPECT_EQ(Servers(roles), (std::vector<int>{1, 2}));
  EXPECT_EQ(roles.worker_ranks(), (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(Servers(Roles(6, 2)), (std::vector<int>{1, 2}));
}

TEST(RolesTest, SpreadPutsOneServerOnEachHostInTurn) {
  // mpirun --map-by node over 2 hosts: a gets 0, 2, 4; b gets 1, 3, 5. b's lowest rank past the
  // scheduler (1) comes before a's (2).
  const std::vector<std::string> by_node = {"a", "b", "a", "b", "a", "b"};
  EXPECT_EQ(Servers(Roles(by_node, 2, Roles::Placement::kSpread)), (std::vector<int>{1, 2}));
  // --map-by slot: a gets 0..3, b gets 4..7; packing would put both servers on a.
  const std::vector<std::string> by_slot = {"a", "a", "a", "a", "b", "b", "b", "b"};
  EXPECT_EQ(Servers(Roles(by_slot, 2, Roles::Placement::kSpread)), (std::vector<int>{1, 4}));
  EXPECT_EQ(Servers(Roles(by_slot, 2, Roles::Placement::kPack)), (std::vector<int>{1, 2}));
  // More servers than hosts: a second round, each host's next free rank.
  EXPECT_EQ(Servers(Roles(by_slot, 3, Roles::Placement::kSpread)), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(Servers(Roles(by_slot, 4, Roles::Placement::kSpread)), (std::vector<int>{1, 2, 4, 5}));
  // Three hosts, one with a single rank: it is passed over once it has served.
  const std::vector<std::string> uneven = {"a", "a", "b", "c", "c", "c"};
  EXPECT_EQ(Servers(Roles(uneven, 3, Roles::Placement::kSpread)), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(Servers(Roles(uneven, 4, Roles::Placement::kSpread)), (std::vector<int>{1, 2, 3, 4}));
  // A host with only the scheduler serves nothing.
  const std::vector<std::string> scheduler_alone = {"a", "b", "b", "b"};
  EXPECT_EQ(Servers(Roles(scheduler_alone, 2, Roles::Placement::kSpread)),
            (std::vector<int>{1, 2}));
}

TEST(RolesTest, OnOneHostSpreadIsPack) {
  const std::vector<std::string> one(7, "a");
  EXPECT_EQ(Servers(Roles(one, 3, Roles::Placement::kSpread)), (std::vector<int>{1, 2, 3}));
}

TEST(RolesTest, IndicesFollowRankOrderWithinEachRole) {
  const Roles roles({"a", "a", "a", "a", "b", "b", "b", "b"}, 2, Roles::Placement::kSpread);
  EXPECT_EQ(roles.RoleOf(0), Role::kScheduler);
  EXPECT_EQ(roles.num_servers(), 2);
  EXPECT_EQ(roles.num_workers(), 5);
  EXPECT_EQ(roles.worker_ranks(), (std::vector<int>{2, 3, 5, 6, 7}));
  for (int i = 0; i < roles.num_servers(); ++i) {
    EXPECT_EQ(roles.RoleOf(roles.ServerRank(i)), Role::kServer);
    EXPECT_EQ(roles.IndexOf(roles.ServerRank(i)), i);
  }
  for (int i = 0; i < roles.num_workers(); ++i) {
    EXPECT_EQ(roles.RoleOf(roles.WorkerRank(i)), Role::kWorker);
    EXPECT_EQ(roles.IndexOf(roles.WorkerRank(i)), i);
  }
}

TEST(RolesTest, BadCountsAndPlacementsAreNamed) {
  try {
    Roles({"a", "b", "a"}, 2, Roles::Placement::kSpread);
    FAIL() << "a job of 3 ranks with 2 servers has no worker";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "a job of 3 ranks cannot have 2 servers: it needs 1 scheduler, at least 1 server "
                 "and at least 1 worker (--servers, PACER_SERVERS)");
  }
  try {
    Roles::PlacementNamed("round-robin");
    FAIL() << "an unknown placement";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--server_placement=round-robin: expected spread or pack");
  }
}

}  // namespace
}  // namespace pacer
