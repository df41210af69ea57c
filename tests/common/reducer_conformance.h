#pragma once

// The tests every Reducer back end must pass, written once against the interface: the CPU back end
// (each instruction set, one and several threads) and the CUDA back end instantiate them.

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "pacer/reducer.h"

namespace pacer::testing {

struct ReducerCase {
  std::string name;
  // Returns nullptr with *skip_reason set where the back end cannot run here.
  std::function<std::unique_ptr<Reducer>(std::string* skip_reason)> make;
};

inline void PrintTo(const ReducerCase& c, std::ostream* os) { *os << c.name; }

class ReducerConformance : public ::testing::TestWithParam<ReducerCase> {
 protected:
  void SetUp() override;
  std::unique_ptr<Reducer> reducer_;
};

std::string ReducerCaseName(const ::testing::TestParamInfo<ReducerCase>& info);

}  // namespace pacer::testing
