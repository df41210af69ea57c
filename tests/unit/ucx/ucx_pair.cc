#include "ucx_pair.h"

#include "../../common/in_process_job.h"

namespace pacer {
namespace testing {
namespace {

UcxTransport::Options OptionsOf(UcxTransport::Rendezvous rendezvous, bool tcp) {
  UcxTransport::Options options;
  options.timeout_s = 30;
  options.tuning.spin_us = 0;
  options.rendezvous = rendezvous;
  if (tcp) {
    options.tls = "tcp";
    options.net_devices = "lo";
  }
  return options;
}

}  // namespace

UcxTransport::Options WriterOptions(bool tcp) {
  return OptionsOf(UcxTransport::Rendezvous::kSenderWrites, tcp);
}

UcxTransport::Options ReaderOptions(bool tcp) {
  return OptionsOf(UcxTransport::Rendezvous::kReceiverReads, tcp);
}

UcxPair::UcxPair(const UcxTransport::Options& rank0, const UcxTransport::Options& rank1,
                 Transport::PayloadConsumerFactory consumers_of_rank1)
    : group_(std::make_shared<LocalBootstrap::Group>(2)) {
  const UcxTransport::Options* options[] = {&rank0, &rank1};
  for (int r = 0; r < 2; ++r) bootstraps_.push_back(std::make_unique<LocalBootstrap>(group_, r));
  transports_.resize(2);
  // Making and starting a transport is collective, and so is stopping it.
  OnEveryRank(2, [&](int r) {
    transports_[r] = std::make_unique<UcxTransport>(*bootstraps_[r], *options[r]);
    if (r == 1 && consumers_of_rank1) transports_[r]->SetPayloadConsumers(consumers_of_rank1);
    transports_[r]->Start(inboxes_[r].Handler(), nullptr);
  });
}

UcxPair::~UcxPair() {
  try {
    OnEveryRank(2, [this](int r) { transports_[r]->Stop(); });
  } catch (const std::exception& e) {
    ADD_FAILURE() << "stopping the pair failed: " << e.what();
  }
}

std::string PathsTaken(const UcxTransport& transport) {
  std::string taken;
  for (const auto& [name, count] : transport.SendsByPath()) {
    if (count > 0) taken += name + "=" + std::to_string(count) + " ";
  }
  return taken;
}

}  // namespace testing
}  // namespace pacer
