// Tests only: makes ZooKeeper expire a client's session now, the way a long
// network partition would (a second handle joins the session with its id and
// password and closes it); the client then reports kExpired. Kept out of
// ZkClient's interface so production code cannot reach it.
#pragma once

#include "canal/common/status.h"
#include "canal/coord/zk_client.h"

namespace canal::coord::testing {

// `client` must be one ZkClient::Create made (NotSupported otherwise).
Status ExpireSession(ZkClient& client);

}  // namespace canal::coord::testing
