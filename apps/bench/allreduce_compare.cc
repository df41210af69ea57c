#include "allreduce_compare.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace pacer {
namespace bench {
namespace {

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double SlowestOver(MPI_Comm comm, double seconds) {
  double slowest = 0;
  MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
  return slowest;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void ExpectAll(const std::vector<float>& v, float expected, const char* what) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != expected) {
      std::fprintf(stderr, "%s: element %zu is %g, expected %g\n", what, i, v[i], expected);
      std::exit(1);
    }
  }
}

}  // namespace

AllreduceFigures CompareWithAllreduce(Session& session, KVWorker<float>& kv, MPI_Comm workers,
                                      size_t bytes, size_t chunk_bytes, int repeats) {
  const size_t count = bytes / sizeof(float), chunk = chunk_bytes / sizeof(float);
  const int num_workers = session.num_workers();
  std::vector<float> grads(count, 1.0f), sums(count);

  // Each server owns one contiguous region of the gradients (as BytePS partitions them): chunk i
  // goes to server i * servers / chunks, under the next key that server owns. Each server's
  // share is then one contiguous buffer to send and to receive into.
  std::vector<Key> keys;
  std::vector<int> lens;
  const size_t chunks = (count + chunk - 1) / chunk;
  Key candidate = Key{1} << 40;
  for (size_t i = 0; i < chunks; ++i) {
    const int server = static_cast<int>(i * session.num_servers() / chunks);
    while (session.ServerOfKey(candidate) != server) ++candidate;
    keys.push_back(candidate++);
    lens.push_back(static_cast<int>(std::min(chunk, count - i * chunk)));
  }

  auto time_allreduce = [&] {
    std::fill(sums.begin(), sums.end(), 1.0f);
    MPI_Barrier(workers);
    double t0 = Seconds();
    MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, workers);
    double t = SlowestOver(workers, Seconds() - t0);
    ExpectAll(sums, float(num_workers), "MPI_Allreduce");
    return t;
  };
  int pushes = 0;
  auto time_pacer = [&] {
    MPI_Barrier(workers);
    double t0 = Seconds();
    kv.Wait(kv.ZPush(keys, grads, lens));
    session.Barrier(kWorkerGroup);  // every gradient is in before anyone pulls the sum
    kv.Wait(kv.ZPull(keys, Span<float>(sums.data(), sums.size())));
    double t = SlowestOver(workers, Seconds() - t0);
    ExpectAll(sums, float(num_workers * ++pushes), "Pacer push+pull");
    session.Barrier(kWorkerGroup);  // nobody pushes again before everyone has checked
    return t;
  };
  // Both warm up first; then they take turns, so that a slow phase of a shared machine falls on
  // both alike.
  time_allreduce();
  time_pacer();
  std::vector<double> allreduce, pacer;
  for (int r = 0; r < repeats; ++r) {
    allreduce.push_back(time_allreduce());
    pacer.push_back(time_pacer());
  }
  return {Median(allreduce) * 1e3, Median(pacer) * 1e3};
}

}  // namespace bench
}  // namespace pacer
