#include "pacer/detail/sharded_server.h"

#include "server/request_shards.h"

namespace pacer {
namespace detail {

ShardedServer::ShardedServer(Node& node, int app_id, size_t value_size, Handler handler)
    : shards_(std::make_unique<RequestShards>(node, app_id, value_size, std::move(handler))) {}

ShardedServer::~ShardedServer() = default;

void ShardedServer::SetInPlaceSum(InPlaceTargets targets) {
  shards_->SetInPlaceSum(std::move(targets));
}
int64_t ShardedServer::pushes_summed_in_place() const { return shards_->pushes_summed_in_place(); }
void ShardedServer::Start() { shards_->Start(); }
int ShardedServer::num_shards() const { return shards_->num_shards(); }
int ShardedServer::rank() const { return shards_->node().rank(); }
Reducer& ShardedServer::reducer() { return shards_->node().reducer(); }
Buffer ShardedServer::Allocate(size_t bytes, uint8_t** writable) {
  return shards_->Allocate(bytes, writable);
}
void ShardedServer::AddKeys(int64_t keys) { shards_->AddKeys(keys); }

void ShardedServer::Respond(const RequestMeta& meta, Buffer keys, std::vector<Buffer> values,
                            Buffer lens, const ResponseStamp& stamp) {
  shards_->Respond(meta, std::move(keys), std::move(values), std::move(lens), stamp);
}

void ShardedServer::RespondError(const RequestMeta& meta, const std::string& error) {
  shards_->RespondError(meta, error);
}

}  // namespace detail
}  // namespace pacer
