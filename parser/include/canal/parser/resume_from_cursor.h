// ResumePointFromCursor: where the parser restarts for a stored client cursor.
//
// Cursors come from our sink (the safe position of the last acked batch) or
// from a Canal data directory taken over. The mapping:
//
//   transaction_begin != 0  (ours: acked up to the end of a piece of a large
//                            transaction; `position` is that piece's end)
//       -> dump from `transaction_begin`, skip_until = `position`: the
//          transaction is re-read from its start and the events already
//          handed over are skipped, so nothing repeats and nothing is lost.
//   transaction_begin == 0  (a transaction boundary)
//       -> dump from `position`, nothing skipped, whatever `included` says.
//
// Why `included` does not change the boundary case: our sink stores the end
// of the last acked transaction with included=false ("resume at it"), which
// is exact. Canal stores the header offset of the last acked TRANSACTIONEND,
// TRANSACTIONBEGIN (GTID-less) or DDL entry, also with included=false (and
// included=true only in the rare cursor taken from its store at subscribe
// time), and its parser dumps from that offset ignoring `included`. A Canal
// cursor thus makes us re-read the event it names, exactly as Canal would:
// the transaction again when it names a BEGIN, the DDL again when it names a
// DDL, a lone commit event when it names an XID (the parser must tolerate
// that one). The two kinds of cursor cannot be told apart without reading the
// binlog, and re-reading one event is the side that loses nothing.
//
// GTID and time: for a boundary the result carries the cursor's GTID and time
// (seconds); inside a transaction they describe that unfinished transaction,
// not the last complete one, so the result leaves them empty.
//
// InvalidArgument (naming the cursor, and how to fix a hand-edited one) for
// an empty journal name, an offset before the first event (4), or a
// transaction_begin that is not before `position`. Pure; thread-safe.
#pragma once

#include "canal/common/log_position.h"
#include "canal/common/status.h"
#include "canal/parser/transaction.h"

namespace canal::parser {

// First binlog event offset: what follows the 4-byte magic.
inline constexpr uint64_t kFirstEventOffset = 4;

Status ResumePointFromCursor(const LogPosition& cursor, ResumePoint* out);

}  // namespace canal::parser
