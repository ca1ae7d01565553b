// support/mysql_binlog_writer.h checked two ways: its events against bytes
// MySQL 8.0.40 and 9.6.0 wrote (the fixtures' FORMAT_DESCRIPTIONs, a
// GTID_TAGGED event and a tagged PREVIOUS_GTIDS), and whole written files
// against the project's decoder (every GTID, row, log_pos and checksum, the
// PREVIOUS_GTIDS set, the closing ROTATE).
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "canal/parser/binlog/binlog_file_reader.h"
#include "canal/parser/binlog/event_decoder.h"
#include "replay_test_util.h"
#include "support/event_bytes.h"
#include "support/fixtures.h"
#include "support/mysql_binlog_writer.h"
#include "support/row_render.h"

namespace canal::testing {
namespace {

namespace eb = event_bytes;

constexpr char kUuidA[] = "11111111-aaaa-4aaa-8aaa-00000000000a";
constexpr char kUuidB[] = "22222222-bbbb-4bbb-8bbb-00000000000b";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

uint64_t Le(std::string_view s, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= uint64_t{static_cast<uint8_t>(s[at + i])} << (8 * i);
  return v;
}

// The event at `offset` of a recorded file.
std::string EventAt(const std::string& file, size_t offset) { return file.substr(offset, Le(file, offset + 9, 4)); }

TEST(MysqlBinlogWriter, FormatDescriptionsMatchRecordedMysql80And96) {
  CANAL_REQUIRE_FIXTURES();
  for (const auto& [fixture, version] : {std::pair{"rust_mysql_common/time_issue.000001", "8.0.40"},
                                         std::pair{"rust_mysql_common/binlog_transaction_with_GTID_TAG.000001",
                                                   "9.6.0"}}) {
    SCOPED_TRACE(fixture);
    const std::string recorded = EventAt(ReadAll(FixturePath(fixture)), 4);
    ASSERT_GT(recorded.size(), 19u);
    std::string fde = eb::FormatDescriptionFor(version, true);
    eb::SetTimestamp(&fde, static_cast<uint32_t>(Le(recorded, 0, 4)));
    eb::SetServerId(&fde, static_cast<uint32_t>(Le(recorded, 5, 4)));
    eb::SetLogPos(&fde, static_cast<uint32_t>(Le(recorded, 13, 4)));
    eb::AddChecksum(&fde);
    EXPECT_EQ(fde, recorded);
  }
}

TEST(MysqlBinlogWriter, TaggedGtidAndPreviousGtidsMatchRecordedMysql96) {
  CANAL_REQUIRE_FIXTURES();
  const std::string file = ReadAll(FixturePath("rust_mysql_common/binlog_transaction_with_GTID_TAG.000001"));
  binlog::EventDecoder decoder;
  binlog::BinlogFileReader reader(&decoder);
  ASSERT_TRUE(reader.Open(FixturePath("rust_mysql_common/binlog_transaction_with_GTID_TAG.000001")).ok());
  int compared = 0;
  for (;;) {
    binlog::Event ev;
    bool eof = false;
    ASSERT_TRUE(reader.Next(&ev, &eof).ok());
    if (eof) break;
    const std::string_view recorded_body = ev.raw.substr(19, ev.raw.size() - 19 - 4);
    std::string body;
    if (const auto* p = ev.As<binlog::PreviousGtidsEvent>()) {
      ASSERT_TRUE(PreviousGtidsBody(p->ToString(), &body).ok());
      EXPECT_EQ(body, recorded_body) << p->ToString();
      ++compared;
    } else if (const auto* g = ev.As<binlog::GtidEvent>(); g != nullptr && !g->tag.empty()) {
      GtidEventFields f;
      f.uuid = g->ToString().substr(0, 36);
      f.tag = g->tag;
      f.gno = g->gno;
      f.flags = g->flags;
      f.last_committed = g->last_committed;
      f.sequence_number = g->sequence_number;
      f.commit_timestamp_us = g->immediate_commit_timestamp;
      f.transaction_length = g->transaction_length;
      f.server_version = 90600;
      ASSERT_TRUE(GtidTaggedBody(f, &body).ok());
      EXPECT_EQ(body, recorded_body) << g->ToString();
      ++compared;
    }
  }
  EXPECT_EQ(compared, 2);
}

// What the project's decoder reads back from a written file.
struct ReadBack {
  std::vector<std::string> gtids;  // GtidEvent::ToString, "" for anonymous
  std::vector<std::string> rows;
  std::string previous_gtids;
  std::vector<uint8_t> types;
  std::string rotate_to;
  size_t checksums_verified = 0, events = 0;
};

void ReadFile(const std::string& path, ReadBack* out) {
  binlog::EventDecoder decoder;
  binlog::BinlogFileReader reader(&decoder);
  ASSERT_TRUE(reader.Open(path).ok());
  for (;;) {
    binlog::Event ev;
    bool eof = false;
    Status s = reader.Next(&ev, &eof);
    ASSERT_TRUE(s.ok()) << s.ToString();
    if (eof) return;
    ++out->events;
    out->checksums_verified += ev.checksum_verified;
    out->types.push_back(static_cast<uint8_t>(ev.raw[4]));
    EXPECT_EQ(ev.header.log_pos, ev.offset + ev.raw.size()) << "event at " << ev.offset;
    if (const auto* g = ev.As<binlog::GtidEvent>()) out->gtids.push_back(g->ToString());
    if (const auto* p = ev.As<binlog::PreviousGtidsEvent>()) out->previous_gtids = p->ToString();
    if (const auto* r = ev.As<binlog::RotateEvent>()) out->rotate_to = std::string(r->next_file);
    if (const auto* r = ev.As<binlog::RowsEvent>()) {
      ASSERT_TRUE(RenderRows(*r, &out->rows).ok());
    }
  }
}

TEST(MysqlBinlogWriter, WrittenHistoryDecodesToItsGtidsRowsAndPreviousSet) {
  TempBinlogDir dir;
  ASSERT_FALSE(dir.path().empty());
  const GtidHistory h = SmallHistory(kUuidA, kUuidB);
  const std::string a = kUuidA, b = kUuidB;
  // Split after the first run (untagged PREVIOUS_GTIDS) and after the tagged one (tagged form).
  for (size_t split : {size_t{1}, size_t{2}}) {
    SCOPED_TRACE("file from run " + std::to_string(split));
    MysqlBinlogSpec spec;
    spec.next_file = "binlog.000002";
    ASSERT_TRUE(HistoryBinlog(h, split, &spec).ok());
    std::string path;
    ASSERT_TRUE(WriteMysqlBinlog(spec, dir.path(), "binlog.000001", &path).ok());
    ReadBack got;
    ReadFile(path, &got);
    if (HasFatalFailure()) return;
    std::vector<std::string> gtids = {a + ":blue:1", a + ":blue:2", b + ":1", b + ":2", a + ":4", a + ":5"};
    std::vector<std::string> rows = {HistoryRow(IdOf(0, "blue", 1)), HistoryRow(IdOf(0, "blue", 2)), HistoryRow(IdOf(1, "", 1)),
                                     HistoryRow(IdOf(1, "", 2)),     HistoryRow(IdOf(0, "", 4)),     HistoryRow(IdOf(0, "", 5))};
    if (split == 2) {
      gtids.erase(gtids.begin(), gtids.begin() + 2);
      rows.erase(rows.begin(), rows.begin() + 2);
    }
    EXPECT_EQ(got.gtids, gtids);
    EXPECT_EQ(got.rows, rows);
    EXPECT_EQ(got.previous_gtids, split == 1 ? a + ":1-3" : a + ":1-3:blue:1-2");
    std::string set_text;
    ASSERT_TRUE(HistorySet(h, split, &set_text).ok());
    EXPECT_EQ(got.previous_gtids, set_text);
    EXPECT_EQ(got.checksums_verified, got.events);  // the FDE's too
    EXPECT_EQ(got.rotate_to, "binlog.000002");
    ASSERT_GE(got.types.size(), 3u);
    EXPECT_EQ(got.types[0], 15);
    EXPECT_EQ(got.types[1], 35);
    EXPECT_EQ(got.types[2], split == 1 ? 42 : 33);
    EXPECT_EQ(got.types.back(), 4);
  }
  EXPECT_EQ(IdOf(1, "", 2), 100'000'002u);
  EXPECT_EQ(IdOf(0, "blue", 7), TagSlot("blue") * 1'000'000 + 7);
}

TEST(MysqlBinlogWriter, AnonymousEmptyAndUnchecksummedTransactions) {
  TempBinlogDir dir;
  MysqlBinlogSpec spec;
  spec.checksum = false;
  spec.server_version = "8.4.3";
  spec.transactions = {{"", "", 0, 1'700'000'100, {7, 8, 9}}, {kUuidA, "", 9, 1'700'000'101, {}},
                       {kUuidA, "Red_1", 10, 1'700'000'102, {10}}};
  std::string path;
  ASSERT_TRUE(WriteMysqlBinlog(spec, dir.path(), "binlog.000007", &path).ok());
  ReadBack got;
  ReadFile(path, &got);
  if (HasFatalFailure()) return;
  EXPECT_EQ(got.gtids, (std::vector<std::string>{"", std::string(kUuidA) + ":9", std::string(kUuidA) + ":red_1:10"}));
  EXPECT_EQ(got.rows, (std::vector<std::string>{HistoryRow(7), HistoryRow(8), HistoryRow(9), HistoryRow(10)}));
  EXPECT_EQ(got.checksums_verified, 1u);  // the FDE alone carries one
  EXPECT_EQ(got.previous_gtids, "");
  EXPECT_EQ(got.types[2], 34);
  EXPECT_EQ(got.types.back(), 16);  // no ROTATE: the server's current file
}

TEST(MysqlBinlogWriter, RefusesWhatMysqlCannotHave) {
  std::string bytes;
  MysqlBinlogSpec spec;
  spec.transactions = {{"not-a-uuid", "", 1, 1, {1}}};
  EXPECT_TRUE(BuildMysqlBinlog(spec, &bytes).code() == Status::Code::kInvalidArgument);
  spec.transactions = {{kUuidA, "9lives", 1, 1, {1}}};
  EXPECT_TRUE(BuildMysqlBinlog(spec, &bytes).code() == Status::Code::kInvalidArgument);
  spec.transactions = {{kUuidA, "", 0, 1, {1}}};
  EXPECT_TRUE(BuildMysqlBinlog(spec, &bytes).code() == Status::Code::kInvalidArgument);
  spec.transactions = {};
  spec.previous_gtids = "0-1-100";
  EXPECT_TRUE(BuildMysqlBinlog(spec, &bytes).code() == Status::Code::kInvalidArgument);
  // Two tags sharing an id slot would repeat ids: refused.
  std::string other;
  for (int i = 0; other.empty(); ++i) {
    if (TagSlot("t" + std::to_string(i)) == TagSlot("blue")) other = "t" + std::to_string(i);
  }
  GtidHistory h = SmallHistory(kUuidA, kUuidB);
  h.runs.push_back({0, other, 1, 1});
  std::vector<MysqlTransaction> ts;
  EXPECT_TRUE(HistoryTransactions(h, 0, &ts).code() == Status::Code::kInvalidArgument);
  h.runs.back().uuid_index = 1;  // another uuid: other ids
  EXPECT_TRUE(HistoryTransactions(h, 0, &ts).ok());
  h.runs.back().uuid_index = 2;
  EXPECT_TRUE(HistoryTransactions(h, 0, &ts).code() == Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace canal::testing
