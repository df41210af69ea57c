#include "scheduler/telemetry_intake.h"

#include <glog/logging.h>

#include <algorithm>
#include <string>

#include "common/str_cat.h"

namespace pacer {

TelemetryIntake::TelemetryIntake(Node& node, std::vector<TelemetryObserver*> observers)
    : node_(node),
      observers_(std::move(observers)),
      reported_(node.roles().num_workers(), 0),
      excluded_(node.roles().num_workers(), false) {
  for (proto::Command command : {proto::ITERATION_REPORT, proto::SERVER_REPORT}) {
    node_.dispatcher().Take(command, [this](Message&& msg) { OnReport(msg); });
  }
  exclusions_ = node_.cluster().WatchExclusions([this](int rank, const std::string&) {
    if (node_.roles().RoleOf(rank) == Role::kWorker) Exclude(node_.roles().IndexOf(rank));
  });
}

void TelemetryIntake::Exclude(int index) {
  std::lock_guard<std::mutex> lock(mu_);
  if (excluded_.at(index)) return;
  excluded_[index] = true;
  for (TelemetryObserver* o : observers_) o->OnExclusion(index);
  AdvanceBoundary();
}

void TelemetryIntake::AdvanceBoundary() {
  int64_t boundary = -1;
  for (size_t w = 0; w < reported_.size(); ++w) {
    if (!excluded_[w]) boundary = boundary < 0 ? reported_[w] : std::min(boundary, reported_[w]);
  }
  if (boundary > boundary_) {
    boundary_ = boundary;
    for (TelemetryObserver* o : observers_) o->OnBoundary(boundary - 1);
  }
}

TelemetryIntake::~TelemetryIntake() {
  exclusions_.reset();
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
      AdvanceBoundary();
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
