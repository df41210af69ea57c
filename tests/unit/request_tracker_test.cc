#include "worker/request_tracker.h"

#include <gtest/gtest.h>

#include <thread>

#include "pacer/error.h"

namespace pacer {
namespace {

using std::chrono::milliseconds;

TEST(RequestTrackerTest, TimestampsIncrease) {
  RequestTracker tracker(5);
  EXPECT_EQ(tracker.Start(1), 0);
  EXPECT_EQ(tracker.Start(1), 1);
}

TEST(RequestTrackerTest, LastPartIsReportedOnce) {
  RequestTracker tracker(5);
  int ts = tracker.Start(3);
  EXPECT_FALSE(tracker.PartDone(ts, ""));
  EXPECT_FALSE(tracker.PartDone(ts, ""));
  EXPECT_TRUE(tracker.PartDone(ts, ""));
  EXPECT_FALSE(tracker.Wait(ts, milliseconds(10), false));  // not finished until Finish
  tracker.Finish(ts, "");
  EXPECT_TRUE(tracker.Wait(ts, milliseconds(10), false));
}

TEST(RequestTrackerTest, WaitForgetsTheRequest) {
  RequestTracker tracker(5);
  int ts = tracker.Start(1);
  tracker.PartDone(ts, "");
  tracker.Finish(ts, "");
  tracker.Wait(ts, milliseconds(10), true);
  try {
    tracker.Wait(ts, milliseconds(10), true);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "Wait on unknown timestamp 0 on rank 5: it was never returned by this KVWorker, "
                 "or was already waited for");
  }
}

TEST(RequestTrackerTest, FirstErrorIsThrownByWait) {
  RequestTracker tracker(1);
  int ts = tracker.Start(2);
  tracker.PartDone(ts, "first");
  EXPECT_TRUE(tracker.PartDone(ts, "second"));
  EXPECT_EQ(tracker.ErrorOf(ts), "first");
  tracker.Finish(ts, "");
  EXPECT_THROW(
      {
        try {
          tracker.Wait(ts, milliseconds(10), true);
        } catch (const Error& e) {
          EXPECT_STREQ(e.what(), "first");
          throw;
        }
      },
      Error);
}

TEST(RequestTrackerTest, TimeoutThrowsAndAbandons) {
  RequestTracker tracker(3);
  int ts = tracker.Start(2);
  tracker.PartDone(ts, "");
  try {
    tracker.Wait(ts, milliseconds(20), true);
    FAIL() << "expected a timeout";
  } catch (const TimeoutError& e) {
    EXPECT_STREQ(e.what(), "request 0 on rank 3 not finished after 20 ms (1 parts outstanding)");
  }
  EXPECT_FALSE(tracker.PartDone(ts, ""));  // a late part is dropped
}

TEST(RequestTrackerTest, TimeoutWithoutThrowKeepsTheRequest) {
  RequestTracker tracker(3);
  int ts = tracker.Start(1);
  EXPECT_FALSE(tracker.Wait(ts, milliseconds(5), false));
  std::thread finisher([&] {
    std::this_thread::sleep_for(milliseconds(20));
    if (tracker.PartDone(ts, "")) tracker.Finish(ts, "");
  });
  EXPECT_TRUE(tracker.Wait(ts, milliseconds(5000), false));
  finisher.join();
}

}  // namespace
}  // namespace pacer
