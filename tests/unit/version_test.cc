// The version is written once (include/pacer/version.h): the build reads it, the macros and
// pacer::Version() agree with what the build read.
#include "pacer/version.h"

#include <gtest/gtest.h>

#include <string>

namespace pacer {
namespace {

TEST(VersionTest, TheLibraryTheMacrosAndTheBuildAgree) {
  const std::string macros = std::to_string(PACER_VERSION_MAJOR) + "." +
                             std::to_string(PACER_VERSION_MINOR) + "." +
                             std::to_string(PACER_VERSION_PATCH);
  EXPECT_EQ(Version(), macros);
  EXPECT_EQ(Version(), std::string(PACER_PROJECT_VERSION));
}

}  // namespace
}  // namespace pacer
