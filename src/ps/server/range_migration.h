#pragma once

#include <functional>
#include <vector>

#include "pacer/detail/kv_server_core.h"
#include "ps/message.h"
#include "ps/session_core.h"

namespace pacer {
namespace detail {

// A server's part in moving a key range to another server (SAS, STRAGGLERS.md section 3):
//
// 1. The scheduler sends MIGRATE(range, target, new table) to the owner. The owner checks it,
//    installs the new table, so that every later request for the range is redirected, and runs an
//    export on each shard in order with the requests already queued there: those are served
//    first, then the range's keys leave the shard with their whole state, and the pulls still
//    waiting on them are redirected.
// 2. Once every shard has exported, the owner sends the records to the target (MIGRATE_STATE).
// 3. The target installs the new table and the records (again in order on each shard) and
//    acknowledges to the scheduler. Requests that reached it first, routed by the new table, were
//    held until then.
//
// So no update is lost or applied twice: each push is applied by exactly one owner, before the
// export or after the import.
class RangeMigration {
 public:
  using ShardOf = std::function<int(Key)>;
  // Runs a function on a shard, in order with its requests.
  using RunOnShard = std::function<void(int shard, std::function<void(int)>)>;

  RangeMigration(SessionCore& session, int app_id, int shards, ShardOf shard_of,
                 RunOnShard run_on_shard, KVServerCore::ExportHandler export_keys,
                 KVServerCore::ImportHandler import_keys);

  // On the receiving thread, in order with requests. Bad orders are answered with an error
  // naming the range and servers; nothing changes then.
  void OnMigrate(const Message& msg);
  void OnState(const Message& msg);

 private:
  struct Outgoing;
  struct Incoming;
  void SendState(const Outgoing& out);
  void Acknowledge(const Incoming& in);

  SessionCore& session_;
  const int app_id_;
  const int shards_;
  const ShardOf shard_of_;
  const RunOnShard run_on_shard_;
  const KVServerCore::ExportHandler export_keys_;
  const KVServerCore::ImportHandler import_keys_;
};

}  // namespace detail
}  // namespace pacer
