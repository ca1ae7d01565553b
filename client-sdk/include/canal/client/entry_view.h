// The SDK's zero-copy entry views: proto/'s (canal/proto/entry_view.h, where
// the reading rules are documented), under the client namespace so that a
// client writes canal::client::EntryView as before. The server's MQ mode
// reads entries with the same views without linking the SDK.
#pragma once

#include "canal/proto/entry_view.h"

namespace canal::client {

using proto::ColumnView;
using proto::EntryTypeOf;
using proto::EntryView;
using proto::EventTypeOf;
using proto::HeaderView;
using proto::IsDdl;
using proto::IsNull;
using proto::PairCursor;
using proto::PairView;
using proto::RowChangeView;
using proto::RowDataView;
using proto::TransactionBeginView;
using proto::TransactionEndView;

}  // namespace canal::client
