#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../../common/test_messages.h"
#include "ps/bootstrap/local_bootstrap.h"
#include "ps/transport/ucx/ucx_transport.h"

namespace pacer {
namespace testing {

// Two UcxTransports in this process, ranks 0 and 1 of a job, started with an Inbox each: what the
// payload paths' tests send over. Stopped (collectively) when it goes.
class UcxPair {
 public:
  // `options[r]` for rank r; `consumers[r]`, if set, may take rank r's incoming values as they
  // arrive (a server's in-place sum).
  UcxPair(const UcxTransport::Options& rank0, const UcxTransport::Options& rank1,
          Transport::PayloadConsumerFactory consumers_of_rank1 = nullptr);
  ~UcxPair();

  UcxTransport& transport(int rank) { return *transports_[rank]; }
  Inbox& inbox(int rank) { return inboxes_[rank]; }

 private:
  std::shared_ptr<LocalBootstrap::Group> group_;
  std::vector<std::unique_ptr<LocalBootstrap>> bootstraps_;
  std::vector<std::unique_ptr<UcxTransport>> transports_;
  Inbox inboxes_[2];
};

// Options of a rank whose sender writes (a worker) or whose receiver reads (a server), over
// shared memory or over TCP on loopback alone.
UcxTransport::Options WriterOptions(bool tcp = false);
UcxTransport::Options ReaderOptions(bool tcp = false);

// What `transport`'s paths took, as "name=count" for those that took any, for failure messages.
std::string PathsTaken(const UcxTransport& transport);

}  // namespace testing
}  // namespace pacer
