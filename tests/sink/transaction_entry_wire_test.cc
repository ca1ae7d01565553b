// TRANSACTIONBEGIN and TRANSACTIONEND entries written on the wire
// (wire::WriteTransactionEntry, behind EntryBuilder::BeginEntry/EndEntry)
// against the protobuf objects that wrote them before (entry_wire_reference.h): the same bytes for
// ordinary, default and extreme contexts (no allocation once warm: in
// entry_wire_test.cc, the binary's one allocation counter).
#include <gtest/gtest.h>

#include <string>

#include "support/entry_wire_reference.h"
#include "canal/entry.pb.h"
#include "canal/sink/entry_builder.h"
#include "canal/sink/entry_sink.h"

namespace canal::sink {
namespace {

std::string Reference(const EntryContext& ctx, bool begin, uint64_t thread_id, const std::string& xid) {
  return wire::ReferenceTransactionEntry(ctx, begin, thread_id, xid);
}

EntryContext Ordinary() {
  EntryContext c;
  c.position.journal_name = "mariadb-bin.000042";
  c.position.position = 123456789;
  c.position.server_id = 1;
  c.position.timestamp_ms = 1700000000123;
  c.position.gtid = "0-1-987654";
  c.event_length = 31;
  return c;
}

EntryContext Extreme() {
  EntryContext c = Ordinary();
  c.position.position = uint64_t{1} << 40;
  c.position.server_id = 0xFFFFFFFFu;
  c.position.timestamp_ms = -1;  // negative int64: ten bytes
  c.position.gtid = std::string(300, 'g');
  c.position.journal_name = std::string(200, 'f');
  c.event_length = uint64_t{1} << 33;
  return c;
}

void ExpectSame(const EntryContext& ctx, uint64_t thread_id, const std::string& xid, const char* what) {
  EntryBuilder b;
  std::string got = "left over from an earlier entry";
  ASSERT_TRUE(b.BeginEntry(ctx, thread_id, &got).ok());
  EXPECT_TRUE(got == Reference(ctx, true, thread_id, xid)) << what << " (begin)";
  ASSERT_TRUE(b.EndEntry(ctx, xid, &got).ok());
  EXPECT_TRUE(got == Reference(ctx, false, 0, xid)) << what << " (end)";
  entry::Entry parsed;
  ASSERT_TRUE(parsed.ParseFromString(got)) << what;
  EXPECT_EQ(parsed.entrytype(), entry::TRANSACTIONEND) << what;
}

TEST(TransactionEntryWire, OrdinaryContextMatchesProtobuf) { ExpectSame(Ordinary(), 77, "12345", "ordinary"); }

TEST(TransactionEntryWire, DefaultsAreLeftOutAsProtobufLeavesThemOut) {
  // Every scalar at its default: the store values are empty and left out too.
  ExpectSame(EntryContext{}, 0, "", "zero context");
  EntryContext c = Ordinary();
  c.position.gtid.clear();
  c.position.timestamp_ms = 0;
  ExpectSame(c, 0, "", "no gtid, no time, no thread, no xid");
}

TEST(TransactionEntryWire, ExtremeValuesMatchProtobuf) {
  ExpectSame(Extreme(), ~uint64_t{0}, std::string(1000, '9'), "extreme");
}

// A snapshot chunk's BEGIN/END carry header props; the Extreme context's long
// file name and GTID put them after multi-byte lengths.
TEST(TransactionEntryWire, HeaderPropsMatchProtobuf) {
  const std::string long_value(200, 'v');
  const HeaderProp props[] = {{kSnapshotPropKey, kSnapshotPropValue}, {"", ""}, {"k", long_value}};
  for (const EntryContext& ctx : {Ordinary(), EntryContext{}, Extreme()}) {
    EntryBuilder b;
    std::string got = "left over from an earlier entry";
    ASSERT_TRUE(b.BeginEntry(ctx, 5, props, &got).ok());
    EXPECT_TRUE(got == wire::ReferenceTransactionEntry(ctx, true, 5, "", props));
    ASSERT_TRUE(b.EndEntry(ctx, "", props, &got).ok());
    EXPECT_TRUE(got == wire::ReferenceTransactionEntry(ctx, false, 0, "", props));
    entry::Entry parsed;
    ASSERT_TRUE(parsed.ParseFromString(got));
    ASSERT_EQ(parsed.header().props_size(), 3);
    EXPECT_EQ(parsed.header().props(0).key(), "snapshot");
    EXPECT_EQ(parsed.header().props(0).value(), "true");
    EXPECT_EQ(parsed.header().props(2).value(), long_value);
  }
}

}  // namespace
}  // namespace canal::sink
