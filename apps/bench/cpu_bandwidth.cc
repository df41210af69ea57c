#include "cpu_bandwidth.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

namespace pacer::bench {

void ParallelMemcpy(float* dst, const float* src, size_t count, int threads) {
#pragma omp parallel num_threads(threads)
  {
    const size_t per = (count + omp_get_num_threads() - 1) / omp_get_num_threads();
    const size_t begin = std::min(count, per * omp_get_thread_num());
    std::memcpy(dst + begin, src + begin, (std::min(count, begin + per) - begin) * sizeof(float));
  }
}

// The loop a user would write; the compiler vectorizes it for the baseline instruction set.
void ParallelAddLoop(float* a, const float* b, size_t count, int threads) {
  const long long n = static_cast<long long>(count);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (long long i = 0; i < n; ++i) a[i] += b[i];
}

void ParallelAddToThirdLoop(float* c, const float* a, const float* b, size_t count, int threads) {
  const long long n = static_cast<long long>(count);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (long long i = 0; i < n; ++i) c[i] = a[i] + b[i];
}

}  // namespace pacer::bench
