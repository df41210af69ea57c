#pragma once

#include <stdexcept>
#include <string>

namespace pacer {

/// Every failure Pacer reports to a caller: bad input, a server's rejection, a transport fault.
/// The message names what was wrong (key, rank, sizes).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A wait (request, barrier) that did not finish within its deadline.
class TimeoutError : public Error {
 public:
  using Error::Error;
};

/// The job lost a rank it cannot go on without (it stopped answering for `--heartbeat_timeout_s`):
/// every wait of every other rank ends with this error, which names the lost rank.
class LostRankError : public Error {
 public:
  using Error::Error;
};

}  // namespace pacer
