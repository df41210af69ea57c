#include <cpuid.h>

#include "ps/reduce/kernel_table.h"

namespace pacer::reduce {
namespace {

// From CPUID itself: clang does not know "f16c" as a __builtin_cpu_supports feature.
bool HasF16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}

}  // namespace

std::vector<const KernelTable*> SupportedKernels() {
  std::vector<const KernelTable*> tables{&PortableKernels()};
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && HasF16c()) {
    tables.push_back(&Avx2Kernels());
  }
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl")) {
    tables.push_back(&Avx512Kernels());
  }
  return tables;
}

}  // namespace pacer::reduce
