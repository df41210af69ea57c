// A key's migrated state (MIGRATE_STATE) and a key's checkpoint record, as a server installs
// them: SyncEngine::Import and SyncEngine::Resume on an engine of 2 workers, sgd with momentum,
// and a moved key's record as the server reads it (the skip's kept gradients, then the engine's).
#include <cstddef>
#include <cstdint>

#include "pacer/error.h"
#include "pacer/reducer.h"
#include "server/gradient_cache.h"
#include "server/sync_engine.h"

namespace {

pacer::SyncEngine MakeEngine(pacer::Reducer& reducer) {
  pacer::SyncEngine::Options options;
  options.num_workers = 2;
  options.mode = pacer::SyncMode::Parse("ssp:1");
  options.optimizer = pacer::OptimizerSpec::Parse("sgd:lr=0.1,momentum=0.9");
  return pacer::SyncEngine(options, reducer, [](size_t bytes, uint8_t** writable) {
    return pacer::Buffer::Allocate(bytes, writable);
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto reducer = pacer::MakeCpuReducer(1);
  const pacer::Buffer record = pacer::Buffer::Copy(data, size);
  {
    pacer::SyncEngine engine = MakeEngine(*reducer);
    try {
      engine.Import(7, record);
      engine.Status(7);
    } catch (const pacer::Error&) {
    }
  }
  {
    pacer::SyncEngine engine = MakeEngine(*reducer);
    pacer::GradientCache cache;
    try {
      engine.Import(7, cache.Unpack(7, record));
      cache.BytesOf(7);
    } catch (const pacer::Error&) {
    }
  }
  {
    pacer::SyncEngine engine = MakeEngine(*reducer);
    try {
      engine.Resume(7, record);
      engine.Checkpoint(7);
    } catch (const pacer::Error&) {
    }
  }
  return 0;
}
