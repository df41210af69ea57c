#pragma once

#include <cstddef>
#include <vector>

#include "pacer/dtype.h"
#include "pacer/reducer.h"

namespace pacer::reduce {

// Arguments of one operation; a kernel runs over the element range [begin, end) of it, so that
// threads can split the range.
struct SumJob {
  const void* in[Reducer::kMaxInputs] = {};
  DType in_type[Reducer::kMaxInputs] = {};
  int inputs = 0;
  void* out = nullptr;
  DType out_type = DType::kF32;
  float scale = 1.f;
  // Non-temporal stores: the output aliases no input and is too large to stay in cache, so the
  // store need not read the line first.
  bool stream_out = false;
};

struct SgdJob {
  SgdParams params;
  float* weights = nullptr;
  float* momentum = nullptr;
  ConstArray grad;
};

struct AdamJob {
  AdamParams params;
  float inv_bias1 = 1.f;  // 1 / (1 - beta1^step)
  float inv_bias2 = 1.f;  // 1 / (1 - beta2^step)
  float* weights = nullptr;
  float* m = nullptr;
  float* v = nullptr;
  ConstArray grad;
};

// The kernels of one instruction set.
struct KernelTable {
  const char* isa;
  void (*sum)(const SumJob& job, size_t begin, size_t end);
  void (*sgd)(const SgdJob& job, size_t begin, size_t end);
  void (*adam)(const AdamJob& job, size_t begin, size_t end);
};

const KernelTable& PortableKernels();
const KernelTable& Avx2Kernels();
const KernelTable& Avx512Kernels();

// Every table this CPU can run, portable first, best last.
std::vector<const KernelTable*> SupportedKernels();

}  // namespace pacer::reduce
