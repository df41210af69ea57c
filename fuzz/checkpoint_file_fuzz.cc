// A checkpoint file (GradientSync::Checkpoint's) as a resuming job decodes it, once read.
#include <cstddef>
#include <cstdint>

#include "pacer/error.h"
#include "worker/checkpoint_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    pacer::CheckpointFile::Decode(data, size, "fuzzed checkpoint");
  } catch (const pacer::Error&) {
  }
  return 0;
}
