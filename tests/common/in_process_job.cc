#include "in_process_job.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pacer/parameter_server.h"
#include "ps/bootstrap/local_bootstrap.h"
#include "ps/node/node.h"
#include "ps/transport/local_transport.h"
#include "ps/transport/ucx/ucx_transport.h"

namespace pacer {
namespace testing {
namespace {

// Once a rank's body failed, how long the others may take to end. A rank that failed never
// reaches the barriers the others wait in, and the finalizing barrier has no deadline: without
// this the test would hang instead of failing.
constexpr std::chrono::seconds kGraceAfterFailure(10);

}  // namespace

std::string NameOf(InProcessTransport transport) {
  switch (transport) {
    case InProcessTransport::kLocal:
      return "local";
    case InProcessTransport::kUcxSharedMemory:
      return "ucx_shared_memory";
    case InProcessTransport::kUcxTcp:
      return "ucx_tcp";
  }
  return "?";
}

InProcessTransports::InProcessTransports(InProcessTransport kind, int size) : kind_(kind) {
  if (kind == InProcessTransport::kLocal) {
    fabric_ = std::make_shared<LocalTransport::Fabric>(size);
  }
}

std::unique_ptr<Transport> InProcessTransports::Open(Bootstrap& bootstrap, const Config& config,
                                                     Role role) const {
  if (kind_ == InProcessTransport::kLocal) {
    return std::make_unique<LocalTransport>(
        std::static_pointer_cast<LocalTransport::Fabric>(fabric_), bootstrap);
  }
  UcxTransport::Options options;
  options.tuning = config.tuning;
  options.timeout_s = config.timeout_s;
  options.rendezvous = UcxTransport::RendezvousFor(role);
  if (kind_ == InProcessTransport::kUcxTcp) {
    options.tls = "tcp";
    options.net_devices = "lo";
  }
  return std::make_unique<UcxTransport>(bootstrap, options);
}

void OnEveryRank(int ranks, const std::function<void(int rank)>& body) {
  std::vector<std::exception_ptr> errors(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

void RunInProcessJob(int servers, int workers, const Config& config,
                     const std::function<void(Session&)>& body, InProcessTransport transport) {
  const int size = 1 + servers + workers;
  auto group = std::make_shared<LocalBootstrap::Group>(size);
  const InProcessTransports transports(transport, size);
  std::mutex mu;
  std::condition_variable changed;
  std::vector<std::string> errors(size);
  int finished = 0;
  bool failed = false;
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r) {
    ranks.emplace_back([&, r] {
      Config c = config;
      c.servers = servers;
      try {
        Session session(Node::Join(c, std::make_unique<LocalBootstrap>(group, r),
                                   [&](Bootstrap& b, const Config& settled, Role role) {
                                     return transports.Open(b, settled, role);
                                   }));
        try {
          body(session);
        } catch (const std::exception& e) {
          std::lock_guard<std::mutex> lock(mu);
          errors[r] = e.what();
          failed = true;
          changed.notify_all();
        }
        session.Finalize();
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu);
        errors[r] = std::string("joining or leaving the job: ") + e.what();
        failed = true;
        changed.notify_all();
      }
      std::lock_guard<std::mutex> lock(mu);
      ++finished;
      changed.notify_all();
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    changed.wait(lock, [&] { return failed || finished == size; });
    if (!changed.wait_for(lock, kGraceAfterFailure, [&] { return finished == size; })) {
      for (int r = 0; r < size; ++r) {
        if (!errors[r].empty()) std::fprintf(stderr, "rank %d failed: %s\n", r, errors[r].c_str());
      }
      std::fprintf(stderr, "the other ranks did not end within %lld s of the failure: stopping\n",
                   static_cast<long long>(kGraceAfterFailure.count()));
      std::fflush(stderr);
      std::_Exit(1);
    }
  }
  for (auto& t : ranks) t.join();
  for (int r = 0; r < size; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

void ServeUntilBarriers(Session& session, int barriers) {
  ParameterServer server(session);
  for (int i = 0; i < barriers; ++i) session.Barrier(kAllNodes);
}

}  // namespace testing
}  // namespace pacer
