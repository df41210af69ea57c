#include "ps/reduce/kernel_table.h"

namespace pacer::reduce {

std::vector<const KernelTable*> SupportedKernels() {
  std::vector<const KernelTable*> tables{&PortableKernels()};
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("f16c")) {
    tables.push_back(&Avx2Kernels());
  }
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl")) {
    tables.push_back(&Avx512Kernels());
  }
  return tables;
}

}  // namespace pacer::reduce
