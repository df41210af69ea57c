#include "worker/checkpoint_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "common/byte_stream.h"
#include "common/str_cat.h"
#include "pacer/error.h"

namespace pacer {
namespace {

constexpr uint64_t kMagic = 0x31504b4352434150ull;  // "PACRCKP1" in little-endian bytes

void Encode(const CheckpointFile& file, ByteWriter& out) {
  out.Put(kMagic);
  out.Put(file.clock);
  out.PutArray(file.optimizer.data(), file.optimizer.size());
  out.Put(static_cast<uint64_t>(file.tensors.size()));
  for (const auto& [name, count] : file.tensors) {
    out.PutArray(name.data(), name.size());
    out.Put(count);
  }
  out.Put(static_cast<uint64_t>(file.records.size()));
  for (const auto& [key, record] : file.records) {
    out.Put(key);
    out.PutArray(record);
  }
}

std::string SystemError() { return std::strerror(errno); }

}  // namespace

void CheckpointFile::Write(const std::string& path) const {
  const Buffer bytes = EncodeRecord(Buffer::Allocate, [&](ByteWriter& out) { Encode(*this, out); });
  const std::string partial = path + ".partial";
  {
    std::ofstream file(partial, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    file.flush();
    if (!file) throw Error(StrCat("cannot write checkpoint ", partial, ": ", SystemError()));
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    throw Error(StrCat("cannot rename checkpoint ", partial, " to ", path, ": ", SystemError()));
  }
}

CheckpointFile CheckpointFile::Read(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error(StrCat("cannot read checkpoint ", path, ": ", SystemError()));
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                                   std::istreambuf_iterator<char>());
  return Decode(bytes.data(), bytes.size(), StrCat("checkpoint ", path));
}

CheckpointFile CheckpointFile::Decode(const uint8_t* data, size_t size, const std::string& what) {
  ByteReader in(data, size, what);
  if (size < sizeof(kMagic) || in.Get<uint64_t>() != kMagic) {
    throw Error(StrCat(in.what(), " is not a Pacer checkpoint (GradientSync::Checkpoint)"));
  }
  CheckpointFile c;
  c.clock = in.Get<int64_t>();
  const std::vector<char> optimizer = in.GetArray<char>();
  c.optimizer.assign(optimizer.begin(), optimizer.end());
  for (uint64_t i = 0, n = in.Get<uint64_t>(); i < n; ++i) {
    const std::vector<char> name = in.GetArray<char>();
    c.tensors.emplace_back(std::string(name.begin(), name.end()), in.Get<uint64_t>());
  }
  for (uint64_t i = 0, n = in.Get<uint64_t>(); i < n; ++i) {
    const Key key = in.Get<Key>();
    c.records.emplace_back(key, in.GetArray<uint8_t>());
  }
  if (!in.done()) throw Error(StrCat(in.what(), ": bytes left over after the last record"));
  return c;
}

}  // namespace pacer
