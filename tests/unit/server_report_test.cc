// What servers report to the scheduler: with an emulated capacity (--inject=server:*:rate=RATE)
// the service time is exactly the work over the rate; with --balance=sas, the bytes pushed to
// each key range come along.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "../common/in_process_job.h"
#include "pacer/gradient_sync.h"
#include "ps/messages/telemetry.h"
#include "ps/node/node.h"
#include "ps/routing/router.h"
#include "server/range_load_counter.h"
#include "session/node_of.h"

namespace pacer {
namespace {

struct Totals {
  double service_s = 0;
  int64_t bytes_in = 0;
  std::vector<int64_t> range_bytes;
  int reports = 0;
};

// One worker pushes a 1 MB key (one request per push) `iterations` times after registering it;
// returns what the one server reported in all.
Totals TrainAndCollect(const Config& config, int iterations) {
  constexpr size_t kFloats = 1 << 18;
  constexpr int64_t kInitialPushes = 1;  // GradientSync registers a tensor by pushing its values
  std::mutex mu;
  Totals totals;
  testing::RunInProcessJob(1, 1, config, [&](Session& session) {
    if (session.is_server()) return testing::ServeUntilBarriers(session);
    if (!session.is_worker()) {
      // In place of the scheduler's own intake of server reports.
      NodeOf(session).dispatcher().Take(proto::SERVER_REPORT, [&](Message&& msg) {
        ServerReport r;
        std::string error;
        ASSERT_TRUE(DecodeReport(msg.vals_buffer(), &r, &error)) << error;
        std::lock_guard<std::mutex> lock(mu);
        totals.service_s += r.service_s;
        totals.bytes_in += r.bytes_in;
        totals.range_bytes.resize(r.range_bytes.size());
        for (size_t i = 0; i < r.range_bytes.size(); ++i) totals.range_bytes[i] += r.range_bytes[i];
        ++totals.reports;
      });
      session.Barrier(kSchedulerGroup | kWorkerGroup);  // the worker is done
      // Its last requests are reported within a report interval or two.
      const int64_t expected = (iterations + kInitialPushes) * int64_t{kFloats * sizeof(float)};
      for (int i = 0; i < 100; ++i) {
        {
          std::lock_guard<std::mutex> lock(mu);
          if (totals.bytes_in >= expected) break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      session.Barrier(kAllNodes);
      return;
    }
    std::vector<float> w(kFloats, 1.f), grad(kFloats, 1.f);
    GradientSync sync(session);
    sync.Register("w", w.data(), w.size());
    for (int i = 0; i < iterations; ++i) {
      sync.BeginIteration(1);
      sync.PushPull("w", grad.data(), w.data());
      sync.EndIteration();
    }
    session.Barrier(kSchedulerGroup | kWorkerGroup);
    session.Barrier(kAllNodes);
  });
  return totals;
}

TEST(ServerReportTest, AnEmulatedRateMakesServiceTimeTheWorkOverTheRate) {
  Config config;
  config.inject = {"server:*:rate=100MB/s"};
  config.server_report_ms = 20;
  const Totals totals = TrainAndCollect(config, 3);
  ASSERT_GT(totals.reports, 0);
  EXPECT_GE(totals.bytes_in, 4 << 20);
  EXPECT_NEAR(totals.service_s, static_cast<double>(totals.bytes_in) / 100e6, 1e-6);
  EXPECT_TRUE(totals.range_bytes.empty()) << "ranges are counted only for --balance=sas";
}

TEST(ServerReportTest, UnderSasServersReportTheBytesPushedToEachRange) {
  Config config;
  config.balance = "sas";
  config.server_report_ms = 20;
  const Totals totals = TrainAndCollect(config, 3);
  const Router table(1);
  ASSERT_EQ(totals.range_bytes.size(), static_cast<size_t>(table.num_ranges()));
  // Key 0, the tensor's only key: its initial values and three gradients, 1 MB each.
  EXPECT_EQ(totals.range_bytes[table.RangeOf(0)], 4 << 20);
  EXPECT_EQ(std::accumulate(totals.range_bytes.begin(), totals.range_bytes.end(), int64_t{0}),
            4 << 20);
}

// Both ways of counting (per key for few keys, per range for many) give each range its bytes.
TEST(ServerReportTest, RangeLoadCountsEveryPushedByteOnItsRange) {
  const Router table(2);
  RangeLoadCounter counter(table.num_ranges());
  std::vector<int64_t> expected(table.num_ranges(), 0);
  std::vector<Key> few = {0, 1, 2};
  const std::vector<int32_t> lens = {1, 2, 3};  // values of 4 bytes
  counter.AddPush(table, few.data(), few.size(), lens.data(), 4, 24);
  for (size_t i = 0; i < few.size(); ++i) expected[table.RangeOf(few[i])] += 4 * lens[i];
  std::vector<Key> many(1000);
  std::iota(many.begin(), many.end(), 0);
  counter.AddPush(table, many.data(), many.size(), nullptr, 4, 8000);  // 8 bytes a key
  for (Key key : many) expected[table.RangeOf(key)] += 8;
  EXPECT_EQ(counter.Take(), expected);
  EXPECT_EQ(counter.Take(), std::vector<int64_t>(table.num_ranges(), 0)) << "taken";
}

TEST(ServerReportTest, TravelsAsBytesAndMalformedOnesAreRefused) {
  ServerReport report;
  report.service_s = 0.25;
  report.bytes_in = 1 << 20;
  report.keys = 3;
  report.range_bytes = {0, 7, 1 << 20};
  ServerReport decoded;
  std::string error;
  ASSERT_TRUE(DecodeReport(EncodeReport(report), &decoded, &error)) << error;
  EXPECT_EQ(decoded.service_s, 0.25);
  EXPECT_EQ(decoded.bytes_in, 1 << 20);
  EXPECT_EQ(decoded.keys, 3);
  EXPECT_EQ(decoded.range_bytes, report.range_bytes);

  const Buffer bytes = EncodeReport(report);
  EXPECT_FALSE(DecodeReport(bytes.Slice(0, bytes.size() - 3), &decoded, &error));
  EXPECT_EQ(error, "a server's report of " + std::to_string(bytes.size() - 3) +
                       " bytes, expected " + std::to_string(sizeof(ServerTotals)) +
                       " and 8 per key range");
}

}  // namespace
}  // namespace pacer
