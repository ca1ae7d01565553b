// SlowestCursor: where the parser of a destination must restart so that no
// subscribed client misses anything — the earliest cursor of its clients.
#pragma once

#include <optional>
#include <string>

#include "canal/common/log_position.h"
#include "canal/common/status.h"
#include "canal/meta/meta_manager.h"

namespace canal::meta {

// The minimum cursor, in stream order (LogPosition's operator<), over the
// clients subscribed to `destination` that have one; nullopt when none has
// (no client, or none has acked yet). A client unsubscribed while this runs
// is left out. Other errors of `meta` come back with the destination named.
Status SlowestCursor(MetaManager* meta, const std::string& destination, std::optional<LogPosition>* out);

}  // namespace canal::meta
