#pragma once

#include <functional>
#include <vector>

#include "ps/messages/message.h"
#include "ps/node/node.h"
#include "server/request_shards.h"

namespace pacer {
namespace detail {

// A server's part in moving a key range to another server (SAS, STRAGGLERS.md section 3):
//
// 1. The scheduler sends MIGRATE(range, target, new table) to the owner. The owner checks it and
//    installs the new table, so that every later request for the range is redirected. On each
//    shard, ahead of the requests queued there, it first serves the queued requests that touch
//    the range (and the earlier ones that share keys with them, so no key's requests change
//    order); then the range's keys leave the shard with their whole state, and the pulls still
//    waiting on them are redirected. The range's pause does not wait for the rest of a slow
//    server's backlog.
// 2. Once every shard has exported, the owner sends the records to the target (MIGRATE_STATE).
// 3. The target installs the new table and the records (ahead on each shard: no request queued
//    there touches keys it did not own) and acknowledges to the scheduler. Requests that reached
//    it first, routed by the new table, were held until then.
//
// So no update is lost or applied twice: each push is applied by exactly one owner, before the
// export or after the import.
class RangeMigration {
 public:
  // What the migration needs of the server's shards.
  struct Shards {
    int count;
    std::function<int(Key)> shard_of;
    // Runs a function on a shard ahead of the requests queued there.
    std::function<void(int shard, std::function<void(int)>)> run_ahead;
    // On a shard's thread: serves now the queued requests that touch keys `moving` selects, with
    // the earlier ones that share keys with them.
    std::function<void(int shard, const std::function<bool(Key)>& moving)> serve_queued;
  };

  RangeMigration(Node& node, int app_id, Shards shards, RequestShards::ExportHandler export_keys,
                 RequestShards::ImportHandler import_keys);

  // On the receiving thread, in order with requests. Bad orders are answered with an error
  // naming the range and servers; nothing changes then.
  void OnMigrate(const Message& msg);
  void OnState(const Message& msg);

 private:
  struct Outgoing;
  struct Incoming;
  void SendState(const Outgoing& out);
  void Acknowledge(const Incoming& in);

  Node& node_;
  const int app_id_;
  const Shards shards_;
  const RequestShards::ExportHandler export_keys_;
  const RequestShards::ImportHandler import_keys_;
};

}  // namespace detail
}  // namespace pacer
