#include "ps/bootstrap/bootstrap.h"

namespace pacer {

const std::vector<std::string>& Bootstrap::Hosts(std::chrono::milliseconds timeout) {
  if (!hosts_.empty()) return hosts_;
  const std::string& mine = host();
  for (const Bytes& name : AllGather(Bytes(mine.begin(), mine.end()), timeout)) {
    hosts_.emplace_back(name.begin(), name.end());
  }
  return hosts_;
}

}  // namespace pacer
