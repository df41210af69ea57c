#include "pacer/session.h"

#include <memory>

#include "pacer/buffer.h"
#include "pacer/error.h"
#include "ps/session_core.h"
#include "scheduler/monitor.h"
#include "scheduler/task_authority.h"

namespace pacer {

const char* RoleName(Role role) {
  switch (role) {
    case Role::kScheduler:
      return "scheduler";
    case Role::kServer:
      return "server";
    case Role::kWorker:
      return "worker";
  }
  return "unknown";
}

Session::Session(const Config& config) : Session(SessionCore::CreateWithMpi(config)) {}

Session::Session(std::unique_ptr<SessionCore> core) : core_(std::move(core)) {
  if (core_->role() == Role::kScheduler) {
    monitor_ = std::make_unique<Monitor>(*core_);
    task_authority_ = std::make_unique<TaskAuthority>(*core_);
  }
}

Session::~Session() = default;

Role Session::role() const { return core_->role(); }
int Session::rank() const { return core_->rank(); }
int Session::num_servers() const { return core_->num_servers(); }
int Session::num_workers() const { return core_->num_workers(); }
int Session::role_index() const { return core_->role_index(); }
std::string Session::transport_name() const { return core_->transport_name(); }
const Config& Session::config() const { return core_->config(); }
Reducer& Session::reducer() { return core_->reducer(); }

std::shared_ptr<void> Session::AllocatePushMemory(size_t bytes) {
  if (std::shared_ptr<void> shared = core_->transport().LendSharedMemory(bytes)) return shared;
  uint8_t* memory = nullptr;
  const Buffer owned = Buffer::Allocate(bytes, &memory);
  return std::shared_ptr<void>(std::const_pointer_cast<void>(owned.owner()), memory);
}

void Session::Barrier(int group) {
  Barrier(group, std::chrono::milliseconds(static_cast<int64_t>(config().timeout_s * 1000)));
}

void Session::Barrier(int group, std::chrono::milliseconds timeout) {
  core_->Barrier(group, timeout);
}

int Session::ServerOfKey(Key key) const { return core_->routing()->ServerOf(key); }

void Session::Finalize() { core_->Finalize(); }

}  // namespace pacer
