#pragma once

#include <functional>
#include <memory>
#include <string>

#include "pacer/config.h"
#include "pacer/session.h"
#include "ps/bootstrap/bootstrap.h"
#include "ps/transport/transport.h"

namespace pacer {
namespace testing {

// How the ranks of an in-process job talk: LocalTransport (messages copied between inboxes), or
// real UcxTransports, over shared memory or over TCP on loopback alone.
enum class InProcessTransport { kLocal, kUcxSharedMemory, kUcxTcp };
std::string NameOf(InProcessTransport transport);

// The transport of rank `bootstrap.rank()` of an in-process job (collective: every rank opens its
// own). `role` decides a UcxTransport's rendezvous, as in a job of processes.
class InProcessTransports {
 public:
  InProcessTransports(InProcessTransport kind, int size);
  std::unique_ptr<Transport> Open(Bootstrap& bootstrap, const Config& config, Role role) const;

 private:
  InProcessTransport kind_;
  std::shared_ptr<void> fabric_;  // LocalTransport's, where it is used
};

// Runs `body(rank)` for ranks 0..ranks-1, each on a thread of its own (what collective steps
// need), and returns once all have; rethrows the first exception a rank threw.
void OnEveryRank(int ranks, const std::function<void(int rank)>& body);

// Runs a whole job in this process, every rank a thread with its own Session (gloo's way of
// testing protocols without processes), over `transport`. `body` runs on every rank, then the rank
// finalizes; an exception escaping `body` fails the test, naming the rank.
void RunInProcessJob(int servers, int workers, const Config& config,
                     const std::function<void(Session&)>& body,
                     InProcessTransport transport = InProcessTransport::kLocal);

// A server rank's part of such a job where the test looks no closer: a ParameterServer that
// serves until the job's next `barriers` barriers of all nodes have passed.
void ServeUntilBarriers(Session& session, int barriers = 1);

}  // namespace testing
}  // namespace pacer
