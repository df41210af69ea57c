// The reduce kernels for the avx2 instruction set (see cpu_kernels_impl.h).
#define PACER_SIMD_ISA 1
#define PACER_KERNEL_NAMESPACE avx2
#define PACER_KERNEL_TABLE Avx2Kernels
#define PACER_KERNEL_ISA "avx2"
#include "ps/reduce/cpu_kernels_impl.h"
