#pragma once

#include "pacer/session.h"
#include "ps/node/node.h"

namespace pacer {

// The node inside `session`. Only the session layer unwraps a Session: it hands each role the
// node it runs on (role_construction.cc), so that no layer below it sees a Session.
inline Node& NodeOf(Session& session) { return *session.node_; }
inline const Node& NodeOf(const Session& session) { return *session.node_; }

}  // namespace pacer
