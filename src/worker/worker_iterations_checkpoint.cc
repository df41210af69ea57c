// GradientSync::Checkpoint and Resume: the servers' state of every key in one file, and back.
#include <algorithm>
#include <chrono>

#include "common/optimizer_spec.h"
#include "worker/checkpoint_file.h"
#include "worker/worker_iterations.h"

namespace pacer {
namespace {

// Session::Barrier(kWorkerGroup): every worker, within the job's timeout.
void WorkersMeet(Node& node) {
  node.cluster().Barrier(kWorkerGroup, std::chrono::milliseconds(
                                           static_cast<int64_t>(node.config().timeout_s * 1000)));
}

}  // namespace

void WorkerIterations::Checkpoint(const std::string& path) {
  if (in_iteration_) throw Error(StrCat("Checkpoint inside iteration ", clock_));
  Broadcast();
  WorkersMeet(node_);  // no worker has pushed clock_, every one pushed the ones before
  std::string error;
  if (node_.cluster().role_index() == 0) {
    CheckpointFile file;
    file.clock = clock_;
    file.optimizer = node_.config().optimizer;
    for (const TensorLayout::Tensor& t : layout_.tensors()) {
      file.tensors.emplace_back(t.name, t.count);
    }
    try {
      file.records = PullKeyStates();
      file.Write(path);
    } catch (const Error& e) {
      error = e.what();
    }
  }
  WorkersMeet(node_);  // the state is saved before anyone pushes clock_
  if (!error.empty()) throw Error(StrCat("checkpoint at clock ", clock_, ": ", error));
}

std::vector<std::pair<Key, std::vector<uint8_t>>> WorkerIterations::PullKeyStates() {
  std::vector<Key> keys;
  for (const TensorLayout::Unit& u : layout_.units()) keys.push_back(u.key);
  std::vector<uint8_t> bytes;
  std::vector<int32_t> lens;
  detail::Request request{detail::Operation::kPull,
                          Buffer(keys.data(), keys.size() * sizeof(Key)),
                          {},
                          {},
                          {},
                          nullptr,
                          0,
                          {}};
  request.sync.clock = clock_;
  request.sync.state = true;
  request.destination.values = [&](size_t n) {
    bytes.resize(n);
    return bytes.data();
  };
  request.destination.lengths = [&](size_t n) {
    lens.resize(n);
    return lens.data();
  };
  kv_.Wait(kv_.Submit(std::move(request)));
  std::vector<std::pair<Key, std::vector<uint8_t>>> states;
  size_t offset = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const size_t n = static_cast<size_t>(lens[i]) * sizeof(float);
    states.emplace_back(keys[i],
                        std::vector<uint8_t>(bytes.begin() + offset, bytes.begin() + offset + n));
    offset += n;
  }
  return states;
}

void WorkerIterations::RestoreServers(const std::string& path) {
  const CheckpointFile file = CheckpointFile::Read(path);
  const std::vector<TensorLayout::Tensor>& tensors = layout_.tensors();
  for (size_t t = 0; t < std::max(tensors.size(), file.tensors.size()); ++t) {
    const std::string saved = t < file.tensors.size() ? StrCat("'", file.tensors[t].first, "' of ",
                                                               file.tensors[t].second, " values")
                                                      : "nothing";
    const std::string registered =
        t < tensors.size() ? StrCat("'", tensors[t].name, "' of ", tensors[t].count, " values")
                           : "nothing";
    if (saved != registered) {
      throw Error(StrCat("checkpoint ", path, " holds ", saved, " as tensor ", t,
                         "; this job registered ", registered));
    }
  }
  if (OptimizerSpec::Parse(file.optimizer).kind !=
      OptimizerSpec::Parse(node_.config().optimizer).kind) {
    throw Error(StrCat("checkpoint ", path, " holds the state of --optimizer=", file.optimizer,
                       "; this job runs --optimizer=", node_.config().optimizer));
  }
  std::vector<Key> keys;
  std::vector<int32_t> lens;
  std::vector<uint8_t> bytes;
  for (size_t u = 0; u < file.records.size(); ++u) {
    const auto& [key, record] = file.records[u];
    if (u >= layout_.units().size() || key != unit(static_cast<int>(u)).key ||
        record.size() % sizeof(float) != 0) {
      throw Error(StrCat("checkpoint ", path, ": record ", u, " is of key ", key, " (",
                         record.size(), " bytes); this job's tensors make ", layout_.units().size(),
                         " keys (another --partition_bytes?)"));
    }
    keys.push_back(key);
    lens.push_back(static_cast<int32_t>(record.size() / sizeof(float)));
    bytes.insert(bytes.end(), record.begin(), record.end());
  }
  if (keys.size() != layout_.units().size()) {
    throw Error(StrCat("checkpoint ", path, " holds ", keys.size(),
                       " keys; this job's tensors make ", layout_.units().size(),
                       " (another --partition_bytes?)"));
  }
  detail::Request request{detail::Operation::kPush,
                          Buffer::FromVector(std::move(keys)),
                          Buffer::FromVector(std::move(bytes)),
                          Buffer::FromVector(std::move(lens)),
                          {},
                          nullptr,
                          0,
                          {}};
  request.sync.clock = file.clock;
  request.sync.init = true;
  request.sync.state = true;
  kv_.Wait(kv_.Submit(std::move(request)));
}

void WorkerIterations::Resume(const std::string& path) {
  if (broadcast_done_) throw Error(StrCat("Resume from ", path, " after the first iteration"));
  PrepareRequests();
  if (node_.cluster().role_index() == 0) RestoreServers(path);
  // Pulls wait for a key's values: the others' too, until worker 0's records are in.
  PullEverything(detail::Operation::kPull, 0, "resuming from a checkpoint");
  int64_t clock = -1;
  for (size_t u = 0; u < requests_.size(); ++u) {
    const int64_t complete = requests_.state(static_cast<int>(u)).answer->complete_clock;
    clock = clock < 0 ? complete : std::min(clock, complete);
  }
  clock_ = std::max<int64_t>(0, clock);
  broadcast_done_ = true;
}

}  // namespace pacer
