// A routing table (owners and epoch) as a ROUTING_UPDATE or MIGRATE carries it: the first byte
// is the job's number of servers, the rest the table's bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "pacer/error.h"
#include "ps/routing/router.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int servers = 1 + data[0] % 64;
  try {
    const pacer::Router router = pacer::Router::Decode(
        std::string(reinterpret_cast<const char*>(data + 1), size - 1), servers);
    for (pacer::Key key : {pacer::Key{0}, pacer::Key{7}, ~pacer::Key{0}}) router.ServerOf(key);
  } catch (const pacer::Error&) {
  }
  return 0;
}
