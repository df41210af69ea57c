#include <glog/logging.h>

#include <mutex>

#include "pacer/reducer.h"
#ifdef PACER_HAVE_CUDA
#include "cuda/cuda_reducer.h"
#endif

namespace pacer {
namespace {

void SayOnceWhyCpu(const std::string& why) {
  static std::once_flag said;
  std::call_once(said, [&] { LOG(WARNING) << why << ": the reducer runs on the CPU"; });
}

}  // namespace

std::unique_ptr<Reducer> MakeReducer(Device preferred, int cpu_threads) {
  if (preferred == Device::kCuda) {
#ifdef PACER_HAVE_CUDA
    std::string why_not;
    if (std::unique_ptr<Reducer> cuda = MakeCudaReducer(&why_not)) return cuda;
    SayOnceWhyCpu("no usable CUDA device (" + why_not + ")");
#else
    SayOnceWhyCpu("Pacer was built without CUDA (PACER_CUDA=OFF or no toolkit)");
#endif
  }
  return MakeCpuReducer(cpu_threads);
}

}  // namespace pacer
