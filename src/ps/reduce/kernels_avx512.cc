// The reduce kernels for the avx512 instruction set (see cpu_kernels_impl.h).
#define PACER_SIMD_ISA 2
#define PACER_KERNEL_NAMESPACE avx512
#define PACER_KERNEL_TABLE Avx512Kernels
#define PACER_KERNEL_ISA "avx512"
#include "ps/reduce/cpu_kernels_impl.h"
