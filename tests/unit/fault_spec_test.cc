// --inject specs: every documented form parses, bad parts are named, schedules follow their
// definition (with a fixed seed).
#include "common/fault_spec.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace pacer {
namespace {

TEST(FaultSpecTest, ParsesEveryDocumentedForm) {
  FaultSpec a = FaultSpec::Parse("worker:3:compute=3x");
  EXPECT_EQ(a.target, FaultSpec::Target::kWorker);
  EXPECT_EQ(a.node.by, FaultSpec::Node::By::kWorker);
  EXPECT_EQ(a.node.number, 3);
  EXPECT_TRUE(a.Names(FaultSpec::Target::kWorker, 3));
  EXPECT_FALSE(a.Names(FaultSpec::Target::kWorker, 2));
  EXPECT_FALSE(a.Names(FaultSpec::Target::kServer, 3));
  EXPECT_EQ(a.effect, FaultSpec::Effect::kCompute);
  EXPECT_DOUBLE_EQ(a.value, 3);
  EXPECT_EQ(a.schedule, FaultSpec::Schedule::kAlways);

  FaultSpec b = FaultSpec::Parse("worker:*:compute=3x@p=0.1");
  EXPECT_EQ(b.node.by, FaultSpec::Node::By::kAny);
  EXPECT_TRUE(b.Names(FaultSpec::Target::kWorker, 7));
  EXPECT_EQ(b.schedule, FaultSpec::Schedule::kProbability);
  EXPECT_DOUBLE_EQ(b.probability, 0.1);

  FaultSpec c = FaultSpec::Parse("worker:2:compute=3x@period=200:50");
  EXPECT_EQ(c.period, 200);
  EXPECT_EQ(c.slow, 50);

  FaultSpec d = FaultSpec::Parse("link:4->1:bw=100MB/s");
  EXPECT_EQ(d.target, FaultSpec::Target::kLink);
  EXPECT_EQ(d.from.number, 4);
  EXPECT_EQ(d.to.number, 1);
  EXPECT_DOUBLE_EQ(d.value, 100e6);

  FaultSpec e = FaultSpec::Parse("link:w0->*:delay=2ms");
  EXPECT_EQ(e.from.by, FaultSpec::Node::By::kWorker);
  EXPECT_EQ(e.to.by, FaultSpec::Node::By::kAny);
  EXPECT_DOUBLE_EQ(e.value, 0.002);

  FaultSpec f = FaultSpec::Parse("server:1:service=3x@window=60s:60s");
  EXPECT_EQ(f.target, FaultSpec::Target::kServer);
  EXPECT_EQ(f.effect, FaultSpec::Effect::kService);
  EXPECT_DOUBLE_EQ(f.window_start_s, 60);
  EXPECT_DOUBLE_EQ(f.window_length_s, 60);
  EXPECT_DOUBLE_EQ(FaultSpec::Parse("link:s1->2:bw=1.5GiB/s").value, 1.5 * 1073741824.0);
}

TEST(FaultSpecTest, RejectsBadSpecsNamingTheWrongPart) {
  const std::pair<const char*, const char*> bad[] = {
      {"worker:3", "expected TARGET:EFFECT"},
      {"gpu:1:compute=3x", "'gpu' is not a target"},
      {"worker:x:compute=3x", "'x' is not a role index"},
      {"worker:1:compute=3", "'3' is not a multiplier"},
      {"worker:1:compute=0.5x", "at least 1x"},
      {"worker:1:bw=1MB/s", "'bw' is not an effect of a worker"},
      {"server:1:compute=2x", "'compute' is not an effect of a server"},
      {"link:4-1:bw=1MB/s", "'4-1' is not a link"},
      {"link:4->q:bw=1MB/s", "'q' is not a link end"},
      {"link:4->1:bw=100Mb", "'100Mb' is not a rate"},
      {"link:4->1:delay=2", "'2' is not a duration"},
      {"server:0:rate=0MB/s", "a rate must be positive"},
      {"worker:0:rate=1MB/s", "'rate' is not an effect of a worker"},
      {"worker:1:compute=3x@p=2", "'2' is not a probability"},
      {"worker:1:compute=3x@period=50:200", "A <= B"},
      {"worker:1:compute=3x@often", "'often' is not a schedule"},
  };
  for (const auto& [spec, expected] : bad) {
    try {
      FaultSpec::Parse(spec);
      ADD_FAILURE() << spec << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(spec), std::string::npos) << e.what();
    }
  }
}

