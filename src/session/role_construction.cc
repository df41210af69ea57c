// The public role classes' constructors from a Session. Each role's own layer builds it over a
// Node; the session layer is the only one that sees a Session, and hands each role its node here.
#include "pacer/detail/routed_client.h"
#include "pacer/detail/sharded_server.h"
#include "pacer/gradient_sync.h"
#include "pacer/migration_control.h"
#include "pacer/parameter_server.h"
#include "pacer/relay_control.h"
#include "pacer/sync_control.h"
#include "session/node_of.h"

namespace pacer {

ParameterServer::ParameterServer(Session& session, int app_id)
    : ParameterServer(NodeOf(session), app_id) {}

GradientSync::GradientSync(Session& session, int app_id) : GradientSync(NodeOf(session), app_id) {}

MigrationControl::MigrationControl(Session& session, int app_id)
    : MigrationControl(NodeOf(session), app_id) {}

RelayControl::RelayControl(Session& session) : RelayControl(NodeOf(session)) {}

SyncControl::SyncControl(Session& session, int app_id) : SyncControl(NodeOf(session), app_id) {}

namespace detail {

RoutedClient::RoutedClient(Session& session, int app_id, size_t value_size)
    : RoutedClient(NodeOf(session), app_id, value_size) {}

ShardedServer::ShardedServer(Session& session, int app_id, size_t value_size, Handler handler)
    : ShardedServer(NodeOf(session), app_id, value_size, std::move(handler)) {}

}  // namespace detail
}  // namespace pacer
