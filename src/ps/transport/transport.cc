#include "ps/transport/transport.h"

#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {

void Transport::CheckDestination(int dst) const {
  if (dst < 0 || dst >= size())
    throw Error(StrCat("send to rank ", dst, " outside [0, ", size(), ")"));
}

}  // namespace pacer
