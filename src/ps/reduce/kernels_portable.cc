// The reduce kernels for the portable instruction set (see cpu_kernels_impl.h).
#define PACER_SIMD_ISA 0
#define PACER_KERNEL_NAMESPACE portable
#define PACER_KERNEL_TABLE PortableKernels
#define PACER_KERNEL_ISA "portable"
#include "ps/reduce/cpu_kernels_impl.h"
