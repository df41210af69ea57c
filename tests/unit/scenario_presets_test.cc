// The apps' --policy (apps/common/scenario_presets.h): policies joined by '+', a groups mode's own
// '+' kept whole, and an unknown part named.
#include "scenario_presets.h"

#include <gtest/gtest.h>
#include <pacer/config.h>

#include <stdexcept>
#include <string>

namespace pacer {
namespace bench {
namespace {

Config Applied(const std::string& policy) {
  Config config;
  ApplyPolicy(policy, &config);
  return config;
}

TEST(ApplyPolicyTest, JoinsPoliciesAndKeepsAGroupsModeWhole) {
  EXPECT_EQ(Applied("sms+epsp:0").sync, "epsp:0");
  EXPECT_EQ(Applied("sms+epsp:0").predicted_policy, "sms");
  EXPECT_EQ(Applied("groups:100000:0/1+2+3").sync, "groups:100000:0/1+2+3");
  const Config both = Applied("groups:2:0+1/2+3+sas");
  EXPECT_EQ(both.sync, "groups:2:0+1/2+3");
  EXPECT_EQ(both.balance, "sas");
  EXPECT_EQ(Applied("stret+groups:2:0+2/1+3").sync, "groups:2:0+2/1+3");
  EXPECT_EQ(Applied("stret+groups:2:0+2/1+3").comm_policy, "stret");
}

TEST(ApplyPolicyTest, AnUnknownPartIsNamed) {
  try {
    Applied("sas+2");
    FAIL() << "sas+2 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--policy=sas+2: '2' is not sas, stret, sms"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(Applied("groups:2:0+1/2+x"), std::invalid_argument);
}

}  // namespace
}  // namespace bench
}  // namespace pacer
