#include "ps/transport/transport.h"

#include "pacer/error.h"
#include "ps/str_cat.h"

namespace pacer {

void Transport::CheckDestination(int dst) const {
  if (dst < 0 || dst >= size())
    throw Error(StrCat("send to rank ", dst, " outside [0, ", size(), ")"));
}

}  // namespace pacer
