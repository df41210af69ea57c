#include "worker/link_probe.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "common/str_cat.h"
#include "pacer/error.h"
#include "ps/node/node.h"

namespace pacer {

LinkProbe::LinkProbe(Node& node)
    : node_(node),
      channel_(node.cluster(), node.dispatcher(), kProbeTimeoutS),
      thread_([this] { Run(); }) {
  node.dispatcher().Take(proto::LINK_PROBE, [this](Message&& msg) { OnOrder(std::move(msg)); });
  node.dispatcher().Take(proto::PROBE_ECHO, [this](Message&& msg) { OnEcho(std::move(msg)); });
}

LinkProbe::~LinkProbe() {
  node_.dispatcher().Take(proto::LINK_PROBE, nullptr);
  node_.dispatcher().Take(proto::PROBE_ECHO, nullptr);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  channel_.Cancel();
  wake_.notify_all();
  thread_.join();
}

void LinkProbe::OnOrder(Message&& msg) {
  const int64_t bytes = msg.meta.probe_bytes();
  if (bytes < 1 || bytes > kMaxProbeBytes) {
    Message reply = ReplyTo(msg.meta, node_.rank());
    reply.meta.set_error(StrCat("worker rank ", node_.rank(), " asked for probes of ", bytes,
                                " bytes: expected 1 to ", kMaxProbeBytes));
    node_.cluster().SendOrLog(msg.meta.sender(), reply);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    orders_.push_back(msg.meta);
  }
  wake_.notify_all();
}

void LinkProbe::OnEcho(Message&& msg) {
  const int sender = msg.meta.sender();
  node_.cluster().SendOrLog(sender, EchoOf(std::move(msg), node_.rank()));
}

void LinkProbe::Run() {
  for (;;) {
    proto::Meta order;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !orders_.empty(); });
      if (stopping_) return;
      order = orders_.front();
      orders_.pop_front();
    }
    try {
      Probe(order);
    } catch (const std::exception& e) {  // the job ended (failed, or this worker finishing)
      LOG(WARNING) << "rank " << node_.rank() << " stopped probing: " << e.what();
      return;
    }
  }
}

void LinkProbe::Probe(const proto::Meta& order) {
  const Roles& roles = node_.roles();
  const size_t floats = static_cast<size_t>(order.probe_bytes() + 3) / sizeof(float);
  const std::vector<float> payload(floats, 1.0f);
  const Key key = 0;
  Message reply = ReplyTo(order, node_.rank());
  const bool servers = order.probe_servers();
  for (int i = 0; i < (servers ? roles.num_servers() : roles.num_workers()); ++i) {
    const int peer = servers ? roles.ServerRank(i) : roles.WorkerRank(i);
    double bandwidth = 0;
    if (peer != node_.rank()) {
      Message probe = channel_.Request(proto::PROBE_ECHO, node_.rank(), 0, channel_.Begin(1));
      probe.keys = Buffer::Copy(&key, sizeof(Key));
      probe.vals.push_back(Buffer::Copy(payload.data(), floats * sizeof(float)));
      probe.meta.set_value_size(sizeof(float));
      const auto start = std::chrono::steady_clock::now();
      node_.transport().Send(peer, probe, nullptr);
      try {
        channel_.Wait(
            StrCat("probing the link to ", servers ? "server" : "worker", " rank ", peer));
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        bandwidth = 2.0 * static_cast<double>(floats * sizeof(float)) / std::max(s, 1e-9);
      } catch (const TimeoutError& e) {
        LOG(WARNING) << e.what();  // no bandwidth: this link is not a partner's
      }
    }
    reply.meta.add_link_bandwidth(bandwidth);
  }
  node_.cluster().SendOrLog(order.sender(), reply);
}

}  // namespace pacer
