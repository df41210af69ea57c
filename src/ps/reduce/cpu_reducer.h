#pragma once

#include <memory>

#include "pacer/reducer.h"
#include "ps/reduce/kernel_table.h"

namespace pacer::reduce {

// The CPU back end with a given kernel table, so tests can run every instruction set this CPU
// has. threads: 0 = one per core.
std::unique_ptr<Reducer> MakeCpuReducer(int threads, const KernelTable& kernels);

// The operand checks both back ends apply; each throws pacer::Error naming the bad operand.
void CheckSumOperands(Span<const ConstArray> inputs, const MutableArray& out, size_t count);
void CheckOptimizerOperands(const char* op, const float* weights, const void* grad,
                            const float* state1, const char* state1_name, const float* state2,
                            const char* state2_name, size_t count);

}  // namespace pacer::reduce
