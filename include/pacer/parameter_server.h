#pragma once

#include <memory>

#include "pacer/session.h"

namespace pacer {

// The server side of GradientSync: holds the parameters and optimizer state of the keys this
// server owns and applies the job's synchronization rule (--sync) and optimizer (--optimizer) to
// the workers' gradients. Construct one on every server rank, then call session.Finalize(): it
// serves until the workers are done.
//
//   if (session.is_server()) {
//     pacer::ParameterServer server(session);
//     session.Finalize();
//   }
//
// Each key's first values come from worker 0 (GradientSync::Register), once; pulls of a key wait
// until it has them. Pushes and pulls carry clocks (see SyncMode); a pull waits at the server until
// the rule lets its worker start the iteration it asks for. The scheduler may switch the mode at
// run time (SyncControl).
class ParameterServer {
 public:
  explicit ParameterServer(Session& session, int app_id = 0);
  ~ParameterServer();
  ParameterServer(const ParameterServer&) = delete;
  ParameterServer& operator=(const ParameterServer&) = delete;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace pacer
