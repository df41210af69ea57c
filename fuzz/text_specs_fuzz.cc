// The options spelled as text: --inject specs (and their rates), --sync and --optimizer.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/fault_spec.h"
#include "common/optimizer_spec.h"
#include "pacer/error.h"
#include "pacer/sync_mode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    pacer::FaultSpec::Parse(text);
  } catch (const std::invalid_argument&) {
  } catch (const pacer::Error&) {
  }
  try {
    pacer::ParseRate(text);
  } catch (const std::invalid_argument&) {
  }
  try {
    pacer::SyncMode::Parse(text).ToString();
  } catch (const pacer::Error&) {
  }
  try {
    pacer::OptimizerSpec::Parse(text);
  } catch (const pacer::Error&) {
  }
  return 0;
}
