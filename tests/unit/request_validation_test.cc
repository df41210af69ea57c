#include "ps/messages/request_validation.h"

#include <gtest/gtest.h>

#include <vector>

namespace pacer {
namespace {

std::string Check(std::vector<Key> keys, std::vector<int32_t> lens, size_t values,
                  bool has_values = true) {
  return ValidateKeyValues(keys.data(), keys.size(), lens.data(), lens.size(), values, has_values);
}

TEST(RequestValidationTest, AcceptsWellFormedRequests) {
  EXPECT_EQ(Check({1, 2, 5}, {}, 6), "");
  EXPECT_EQ(Check({1, 2, 5}, {1, 0, 4}, 5), "");
  EXPECT_EQ(Check({1, 2, 5}, {}, 0, /*has_values=*/false), "");
}

TEST(RequestValidationTest, RejectsNoKeys) { EXPECT_EQ(Check({}, {}, 0), "no keys"); }

TEST(RequestValidationTest, RejectsUnsortedKeys) {
  EXPECT_EQ(Check({1, 9, 5}, {}, 3), "keys not sorted: key 5 at position 2 follows key 9");
}

TEST(RequestValidationTest, RejectsDuplicateKeys) {
  EXPECT_EQ(Check({1, 5, 5}, {}, 3), "duplicate key 5 at positions 1 and 2");
}

TEST(RequestValidationTest, RejectsValuesNotSplittableOverKeys) {
  EXPECT_EQ(Check({1, 2}, {}, 3),
            "3 values for 2 keys: without lengths every key needs the same number of values");
}

TEST(RequestValidationTest, RejectsLengthCountMismatch) {
  EXPECT_EQ(Check({1, 2, 3}, {1, 2}, 3), "2 lengths for 3 keys");
}

TEST(RequestValidationTest, RejectsLengthSumMismatch) {
  EXPECT_EQ(Check({1, 2}, {2, 2}, 5), "lengths add up to 4 values, but 5 were given for 2 keys");
}

TEST(RequestValidationTest, RejectsNegativeLength) {
  EXPECT_EQ(Check({1, 2}, {-1, 6}, 5), "negative length -1 for key 1");
}

TEST(RequestValidationTest, RejectsPullWithLengths) {
  EXPECT_EQ(Check({1, 2}, {1, 1}, 0, /*has_values=*/false), "a pull carries 2 lengths");
}

}  // namespace
}  // namespace pacer