TEST(FaultSpecTest, SchedulesFollowTheirDefinition) {
  FaultSpec period = FaultSpec::Parse("worker:0:compute=3x@period=200:50");
  int active = 0;
  for (int64_t i = 0; i < 400; ++i) {
    EXPECT_EQ(period.ActiveAt(i, 0, 0, 1), i % 200 >= 150) << i;
    active += period.ActiveAt(i, 0, 0, 1);
  }
  EXPECT_EQ(active, 100);

  FaultSpec window = FaultSpec::Parse("server:1:service=3x@window=60s:30s");
  EXPECT_FALSE(window.ActiveAt(0, 59.9, 1, 1));
  EXPECT_TRUE(window.ActiveAt(0, 60, 1, 1));
  EXPECT_TRUE(window.ActiveAt(0, 89.9, 1, 1));
  EXPECT_FALSE(window.ActiveAt(0, 90, 1, 1));

  FaultSpec transient = FaultSpec::Parse("worker:*:compute=3x@p=0.1");
  int hits = 0;
  for (int64_t i = 0; i < 20000; ++i) hits += transient.ActiveAt(i, 0, 2, 42);
  EXPECT_NEAR(hits / 20000.0, 0.1, 0.006);
  // Reproducible from (seed, node, iteration); other nodes draw independently.
  int same = 0, differ = 0;
  for (int64_t i = 0; i < 2000; ++i) {
    same += transient.ActiveAt(i, 0, 2, 42) == transient.ActiveAt(i, 0, 2, 42);
    differ += transient.ActiveAt(i, 0, 2, 42) != transient.ActiveAt(i, 0, 3, 42);
  }
  EXPECT_EQ(same, 2000);
  EXPECT_GT(differ, 200);  // about 2 x 0.1 x 0.9 x 2000 = 360
}

// A server's emulated rate: the slowest rate spec that applies, divided by the service multipliers
// that apply, and none outside their schedules.
TEST(FaultSpecTest, ServiceRateTakesTheSlowestRateOverTheActiveMultipliers) {
  const std::vector<FaultSpec> faults = {FaultSpec::Parse("server:*:rate=400MB/s"),
                                         FaultSpec::Parse("server:2:rate=100MB/s@window=0s:5s"),
                                         FaultSpec::Parse("server:0:service=3x@window=4s:6s")};
  EXPECT_EQ(faults[0].effect, FaultSpec::Effect::kRate);
  EXPECT_DOUBLE_EQ(ActiveServiceRate(faults, 1, 0, 1), 400e6);
  EXPECT_DOUBLE_EQ(ActiveServiceRate(faults, 2, 1, 1), 100e6);
  EXPECT_DOUBLE_EQ(ActiveServiceRate(faults, 2, 5, 1), 400e6);
  EXPECT_DOUBLE_EQ(ActiveServiceRate(faults, 0, 3.9, 1), 400e6);
  EXPECT_DOUBLE_EQ(ActiveServiceRate(faults, 0, 4, 1), 400e6 / 3);
  EXPECT_DOUBLE_EQ(ActiveServiceRate(faults, 0, 10, 1), 400e6);
  // Without a rate spec a server runs at its own speed, slowed or not.
  EXPECT_DOUBLE_EQ(ActiveServiceRate({faults[2]}, 0, 5, 1), 0);
}

}  // namespace
}  // namespace pacer
