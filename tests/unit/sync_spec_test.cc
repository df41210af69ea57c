// The --sync and --optimizer specs: every form parses, and a wrong field is named.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/optimizer_spec.h"
#include "pacer/error.h"
#include "pacer/sync_mode.h"

namespace pacer {
namespace {

TEST(SyncModeTest, ParsesEveryModeAndRejectsNonsense) {
  for (const char* text : {"bsp", "asp", "ssp:0", "ssp:3", "backup:1", "dynsgd", "consgd",
                           "consgd:0.25", "epsp:0", "epsp:2"}) {
    EXPECT_EQ(SyncMode::Parse(text).ToString(), text);
  }
  EXPECT_EQ(SyncMode::Parse("ssp:3").staleness, 3);
  EXPECT_EQ(SyncMode::Parse("backup:2").backups, 2);
  EXPECT_DOUBLE_EQ(SyncMode::Parse("consgd:0.25").scale, 0.25);
  for (const char* bad : {"", "bs", "ssp", "ssp:", "ssp:-1", "ssp:x", "backup", "bsp:1", "consgd:0",
                          "consgd:-2", "epsp", "epsp:-1"}) {
    EXPECT_THROW(SyncMode::Parse(bad), Error) << bad;
  }
  try {
    SyncMode::Parse("ssp:two");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'two'"), std::string::npos) << e.what();
  }
}

TEST(OptimizerSpecTest, ParsesFieldsAndNamesTheWrongOne) {
  OptimizerSpec sgd = OptimizerSpec::Parse("sgd:lr=0.5,momentum=0.9,nesterov,wd=0.001");
  EXPECT_EQ(sgd.kind, OptimizerSpec::Kind::kSgd);
  EXPECT_FLOAT_EQ(sgd.sgd.lr, 0.5f);
  EXPECT_FLOAT_EQ(sgd.sgd.momentum, 0.9f);
  EXPECT_TRUE(sgd.sgd.nesterov);
  EXPECT_FLOAT_EQ(sgd.sgd.weight_decay, 0.001f);
  OptimizerSpec adamw = OptimizerSpec::Parse("adamw:lr=0.002,beta2=0.99");
  EXPECT_EQ(adamw.kind, OptimizerSpec::Kind::kAdam);
  EXPECT_TRUE(adamw.adam.decoupled_weight_decay);
  EXPECT_FLOAT_EQ(adamw.adam.beta2, 0.99f);
  for (const char* bad : {"sgdx", "sgd:lr", "sgd:lr=abc", "sgd:beta1=0.9", "adam:momentum=0.9",
                          "sgd:nesterov", "sgd:lr=-1", "sgd:lr_steps=", "sgd:lr_steps=5/5",
                          "sgd:lr_steps=9/4", "sgd:lr_steps=-1", "sgd:lr_steps=1/x"}) {
    EXPECT_THROW(OptimizerSpec::Parse(bad), Error) << bad;
  }
}

TEST(OptimizerSpecTest, AStepScheduleScalesTheRateFromEachStepsClock) {
  const OptimizerSpec spec = OptimizerSpec::Parse("adam:lr=0.1,lr_steps=10/20,lr_factor=0.5");
  EXPECT_EQ(spec.lr_steps, (std::vector<int64_t>{10, 20}));
  EXPECT_EQ(spec.LearningRateScale(0), 1.f);
  EXPECT_EQ(spec.LearningRateScale(9), 1.f);
  EXPECT_EQ(spec.LearningRateScale(10), 0.5f);
  EXPECT_EQ(spec.LearningRateScale(19), 0.5f);
  EXPECT_EQ(spec.LearningRateScale(20), 0.25f);
  EXPECT_EQ(OptimizerSpec::Parse("sgd:lr_steps=3").LearningRateScale(3), 0.1f);
}

// The schedule follows the gradient's clock, not the key's update count: under ASP two workers'
// pushes of clock 0 both get the full rate.

}  // namespace
}  // namespace pacer
