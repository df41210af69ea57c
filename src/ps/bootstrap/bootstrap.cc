#include "ps/bootstrap/bootstrap.h"

namespace pacer {

std::vector<std::string> Bootstrap::Hosts(std::chrono::milliseconds timeout) {
  const std::string& mine = host();
  std::vector<std::string> hosts;
  for (const Bytes& name : AllGather(Bytes(mine.begin(), mine.end()), timeout)) {
    hosts.emplace_back(name.begin(), name.end());
  }
  return hosts;
}

}  // namespace pacer
