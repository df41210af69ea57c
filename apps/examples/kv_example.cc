// Pushes and pulls random data through Pacer and checks every sum exactly.
//
//   mpirun -np 6 build/bin/pacer-kv-example --servers 2
//
// In each round every worker pushes values to the same random set of keys (random counts per key,
// from 1 value to 2M floats = 8 MB), waits, meets the other workers at a barrier, then pulls the
// keys back and checks that each value is the sum of all workers' pushes. Values are small
// integers, so float sums are exact and any difference is an error. Prints one line per check and
// exits non-zero on the first mismatch.
#include <gflags/gflags.h>
#include <pacer/kv_server.h>
#include <pacer/kv_worker.h>
#include <pacer/session.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <set>
#include <vector>

DEFINE_int32(rounds, 5, "push/pull rounds");
DEFINE_int32(max_keys, 16, "most keys per round");
DEFINE_int32(max_values, 2 << 20, "most values (floats) per key");
DEFINE_uint64(seed, 1, "seed of the random key sets and sizes");

namespace {

// Worker w's value at position j of key k: a small integer, so sums of floats are exact.
float ValueOf(int worker, pacer::Key key, size_t j) {
  return static_cast<float>(static_cast<int64_t>((key * 31 + j * 7 + worker * 13) % 17) - 8);
}

struct Round {
  std::vector<pacer::Key> keys;
  std::vector<int> lens;
};

// The same keys and sizes on every worker: all draw from one seed.
Round MakeRound(int round, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> num_keys(1, FLAGS_max_keys);
  std::uniform_int_distribution<int> log_size(0, 21);
  std::set<pacer::Key> keys;
  int n = num_keys(rng);
  while (static_cast<int>(keys.size()) < n) keys.insert(uint64_t(round) * 1000000 + rng() % 100000);
  Round r{std::vector<pacer::Key>(keys.begin(), keys.end()), {}};
  for (size_t i = 0; i < r.keys.size(); ++i) {
    int bits = log_size(rng);
    int len = std::uniform_int_distribution<int>(1 << bits >> 1 | 1, 1 << bits)(rng);
    r.lens.push_back(std::min(len, FLAGS_max_values));
  }
  return r;
}

int RunWorker(pacer::Session& session) {
  pacer::KVWorker<float> kv(session);
  const int me = session.role_index();
  std::mt19937_64 rng(FLAGS_seed);
  for (int round = 0; round < FLAGS_rounds; ++round) {
    Round r = MakeRound(round, rng);
    std::vector<float> vals;
    for (size_t i = 0; i < r.keys.size(); ++i) {
      for (int j = 0; j < r.lens[i]; ++j) vals.push_back(ValueOf(me, r.keys[i], j));
    }
    kv.Wait(kv.Push(r.keys, vals, r.lens));
    session.Barrier(pacer::kWorkerGroup);

    std::vector<float> pulled;
    std::vector<int> lens;
    kv.Wait(kv.Pull(r.keys, &pulled, &lens));
    size_t mismatches = 0, pos = 0;
    if (lens != r.lens) ++mismatches;
    for (size_t i = 0; i < r.keys.size() && mismatches == 0; ++i) {
      for (int j = 0; j < r.lens[i]; ++j, ++pos) {
        float expected = 0;
        for (int w = 0; w < session.num_workers(); ++w) expected += ValueOf(w, r.keys[i], j);
        if (pulled[pos] != expected) {
          std::printf("worker %d round %d: key %lu value %d is %g, expected %g\n", me, round,
                      static_cast<unsigned long>(r.keys[i]), j, pulled[pos], expected);
          ++mismatches;
          break;
        }
      }
    }
    std::printf("worker %d round %d: %zu keys, %zu values (%.2f MB) summed over %d workers: %s\n",
                me, round, r.keys.size(), vals.size(), vals.size() * 4 / 1e6, session.num_workers(),
                mismatches ? "MISMATCH" : "all sums exact");
    std::fflush(stdout);
    if (mismatches) return 1;
    // Nobody pushes the next round's keys before everyone has pulled this round's.
    session.Barrier(pacer::kWorkerGroup);
  }
  return 0;
}

}  // namespace

namespace {

int Run(int argc, char** argv) {
  pacer::Config config = pacer::Config::ParseCommandLine(&argc, &argv);
  pacer::Session session(config);
  if (session.rank() == 0) {
    std::printf("pacer-kv-example: %d servers, %d workers, transport %s\n", session.num_servers(),
                session.num_workers(), session.transport_name().c_str());
    std::fflush(stdout);
  }
  int status = 0;
  if (session.is_server()) {
    pacer::KVServer<float> server(session);
    session.Finalize();
  } else if (session.is_worker()) {
    try {
      status = RunWorker(session);
    } catch (const pacer::Error& e) {
      std::fprintf(stderr, "worker %d: %s\n", session.role_index(), e.what());
      status = 1;
    }
    session.Finalize();
  } else {
    session.Finalize();
  }
  return status;
}

}  // namespace

// A job that cannot start (too few ranks for --servers, no transport) says why in one line.
int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pacer-kv-example: %s\n", e.what());
    return 2;
  }
}
