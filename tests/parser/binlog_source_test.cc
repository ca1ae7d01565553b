// BinlogSource: DumpSource places socket events by the bytes read (log_pos
// only checks the low 32 bits), FileSource reads files as a dump would send
// them. Generated streams for the socket side; fixture files for the disk side
// (skipped with a message when ../shared is absent).
#include "canal/parser/binlog_source.h"

#include <deque>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/event_bytes.h"
#include "support/fixtures.h"

namespace canal::parser {
namespace {

namespace eb = canal::testing::event_bytes;

// A dump that sends the given events; each gets log_pos = `log_pos` when set,
// else its end counted from `start`. Then an error (stream failure).
class ScriptedDump final : public RawEventStream {
 public:
  void Send(std::string event) { events_.push_back(std::move(event)); }
  // Places `event` at `offset` (its log_pos says offset + size).
  void SendAt(std::string event, uint64_t offset) {
    eb::SetLogPos(&event, static_cast<uint32_t>(offset + event.size()));
    events_.push_back(std::move(event));
  }
  Status ReadEvent(std::string_view* event) override {
    if (events_.empty()) return Status::IOError("connection to the primary lost (test)");
    current_ = std::move(events_.front());
    events_.pop_front();
    *event = current_;
    return Status::OK();
  }

 private:
  std::deque<std::string> events_;
  std::string current_;
};

constexpr char kFile[] = "mysql-bin.000003";

// The opening of a dump from 4: artificial ROTATE, then the FDE at 4.
uint64_t Open(ScriptedDump* d, uint64_t from = 4) {
  d->Send(eb::Rotate(kFile, from, 0x20));
  std::string fde = eb::FormatDescription();
  if (from == 4) {
    d->SendAt(fde, 4);
    return 4 + fde.size();
  }
  d->Send(fde);  // log_pos 0: not in the file
  return from;
}

binlog::DecoderOptions NoChecksum() {
  binlog::DecoderOptions o;
  o.verify_checksum = false;  // the generated FDE leaves its CRC slot zero
  return o;
}

TEST(DumpSource, OpeningRotateIsReadByHandAndEventsArePlacedByTheBytesRead) {
  ScriptedDump d;
  uint64_t pos = Open(&d);
  const std::string begin = eb::Query("BEGIN");
  d.SendAt(begin, pos);
  DumpSource source(&d, "", 4, false);
  binlog::EventDecoder decoder(NoChecksum());
  SourceEvent e;
  ASSERT_TRUE(source.Next(&decoder, &e).ok());
  EXPECT_EQ(e.event.type(), binlog::EventType::kFormatDescription);
  EXPECT_EQ(e.file, kFile);
  EXPECT_TRUE(e.in_file);
  EXPECT_EQ(e.offset, 4u);
  EXPECT_EQ(e.end, pos);
  EXPECT_GT(e.wire_bytes, e.end - e.offset) << "the opening ROTATE is counted with it";
  ASSERT_TRUE(source.Next(&decoder, &e).ok());
  EXPECT_EQ(e.offset, pos);
  EXPECT_EQ(e.end, pos + begin.size());
  EXPECT_EQ(e.event.offset, pos);
  EXPECT_EQ(source.gaps(), 0u);
  Status s = source.Next(&decoder, &e);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(source.stream_failed());
}

TEST(DumpSource, ARotateEndsItsFileAndTheNextFileCountsFromItsStart) {
  ScriptedDump d;
  uint64_t pos = Open(&d);
  const std::string rotate = eb::Rotate("mysql-bin.000004", 4, 0);
  d.SendAt(rotate, pos);
  std::string fde = eb::FormatDescription();
  d.SendAt(fde, 4);
  const std::string begin = eb::Query("BEGIN");
  d.SendAt(begin, 4 + fde.size());
  DumpSource source(&d, "", 4, false);
  binlog::EventDecoder decoder(NoChecksum());
  SourceEvent e;
  ASSERT_TRUE(source.Next(&decoder, &e).ok());  // FDE of the first file
  ASSERT_TRUE(source.Next(&decoder, &e).ok());
  ASSERT_NE(e.event.As<binlog::RotateEvent>(), nullptr);
  EXPECT_EQ(e.file, kFile) << "the ROTATE is the last event of its own file";
  EXPECT_TRUE(e.in_file);
  EXPECT_EQ(e.offset, pos);
  ASSERT_TRUE(source.Next(&decoder, &e).ok());
  EXPECT_EQ(e.file, "mysql-bin.000004");
  EXPECT_EQ(e.offset, 4u);
  ASSERT_TRUE(source.Next(&decoder, &e).ok());
  EXPECT_EQ(e.file, "mysql-bin.000004");
  EXPECT_EQ(e.offset, 4 + fde.size());
  EXPECT_EQ(source.gaps(), 0u);
}

TEST(DumpSource, ASkipTheServerMadeIsTakenFromLogPosAndTheEventRelocated) {
  ScriptedDump d;
  uint64_t pos = Open(&d);
  // A GTID dump leaves out transactions the replica has: 5000 bytes never sent.
  const std::string begin = eb::Query("BEGIN");
  d.SendAt(begin, pos + 5000);
  DumpSource source(&d, "", 4, false);
  binlog::EventDecoder decoder(NoChecksum());
  SourceEvent e;
  ASSERT_TRUE(source.Next(&decoder, &e).ok());
  ASSERT_TRUE(source.Next(&decoder, &e).ok());
  EXPECT_EQ(e.offset, pos + 5000);
  EXPECT_EQ(e.event.offset, pos + 5000) << "decoded at the stream's place, moved to log_pos's";
  EXPECT_EQ(source.gaps(), 1u);
  EXPECT_EQ(source.position(), pos + 5000 + begin.size());
}

TEST(DumpSource, EventsThatDoNotMoveTheStreamAreNotInTheFile) {
  ScriptedDump d;
  uint64_t pos = Open(&d, 1000);  // a later start: the FDE comes with log_pos 0
  std::string fake = eb::Query("BEGIN");
  eb::SetLogPos(&fake, 1000);  // log_pos = where the stream already is
  d.Send(fake);
  std::string hb = eb::Heartbeat(kFile);
  eb::SetLogPos(&hb, 1500);
  d.Send(hb);
  DumpSource source(&d, "", 1000, false);
  binlog::EventDecoder decoder(NoChecksum());
  SourceEvent e;
  ASSERT_TRUE(source.Next(&decoder, &e).ok());
  EXPECT_EQ(e.event.type(), binlog::EventType::kFormatDescription);
  EXPECT_FALSE(e.in_file);
  EXPECT_EQ(e.offset, pos);
  ASSERT_TRUE(source.Next(&decoder, &e).ok());
  EXPECT_FALSE(e.in_file);
  EXPECT_EQ(e.offset, 1000u);
  EXPECT_EQ(e.end, 1000u);
  ASSERT_TRUE(source.Next(&decoder, &e).ok());
  EXPECT_NE(e.event.As<binlog::HeartbeatEvent>(), nullptr);
  EXPECT_FALSE(e.in_file);
  EXPECT_EQ(e.offset, 1500u) << "a heartbeat says where the primary is";
}

TEST(DumpSource, LogPosWrapsPast4GiBWithoutLosingTheHighBits) {
  ScriptedDump d;
  const uint64_t start = (uint64_t{1} << 32) - 20;  // an event that crosses 2^32
  d.Send(eb::Rotate(kFile, start, 0x20));
  d.Send(eb::FormatDescription());  // log_pos 0
  const std::string begin = eb::Query("BEGIN");
  d.SendAt(begin, start);
  d.SendAt(eb::Xid(9), start + begin.size());
  DumpSource source(&d, kFile, start, false);
  binlog::EventDecoder decoder(NoChecksum());
  SourceEvent e;
  ASSERT_TRUE(source.Next(&decoder, &e).ok());  // FDE
  ASSERT_TRUE(source.Next(&decoder, &e).ok());
  EXPECT_EQ(e.offset, start);
  EXPECT_EQ(e.end, start + begin.size());
  EXPECT_LT(e.event.header.log_pos, 1000u) << "the header's log_pos wrapped";
  ASSERT_TRUE(source.Next(&decoder, &e).ok());
  EXPECT_EQ(e.offset, start + begin.size());
  EXPECT_EQ(source.gaps(), 0u);
}

TEST(DumpSource, SkipToReturnsNothingBeforeTheStartAndRefusesAMidEventStart) {
  for (int mid : {0, 1}) {
    ScriptedDump d;
    uint64_t pos = Open(&d);
    const std::string begin = eb::Query("BEGIN"), xid = eb::Xid(1);
    d.SendAt(begin, pos);
    d.SendAt(xid, pos + begin.size());
    d.SendAt(eb::Query("BEGIN"), pos + begin.size() + xid.size());
    const uint64_t target = pos + begin.size() + xid.size() - mid;
    DumpSource source(&d, kFile, 4, false, target);
    binlog::EventDecoder decoder(NoChecksum());
    SourceEvent e;
    Status s = source.Next(&decoder, &e);
    if (mid == 0) {
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(e.offset, target);
      EXPECT_NE(e.event.As<binlog::QueryEvent>(), nullptr);
    } else {
      EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
      EXPECT_NE(s.ToString().find(std::to_string(target)), std::string::npos) << s.ToString();
      EXPECT_FALSE(source.stream_failed());
    }
  }
}

TEST(DumpSource, ShortOrTruncatedEventsAreErrorsNamingTheFileAndOffset) {
  {
    ScriptedDump d;
    Open(&d);
    d.Send(std::string(10, '\0'));
    DumpSource source(&d, "", 4, false);
    binlog::EventDecoder decoder(NoChecksum());
    SourceEvent e;
    ASSERT_TRUE(source.Next(&decoder, &e).ok());
    Status s = source.Next(&decoder, &e);
    EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
    EXPECT_NE(s.ToString().find(kFile), std::string::npos) << s.ToString();
    EXPECT_FALSE(source.stream_failed());
  }
  {
    ScriptedDump d;
    std::string rotate = eb::Rotate(kFile, 4, 0x20);
    rotate.resize(19 + 4);  // no room for its position
    d.Send(rotate);
    DumpSource source(&d, "x", 4, false);
    binlog::EventDecoder decoder(NoChecksum());
    SourceEvent e;
    Status s = source.Next(&decoder, &e);
    EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
  }
  {
    ScriptedDump d;
    uint64_t pos = Open(&d);
    std::string q = eb::Query("BEGIN");
    eb::SetLogPos(&q, static_cast<uint32_t>(pos + q.size()));
    q.resize(q.size() - 3);  // the header says 3 bytes more than came
    d.Send(q);
    DumpSource source(&d, "", 4, false);
    binlog::EventDecoder decoder(NoChecksum());
    SourceEvent e;
    ASSERT_TRUE(source.Next(&decoder, &e).ok());
    Status s = source.Next(&decoder, &e);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.ToString().find(std::to_string(pos)), std::string::npos) << s.ToString();
  }
}

// ---- FileSource over fixture files ---------------------------------------------------------

TEST(FileSource, ADirectoryReadsAsOneStreamWithEachFilesNameAndOffsets) {
  CANAL_REQUIRE_FIXTURES();
  std::vector<std::string> paths;
  ASSERT_TRUE(binlog::ExpandBinlogPaths({testing::FixturePath("mariadb-10.11")}, &paths).ok());
  ASSERT_GE(paths.size(), 2u);
  FileSource source(paths);
  binlog::EventDecoder decoder;
  SourceEvent e;
  std::vector<std::string> files;
  uint64_t last_end = 0;
  Status s;
  while ((s = source.Next(&decoder, &e)).ok()) {
    if (files.empty() || files.back() != e.file) {
      files.emplace_back(e.file);
      EXPECT_EQ(e.offset, 4u) << e.file << " starts at its first event";
      last_end = 4;
    }
    EXPECT_TRUE(e.in_file);
    if (!e.inner) {
      EXPECT_EQ(e.offset, last_end) << e.file;
      last_end = e.end;
    }
  }
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  ASSERT_EQ(files.size(), paths.size());
  EXPECT_EQ(files[0], "mariadb-bin.000001");
  EXPECT_EQ(files[1], "mariadb-bin.000002");
}

TEST(FileSource, AStartFileAndPositionBeginThereAfterTheFormatDescription) {
  CANAL_REQUIRE_FIXTURES();
  std::vector<std::string> paths;
  ASSERT_TRUE(binlog::ExpandBinlogPaths({testing::FixturePath("mariadb-10.11")}, &paths).ok());
  // Offsets of the second file's events, read from its start.
  std::vector<uint64_t> offsets;
  {
    FileSource all(paths, "mariadb-bin.000002");
    binlog::EventDecoder decoder;
    SourceEvent e;
    while (all.Next(&decoder, &e).ok()) {
      if (e.file == "mariadb-bin.000002" && !e.inner) offsets.push_back(e.offset);
    }
  }
  ASSERT_GT(offsets.size(), 4u);
  const uint64_t from = offsets[3];
  FileSource source(paths, "mariadb-bin.000002", from);
  binlog::EventDecoder decoder;
  SourceEvent e;
  ASSERT_TRUE(source.Next(&decoder, &e).ok());
  EXPECT_EQ(e.event.type(), binlog::EventType::kFormatDescription);
  EXPECT_FALSE(e.in_file);
  EXPECT_EQ(e.offset, from);
  ASSERT_TRUE(source.Next(&decoder, &e).ok());
  EXPECT_TRUE(e.in_file);
  EXPECT_EQ(e.offset, from);
}

TEST(FileSource, BadStartsAndBadFilesAreErrorsNamingThem) {
  CANAL_REQUIRE_FIXTURES();
  std::vector<std::string> paths;
  ASSERT_TRUE(binlog::ExpandBinlogPaths({testing::FixturePath("mariadb-10.11")}, &paths).ok());
  binlog::EventDecoder decoder;
  SourceEvent e;
  {
    FileSource source(paths, "mariadb-bin.000009");
    Status s = source.Next(&decoder, &e);
    EXPECT_TRUE(s.IsNotFound());
    EXPECT_NE(s.ToString().find("mariadb-bin.000009"), std::string::npos) << s.ToString();
  }
  {
    FileSource source(paths, "mariadb-bin.000001", 10);  // inside the FORMAT_DESCRIPTION
    ASSERT_FALSE(source.Next(&decoder, &e).ok());
  }
  {
    FileSource source({testing::FixturePath("mariadb-10.11/no-such.000001")});
    Status s = source.Next(&decoder, &e);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.ToString().find("no-such.000001"), std::string::npos) << s.ToString();
  }
  {
    std::string bytes;
    ASSERT_TRUE(testing::ReadFileToString(paths[0], &bytes).ok());
    bytes.resize(bytes.size() - 7);  // the writer stopped inside the last event
    auto source = FileSource::FromBuffer("cut.000001", bytes);
    Status s;
    while ((s = source->Next(&decoder, &e)).ok()) {
    }
    EXPECT_EQ(s.code(), Status::Code::kTruncated) << s.ToString();
    EXPECT_NE(s.ToString().find("cut.000001"), std::string::npos) << s.ToString();
  }
  {
    auto source = FileSource::FromBuffer("junk.000001", "not a binlog at all");
    Status s = source->Next(&decoder, &e);
    EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
  }
}

}  // namespace
}  // namespace canal::parser
