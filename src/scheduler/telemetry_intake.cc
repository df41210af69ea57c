#include "scheduler/telemetry_intake.h"

#include <glog/logging.h>

#include <algorithm>
#include <string>

#include "common/str_cat.h"

namespace pacer {

TelemetryIntake::TelemetryIntake(Node& node, std::vector<TelemetryObserver*> observers)
    : node_(node), observers_(std::move(observers)), reported_(node.roles().num_workers(), 0) {
  for (proto::Command command : {proto::ITERATION_REPORT, proto::SERVER_REPORT}) {
    node_.dispatcher().Take(command, [this](Message&& msg) { OnReport(msg); });
  }
}

TelemetryIntake::~TelemetryIntake() {
  node_.dispatcher().Take(proto::ITERATION_REPORT, nullptr);
  node_.dispatcher().Take(proto::SERVER_REPORT, nullptr);
}

void TelemetryIntake::OnReport(const Message& msg) {
  const int sender = msg.meta.sender();
  const Roles& roles = node_.roles();
  const bool from_worker = msg.meta.command() == proto::ITERATION_REPORT;
  std::string error;
  std::lock_guard<std::mutex> lock(mu_);
  const Role sender_role = roles.RoleOf(sender);
  if (sender_role != (from_worker ? Role::kWorker : Role::kServer)) {
    error = StrCat(
        "it is a ", RoleName(sender_role), ", and ",
        from_worker ? "iteration reports come from workers" : "service reports come from servers");
  } else if (from_worker) {
    IterationReport report;
    if (DecodeReport(msg.vals_buffer(), &report, &error)) {
      const int index = roles.IndexOf(sender);
      for (TelemetryObserver* o : observers_) o->OnIteration(index, sender, report);
      reported_[index] = std::max(reported_[index], report.iteration + 1);
      const int64_t boundary = *std::min_element(reported_.begin(), reported_.end());
      if (boundary > boundary_) {
        boundary_ = boundary;
        for (TelemetryObserver* o : observers_) o->OnBoundary(boundary - 1);
      }
      return;
    }
  } else {
    ServerReport report;
    if (DecodeReport(msg.vals_buffer(), &report, &error)) {
      for (TelemetryObserver* o : observers_)
        o->OnServerReport(roles.IndexOf(sender), sender, report);
      return;
    }
  }
  LOG(WARNING) << "rank " << node_.rank() << " dropped a report from rank " << sender << ": "
               << error;
}

}  // namespace pacer
