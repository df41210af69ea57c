#pragma once

#include <string>

#include "pacer/error.h"

namespace pacer {
namespace testing {

// What `call` threw as an E (pacer::Error unless told), or "(no error)" if it threw nothing: for
// comparing an error message as a whole.
template <typename E = Error, typename F>
std::string ErrorOf(F&& call) {
  try {
    call();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace testing
}  // namespace pacer
