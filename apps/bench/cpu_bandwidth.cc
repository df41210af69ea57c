#include "cpu_bandwidth.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

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

namespace {

// The loop a user would write for a fixed number of inputs; omp simd because the compiler cannot
// prove that `out` (possibly inputs[0]) and the inputs do not overlap in other ways.
template <int N>
void PlainSumLoop(float* out, const float* const* inputs, float scale, long long count,
                  int threads) {
  const float* in[N];
  std::copy(inputs, inputs + N, in);
#pragma omp parallel for simd num_threads(threads) schedule(static)
  for (long long i = 0; i < count; ++i) {
    float acc = in[0][i];
    for (int k = 1; k < N; ++k) acc += in[k][i];
    out[i] = acc * scale;
  }
}

template <int... N>
constexpr auto PlainSumLoops(std::integer_sequence<int, N...>) {
  using Loop = void (*)(float*, const float* const*, float, long long, int);
  return std::array<Loop, sizeof...(N)>{&PlainSumLoop<N + 1>...};
}

}  // namespace

void ParallelPlainSum(float* out, const float* const* inputs, int n, float scale, size_t count,
                      int threads) {
  static constexpr auto kLoops = PlainSumLoops(std::make_integer_sequence<int, 16>());
  kLoops.at(n - 1)(out, inputs, scale, static_cast<long long>(count), threads);
}

}  // namespace pacer::bench
