#include "server/range_migration.h"

#include <glog/logging.h>

#include <limits>
#include <memory>
#include <mutex>

#include "common/str_cat.h"
#include "pacer/error.h"
#include "ps/routing/router.h"

namespace pacer {
namespace detail {

struct RangeMigration::Outgoing {
  proto::Meta order;  // the scheduler's MIGRATE
  std::mutex mu;
  int remaining = 0;  // shards still to export
  std::vector<RequestShards::MovedKey> records;
};

struct RangeMigration::Incoming {
  proto::Meta order;  // the scheduler's MIGRATE, as the owner passed it on
  int64_t bytes = 0;
  std::mutex mu;
  int remaining = 0;  // shards still to import
  std::string error;
};

RangeMigration::RangeMigration(Node& node, int app_id, Shards shards,
                               RequestShards::ExportHandler export_keys,
                               RequestShards::ImportHandler import_keys)
    : node_(node),
      app_id_(app_id),
      shards_(std::move(shards)),
      export_keys_(std::move(export_keys)),
      import_keys_(std::move(import_keys)) {}

void RangeMigration::OnMigrate(const Message& msg) {
  const proto::Meta& order = msg.meta;
  const int me = node_.roles().IndexOf(node_.rank()), servers = node_.roles().num_servers();
  const int range = order.range(), target = order.target();
  std::shared_ptr<const Router> next;
  try {
    if (order.sender() != 0) {
      throw Error(
          StrCat("only the scheduler (rank 0) moves key ranges, not rank ", order.sender()));
    }
    const std::shared_ptr<const Router> now = node_.routing().current();
    if (range < 0 || range >= now->num_ranges()) {
      throw Error(StrCat("range ", range, " does not exist: the table has ranges 0..",
                         now->num_ranges() - 1));
    }
    if (now->ranges()[range].server != me) {
      throw Error(StrCat("range ", range, " belongs to server ", now->ranges()[range].server,
                         ", not to server ", me, " (rank ", node_.rank(), ")"));
    }
    if (target < 0 || target >= servers || target == me) {
      throw Error(StrCat("range ", range, " cannot move from server ", me, " to server ", target,
                         ": the job has servers 0..", servers - 1));
    }
    next = std::make_shared<const Router>(Router::Decode(order.routing(), servers));
    if (next->epoch() <= now->epoch() || next->num_ranges() != now->num_ranges() ||
        next->ranges()[range].server != target) {
      throw Error(StrCat("the new table (epoch ", next->epoch(), ") does not give range ", range,
                         " to server ", target, " after this server's (epoch ", now->epoch(), ")"));
    }
  } catch (const Error& e) {
    node_.cluster().Reject(order, e.what());
    return;
  }
  node_.routing().Install(*next);  // from now on requests for the range are redirected
  auto out = std::make_shared<Outgoing>();
  out->order = order;
  out->remaining = shards_.count;
  for (int shard = 0; shard < shards_.count; ++shard) {
    shards_.run_ahead(shard, [this, out, next, range](int s) {
      const std::function<bool(Key)> moving = [&](Key key) { return next->RangeOf(key) == range; };
      shards_.serve_queued(s, moving);
      std::vector<RequestShards::MovedKey> records = export_keys_(s, moving);
      bool last;
      {
        std::lock_guard<std::mutex> lock(out->mu);
        for (RequestShards::MovedKey& r : records) out->records.push_back(std::move(r));
        last = --out->remaining == 0;
      }
      if (last) SendState(*out);
    });
  }
}

void RangeMigration::SendState(const Outgoing& out) {
  Message msg;
  proto::Meta& meta = msg.meta;
  meta.set_command(proto::MIGRATE_STATE);
  meta.set_sender(node_.rank());
  meta.set_app_id(app_id_);
  meta.set_client_id(out.order.client_id());
  meta.set_request_id(out.order.request_id());
  meta.set_routing(out.order.routing());
  meta.set_range(out.order.range());
  meta.set_target(out.order.target());
  meta.set_value_size(1);
  std::vector<Key> keys;
  std::vector<int32_t> lens;
  for (const RequestShards::MovedKey& r : out.records) {
    if (r.second.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
      node_.cluster().Reject(out.order, StrCat("key ", r.first, " holds ", r.second.size(),
                                               " bytes of state, more than one message carries"));
      return;
    }
    keys.push_back(r.first);
    lens.push_back(static_cast<int32_t>(r.second.size()));
    msg.vals.push_back(r.second);
  }
  msg.keys = Buffer::FromVector(std::move(keys));
  msg.lens = Buffer::FromVector(std::move(lens));
  const proto::Meta order = out.order;
  Node* node = &node_;
  node_.transport().Send(
      node_.roles().ServerRank(out.order.target()), msg, [node, order](const std::string& error) {
        if (!error.empty()) {
          node->cluster().Reject(order, "sending the range's state failed: " + error);
        }
      });
}

void RangeMigration::OnState(const Message& msg) {
  const proto::Meta& meta = msg.meta;
  auto in = std::make_shared<Incoming>();
  in->order = meta;
  in->order.set_sender(0);  // answers go to the scheduler, which ordered the move
  in->order.set_command(proto::MIGRATE);
  const int me = node_.roles().IndexOf(node_.rank()), range = meta.range();
  const Key* keys = msg.keys.as<Key>();
  const size_t n = msg.num_keys();
  const int32_t* lens = msg.lens.as<int32_t>();
  std::vector<std::vector<RequestShards::MovedKey>> by_shard(shards_.count);
  try {
    if (node_.roles().RoleOf(meta.sender()) != Role::kServer) {
      throw Error(StrCat("rank ", meta.sender(), " sent key state but is not a server"));
    }
    const Router next = Router::Decode(meta.routing(), node_.roles().num_servers());
    if (range < 0 || range >= next.num_ranges() || next.ranges()[range].server != me) {
      throw Error(StrCat("rank ", meta.sender(), " sent range ", range,
                         ", which the new table does not give to server ", me));
    }
    if (next.epoch() <= node_.routing().current()->epoch()) {
      throw Error(StrCat("rank ", meta.sender(), " sent range ", range, " under epoch ",
                         next.epoch(), ", but this server is at epoch ",
                         node_.routing().current()->epoch()));
    }
    if (n > 0 && (lens == nullptr || meta.value_size() != 1)) {
      throw Error(StrCat("rank ", meta.sender(), " sent ", n, " keys' state without their sizes"));
    }
    const Buffer values = msg.vals_buffer();
    size_t offset = 0;
    for (size_t i = 0; i < n; ++i) {
      if (next.RangeOf(keys[i]) != range) {
        throw Error(StrCat("rank ", meta.sender(), " sent key ", keys[i], " with range ", range,
                           ", but it lies in range ", next.RangeOf(keys[i])));
      }
      if (lens[i] < 0 || static_cast<size_t>(lens[i]) > values.size() - offset) {
        throw Error(StrCat("rank ", meta.sender(), " sent ", lens[i], " bytes of state for key ",
                           keys[i], " with ", values.size() - offset, " bytes left"));
      }
      by_shard[shards_.shard_of(keys[i])].push_back({keys[i], values.Slice(offset, lens[i])});
      offset += static_cast<size_t>(lens[i]);
    }
    in->bytes = static_cast<int64_t>(values.size());
    node_.routing().Install(next);
  } catch (const Error& e) {
    node_.cluster().Reject(in->order, e.what());
    return;
  }
  in->remaining = shards_.count;
  for (int shard = 0; shard < shards_.count; ++shard) {
    shards_.run_ahead(shard, [this, in, records = std::move(by_shard[shard])](int s) {
      std::string error;
      try {
        import_keys_(s, records);
      } catch (const std::exception& e) {
        error = e.what();
        LOG(ERROR) << "server rank " << node_.rank() << ": " << error;
      }
      bool last;
      {
        std::lock_guard<std::mutex> lock(in->mu);
        if (!error.empty() && in->error.empty()) in->error = error;
        last = --in->remaining == 0;
      }
      if (last) Acknowledge(*in);
    });
  }
}

void RangeMigration::Acknowledge(const Incoming& in) {
  if (!in.error.empty()) {
    node_.cluster().Reject(in.order, in.error);
    return;
  }
  Message ack;
  ack.meta.set_command(proto::MIGRATE);
  ack.meta.set_is_response(true);
  ack.meta.set_sender(node_.rank());
  ack.meta.set_app_id(app_id_);
  ack.meta.set_client_id(in.order.client_id());
  ack.meta.set_request_id(in.order.request_id());
  ack.meta.set_range(in.order.range());
  ack.meta.set_moved_bytes(in.bytes);
  try {
    node_.transport().Send(0, ack, nullptr);
  } catch (const std::exception& e) {
    LOG(ERROR) << "server rank " << node_.rank() << ": " << e.what();
  }
}

}  // namespace detail
}  // namespace pacer
