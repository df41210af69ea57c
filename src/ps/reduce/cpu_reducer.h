#pragma once

#include <memory>

#include "pacer/reducer.h"
#include "ps/reduce/kernel_table.h"

namespace pacer::reduce {

// The CPU back end with a given kernel table, so tests can run every instruction set this CPU
// has. threads: 0 = one per core.
std::unique_ptr<Reducer> MakeCpuReducer(int threads, const KernelTable& kernels);

}  // namespace pacer::reduce
