// A worker's iteration report and a server's service report, as the scheduler decodes them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ps/messages/telemetry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pacer;
  const Buffer payload = Buffer::Copy(data, size);
  std::string error;
  IterationReport iteration;
  DecodeReport(payload, &iteration, &error);
  ServerReport server;
  if (DecodeReport(payload, &server, &error)) ServiceMicrosPerMb(server);
  return 0;
}
