// Writes the seed corpora of the fuzz targets (corpus/<target>/): real encodings of each input,
// made by the encoders the peers use. usage: pacer-fuzz-seeds CORPUS_DIR
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "pacer/reducer.h"
#include "ps/messages/message.h"
#include "ps/messages/telemetry.h"
#include "ps/routing/router.h"
#include "server/gradient_cache.h"
#include "server/sync_engine.h"
#include "worker/checkpoint_file.h"

namespace {

using namespace pacer;

std::filesystem::path g_root;

void Seed(const std::string& target, int n, const std::vector<uint8_t>& bytes) {
  const std::filesystem::path dir = g_root / target;
  std::filesystem::create_directories(dir);
  std::ofstream(dir / ("seed-" + std::to_string(n)), std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> BytesOf(const Buffer& b) {
  const uint8_t* p = b.as<uint8_t>();
  return std::vector<uint8_t>(p, p + b.size());
}

// A message as it travels: its header, then its payload's fragments.
std::vector<uint8_t> Frame(const Message& msg) {
  std::vector<uint8_t> bytes = EncodeHeader(msg);
  for (const Buffer& fragment : PayloadFragments(msg)) {
    const std::vector<uint8_t> part = BytesOf(fragment);
    bytes.insert(bytes.end(), part.begin(), part.end());
  }
  return bytes;
}

void MessageSeeds() {
  std::vector<Key> keys(300);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = i * 977;
  std::vector<int32_t> lens(keys.size(), 2);
  std::vector<float> vals(keys.size() * 2, 1.5f);
  int n = 0;
  for (proto::Command command : {proto::PUSH, proto::PULL, proto::PUSH_PULL, proto::BARRIER,
                                 proto::HEARTBEAT, proto::TASK, proto::ROUTING_UPDATE}) {
    for (size_t count : {size_t{1}, size_t{8}, keys.size()}) {  // the last: index in the payload
      Message msg;
      msg.meta.set_command(command);
      msg.meta.set_sender(3);
      msg.meta.set_request_id(41);
      msg.meta.set_value_size(sizeof(float));
      if (command == proto::PUSH || command == proto::PULL || command == proto::PUSH_PULL) {
        msg.keys = Buffer(keys.data(), count * sizeof(Key));
        msg.lens = Buffer(lens.data(), count * sizeof(int32_t));
        if (command != proto::PULL) msg.vals = {Buffer(vals.data(), count * 2 * sizeof(float))};
      }
      Seed("message_frame", n++, Frame(msg));
      if (command != proto::PUSH) break;
    }
  }
}

void ReportSeeds() {
  IterationReport iteration;
  iteration.iteration = 12;
  iteration.clock = 11;
  iteration.compute_s = 0.02;
  Seed("reports", 0, BytesOf(EncodeReport(iteration)));
  ServerReport server;
  server.range_bytes = {1 << 20, 0, 4096};
  Seed("reports", 1, BytesOf(EncodeReport(server)));
}

void RoutingSeeds() {
  Router router(4);
  std::string bytes = router.Encode();
  Seed("routing_table", 0, std::vector<uint8_t>{3});
  std::vector<uint8_t> seed{3};  // 4 servers
  seed.insert(seed.end(), bytes.begin(), bytes.end());
  Seed("routing_table", 1, seed);
  router.Move(5, 2);
  bytes = router.Encode();
  seed.assign(1, 3);
  seed.insert(seed.end(), bytes.begin(), bytes.end());
  Seed("routing_table", 2, seed);
}

void MigrationSeeds() {
  const auto reducer = MakeCpuReducer(1);
  SyncEngine::Options options;
  options.num_workers = 2;
  options.mode = SyncMode::Parse("ssp:1");
  options.optimizer = OptimizerSpec::Parse("sgd:lr=0.1,momentum=0.9");
  SyncEngine engine(options, *reducer, [](size_t bytes, uint8_t** writable) {
    return Buffer::Allocate(bytes, writable);
  });
  const std::vector<float> values(64, 0.25f);
  engine.Init(7, 0, values.data(), values.size());
  Seed("migration_record", 0, BytesOf(engine.Checkpoint(7)));
  for (const SyncEngine::KeyRecord& record : engine.Export([](Key) { return true; })) {
    Seed("migration_record", 1, BytesOf(record.second));
    // As a server sends it: with a skipping worker's kept gradient.
    GradientCache cache;
    cache.Keep(1, 7, Buffer::Copy(values.data(), values.size() * sizeof(float)));
    Seed("migration_record", 2, BytesOf(cache.Pack(7, record.second)));
  }
}

void CheckpointSeeds() {
  CheckpointFile file;
  file.clock = 20;
  file.optimizer = "sgd:lr=0.1,momentum=0.9";
  file.tensors = {{"weights", 40}, {"biases", 4}};
  file.records = {{3, std::vector<uint8_t>(48, 1)}, {9, std::vector<uint8_t>(20, 2)}};
  const std::string path = (g_root / "checkpoint.tmp").string();
  file.Write(path);
  std::ifstream in(path, std::ios::binary);
  Seed("checkpoint_file", 0, std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {}));
  std::filesystem::remove(path);
}

void SpecSeeds() {
  int n = 0;
  for (const char* text :
       {"worker:3:compute=3x", "worker:*:compute=3x@p=0.1", "worker:2:compute=3x@period=200:50",
        "link:4->1:bw=100MB/s", "link:w0->*:delay=2ms", "server:1:service=3x@window=60s:60s",
        "server:*:rate=400MB/s", "1.5GiB/s", "bsp", "ssp:3", "backup:1", "epsp:0", "consgd:0.5",
        "sgd:lr=0.1,momentum=0.9,nesterov,wd=1e-4",
        "adamw:lr=0.001,beta1=0.9,beta2=0.999,eps=1e-8,wd=0.01,lr_steps=10/20,lr_factor=0.1"}) {
    const std::string s(text);
    Seed("text_specs", n++, std::vector<uint8_t>(s.begin(), s.end()));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  g_root = argv[1];
  MessageSeeds();
  ReportSeeds();
  RoutingSeeds();
  MigrationSeeds();
  CheckpointSeeds();
  SpecSeeds();
  return 0;
}
