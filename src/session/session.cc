#include "pacer/session.h"

#include <memory>

#include "pacer/buffer.h"
#include "pacer/error.h"
#include "ps/bootstrap/mpi_bootstrap.h"
#include "ps/node/node.h"
#include "ps/transport/transport_choice.h"
#include "session/scheduler_services.h"

namespace pacer {
namespace {

// A job that mpirun or srun launched: MPI bootstraps it, and --transport picks the transport.
std::unique_ptr<Node> JoinOverMpi(const Config& config) {
  auto bootstrap = std::make_unique<MpiBootstrap>();
  MpiBootstrap& mpi = *bootstrap;
  return Node::Join(
      config, std::move(bootstrap), [&mpi](Bootstrap&, const Config& settled, Role role) {
        return OpenTransport(settled.transport, mpi, settled.tuning, settled.timeout_s, role);
      });
}

}  // namespace

Session::Session(const Config& config) : Session(JoinOverMpi(config)) {}

Session::Session(std::unique_ptr<Node> node) : node_(std::move(node)) {
  if (node_->role() == Role::kScheduler) {
    node_->Adopt(std::make_unique<SchedulerServices>(*node_));
  }
}

Session::~Session() = default;

Role Session::role() const { return node_->role(); }
int Session::rank() const { return node_->rank(); }
int Session::num_servers() const { return node_->roles().num_servers(); }
int Session::num_workers() const { return node_->roles().num_workers(); }
int Session::role_index() const { return node_->cluster().role_index(); }
std::vector<int> Session::excluded_workers() const {
  std::vector<int> workers;
  for (int rank : node_->cluster().excluded()) workers.push_back(node_->roles().IndexOf(rank));
  return workers;
}
std::string Session::transport_name() const { return node_->cluster().transport_name(); }
const Config& Session::config() const { return node_->config(); }
Reducer& Session::reducer() { return node_->reducer(); }

std::shared_ptr<void> Session::AllocatePushMemory(size_t bytes) {
  if (std::shared_ptr<void> shared = node_->transport().LendSharedMemory(bytes)) return shared;
  uint8_t* memory = nullptr;
  const Buffer owned = Buffer::Allocate(bytes, &memory);
  return std::shared_ptr<void>(std::const_pointer_cast<void>(owned.owner()), memory);
}

void Session::Barrier(int group) {
  Barrier(group, std::chrono::milliseconds(static_cast<int64_t>(config().timeout_s * 1000)));
}

void Session::Barrier(int group, std::chrono::milliseconds timeout) {
  node_->cluster().Barrier(group, timeout);
}

int Session::ServerOfKey(Key key) const { return node_->routing().current()->ServerOf(key); }

void Session::Finalize() { node_->Finalize(); }

}  // namespace pacer
