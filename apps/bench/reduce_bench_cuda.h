#pragma once

// The CUDA figures of pacer-reduce-bench that the Reducer interface cannot give: the device's
// copy bandwidth (the ceiling for any sum) and cuBLAS's sum (what the fused kernel is measured
// against). Plain C++, so the benchmark's main needs no CUDA headers.

#include <cstddef>

namespace pacer::bench {

// GB/s (1e9 B) of device-to-device copies of `bytes`, counting bytes read and written (2 * bytes
// per copy); the mean of `reps` timed copies after a warm-up. Throws pacer::Error without a device.
double CudaDeviceCopyGBps(size_t bytes, int reps);

// GB/s of out = sum of `inputs` fp32 arrays of `bytes_per_input` each done with cuBLAS (a copy,
// Saxpy per further input), counting what a fused sum moves: (inputs + 1) * bytes_per_input. The
// mean of `reps` timed sums after a warm-up. Throws pacer::Error without a device.
double CudaCublasSumGBps(int inputs, size_t bytes_per_input, int reps);

}  // namespace pacer::bench
