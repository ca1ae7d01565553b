// Binlog offsets past 4 GiB. MySQL writes a whole transaction into one file,
// so one large transaction makes a file larger than 4 GiB and the header's
// 32-bit log_pos wraps. A generated dump stream (no file on disk: one 64 MiB
// filler event is sent again and again with its log_pos patched) runs through
// the real DumpSource, EventLoop, TransactionBuffer and EntrySink: the offsets
// past 2^32 must be exact in the entries, survive the cursor's JSON round trip
// (meta.dat and ZooKeeper write the same JSON), and a resume from such a
// cursor must hand over exactly what follows it.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/entry.pb.h"
#include "canal/meta/meta_json.h"
#include "canal/parser/binlog_source.h"
#include "canal/parser/event_loop.h"
#include "canal/parser/resume_from_cursor.h"
#include "canal/parser/transaction_buffer.h"
#include "canal/sink/entry_sink.h"
#include "canal/store/ring_store.h"
#include "support/event_bytes.h"

namespace canal::sink {
namespace {

using namespace canal::testing::event_bytes;  // NOLINT: the event builders read as a binlog

constexpr char kFile[] = "big-bin.000001";
constexpr uint64_t k4GiB = uint64_t{1} << 32;
constexpr uint32_t kFillerSize = 64u << 20;
constexpr int kFillers = 65;  // 65 x 64 MiB: the big transaction ends past 4 GiB

// ---- the generated binlog file and a primary dumping it ---------------------------------

// The file as a list of events at exact 64-bit offsets; the fillers share one buffer.
struct BigFile {
  struct Item {
    uint64_t offset;
    const std::string* bytes;
  };
  std::string fde = FormatDescription(), begin = Query("BEGIN"), map = TableMap(), xid1 = Xid(101),
              xid2 = Xid(102), rotate = Rotate("big-bin.000002", 4, 0), filler;
  std::vector<std::string> rows;
  std::vector<Item> items;
  uint64_t size = 4;
  uint64_t txn1_begin = 0, txn1_end = 0, row2_offset = 0, row4_offset = 0, txn2_begin = 0;

  BigFile() {
    std::string text(kFillerSize - 19 - 1, 'x');
    filler = Event(29, std::string(1, '\xff') + text);  // ROWS_QUERY: the annotation of a huge statement
    for (uint32_t id = 1; id <= 4; ++id) rows.push_back(WriteRow(id));
    Add(&fde);
    txn1_begin = size;
    Add(&begin);
    Add(&map);
    Add(&rows[0]);
    for (int i = 0; i < kFillers; ++i) Add(&filler);
    Add(&map);
    row2_offset = size;
    Add(&rows[1]);
    Add(&map);
    row4_offset = size;
    Add(&rows[3]);
    Add(&xid1);
    txn1_end = size;
    txn2_begin = size;  // a transaction of the same group commit, after 4 GiB in the same file
    Add(&begin);
    Add(&map);
    Add(&rows[2]);
    Add(&xid2);
    Add(&rotate);
  }
  void Add(const std::string* e) {
    items.push_back({size, e});
    size += e->size();
  }
};

// COM_BINLOG_DUMP of the generated file from `from`: the artificial ROTATE,
// the FORMAT_DESCRIPTION (log_pos 0 when the start is later, as servers send
// it), then every event from `from` with log_pos = its end mod 2^32.
class GeneratedDump final : public parser::RawEventStream {
 public:
  GeneratedDump(const BigFile* file, uint64_t from) : file_(file), from_(from) {}
  Status ReadEvent(std::string_view* event) override {
    if (step_ == 0) {
      ++step_;
      current_ = Rotate(kFile, from_, 0x20);
      *event = current_;
      return Status::OK();
    }
    if (step_ == 1) {
      ++step_;
      current_ = file_->fde;
      SetLogPos(&current_, from_ > 4 ? 0 : static_cast<uint32_t>(4 + current_.size()));
      *event = current_;
      if (from_ > 4) return Status::OK();
      next_ = 1;
      return Status::OK();
    }
    if (next_ == 0) {
      while (next_ < file_->items.size() && file_->items[next_].offset < from_) ++next_;
      if (next_ == file_->items.size() || file_->items[next_].offset != from_) {
        return Status::IOError("ERROR 1236: position " + std::to_string(from_) + " is not an event's start");
      }
    }
    if (next_ >= file_->items.size()) return Status::NotFound("end of the dump");
    const BigFile::Item& item = file_->items[next_++];
    // The filler is patched in place (it is only ever read through this view).
    std::string* bytes = const_cast<std::string*>(item.bytes);
    SetLogPos(bytes, static_cast<uint32_t>(item.offset + bytes->size()));
    *event = *bytes;
    bytes_sent_ += bytes->size();
    return Status::OK();
  }
  uint64_t bytes_sent() const { return bytes_sent_; }

 private:
  const BigFile* file_;
  uint64_t from_;
  int step_ = 0;
  size_t next_ = 0;
  uint64_t bytes_sent_ = 0;
  std::string current_;
};

// ---- the pipeline: DumpSource -> EventLoop -> TransactionBuffer -> EntrySink -> store --------

struct Got {
  entry::Entry entry;
  store::EntryMeta meta;
};

struct Pipeline : parser::TransactionSink {
  Pipeline() {
    store::RingStoreOptions o;
    o.buffer_size = 1024;
    o.batch_mode = store::BatchMode::kItemSize;
    EXPECT_TRUE(store::RingStore::Create(o, &ring).ok());
    EntrySinkOptions so;
    so.clock_ms = [] { return int64_t{0}; };
    sink = std::make_unique<EntrySink>(std::move(so), ring.get());
  }
  Status OnTransaction(const parser::Transaction& txn) override {
    CANAL_RETURN_IF_ERROR(sink->OnTransaction(txn));
    store::Batch batch;
    for (;;) {
      CANAL_RETURN_IF_ERROR(ring->Get(1000, store::RingStore::kNoWait, &batch));
      if (batch.empty()) break;
      for (const auto& v : batch.entries) {
        Got g;
        EXPECT_TRUE(g.entry.ParseFromString(std::string(v.bytes)));
        g.meta = *v.meta;
        got.push_back(std::move(g));
      }
      CANAL_RETURN_IF_ERROR(ring->Ack(batch));
    }
    return Status::OK();
  }

  // Streams the generated file from `point` the way EventParser does: the
  // dump asked for at DumpRequestOffset, the source skipping to the point.
  Status Run(BigFile* file, const parser::ResumePoint& point) {
    parser::TransactionBufferOptions bo;
    bo.max_events = 2;  // the big transaction goes out in pieces: safe points inside it
    parser::TransactionBuffer buffer(this, bo);
    buffer.ResetTo(point);
    const uint64_t ask = parser::DumpRequestOffset(point.position);
    GeneratedDump dump(file, ask);
    parser::DumpSource source(&dump, point.file, ask, /*crc32=*/false, ask == point.position ? 0 : point.position);
    parser::LoopCounters counters;
    parser::EventLoop loop(&buffer, this, &counters);
    binlog::DecoderOptions dopts;
    dopts.verify_checksum = false;  // the FORMAT_DESCRIPTION's own CRC slot is left zero here
    binlog::EventDecoder decoder(dopts);
    const std::atomic<bool> stop{false};
    Status error;
    const parser::LoopEnd end = loop.Run(&source, &decoder, stop, &error);
    bytes_read = counters.bytes.load();
    if (end == parser::LoopEnd::kSource && error.IsNotFound()) return Status::OK();
    return error;
  }

  std::unique_ptr<store::RingStore> ring;
  std::unique_ptr<EntrySink> sink;
  std::vector<Got> got;
  uint64_t bytes_read = 0;
};

std::vector<int64_t> RowOffsets(const std::vector<Got>& got) {
  std::vector<int64_t> out;
  for (const Got& g : got) {
    if (g.entry.entrytype() == entry::ROWDATA) out.push_back(g.entry.header().logfileoffset());
  }
  return out;
}

parser::ResumePoint FromStart() {
  parser::ResumePoint p;
  p.file = kFile;
  p.position = 4;
  return p;
}

class OffsetsPast4GiB : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { file_ = new BigFile(); }
  static void TearDownTestSuite() {
    delete file_;
    file_ = nullptr;
  }
  static BigFile* file_;
};
BigFile* OffsetsPast4GiB::file_ = nullptr;

TEST_F(OffsetsPast4GiB, EntriesCarryTheExactOffsetsWhileLogPosWraps) {
  const BigFile& f = *file_;
  ASSERT_GT(f.row2_offset, k4GiB);
  Pipeline p;
  Status s = p.Run(file_, FromStart());
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(p.bytes_read, f.size - 4 + 0 /*the artificial ROTATE is counted too*/ + Rotate(kFile, 4, 0x20).size());
  const std::vector<int64_t> rows = RowOffsets(p.got);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0], static_cast<int64_t>(f.items[3].offset));
  EXPECT_EQ(rows[1], static_cast<int64_t>(f.row2_offset));
  EXPECT_EQ(rows[2], static_cast<int64_t>(f.row4_offset));
  EXPECT_EQ(rows[3], static_cast<int64_t>(f.txn2_begin + f.begin.size() + f.map.size()));
  for (const Got& g : p.got) {
    EXPECT_EQ(g.entry.header().logfilename(), kFile);
    if (g.entry.entrytype() == entry::TRANSACTIONEND && g.meta.safe_resume_point) {
      EXPECT_FALSE(g.meta.position.included);
      EXPECT_EQ(g.meta.position.transaction_begin, 0u);
    }
  }
  // The end of the big transaction: a cursor past 4 GiB.
  bool saw_end1 = false;
  for (const Got& g : p.got) saw_end1 |= g.meta.safe_resume_point && g.meta.position.position == f.txn1_end;
  EXPECT_TRUE(saw_end1);
}

TEST_F(OffsetsPast4GiB, CursorsPast4GiBSurviveTheJsonRoundTripAndResumeExactly) {
  const BigFile& f = *file_;
  Pipeline whole;
  ASSERT_TRUE(whole.Run(file_, FromStart()).ok());
  int checked = 0;
  for (size_t i = 0; i < whole.got.size(); ++i) {
    const Got& g = whole.got[i];
    if (!g.meta.safe_resume_point || g.meta.position.position < k4GiB) continue;
    SCOPED_TRACE("cursor " + g.meta.position.ToString());
    // meta.dat and the ZooKeeper cursor node carry the same JSON.
    const std::string json = meta::EncodeCursor(g.meta.position, meta::LogIdentity{});
    LogPosition back;
    meta::LogIdentity identity;
    Status s = meta::DecodeCursor(json, &back, &identity);
    ASSERT_TRUE(s.ok()) << s.ToString() << " in " << json;
    EXPECT_EQ(back, g.meta.position) << json;

    parser::ResumePoint point;
    s = parser::ResumePointFromCursor(back, &point);
    ASSERT_TRUE(s.ok()) << s.ToString();
    Pipeline rest;
    s = rest.Run(file_, point);
    ASSERT_TRUE(s.ok()) << s.ToString();
    // Exactly the entries after the cursor's entry, at the same offsets.
    std::vector<std::string> expected, got;
    for (size_t j = i + 1; j < whole.got.size(); ++j) {
      expected.push_back(std::to_string(whole.got[j].entry.entrytype()) + "@" +
                         std::to_string(whole.got[j].entry.header().logfileoffset()));
    }
    for (const Got& r : rest.got) {
      got.push_back(std::to_string(r.entry.entrytype()) + "@" + std::to_string(r.entry.header().logfileoffset()));
    }
    EXPECT_EQ(got, expected);
    ++checked;
  }
  // Inside the big transaction (a piece's end past 4 GiB, transactionBegin
  // below), at its end (a boundary past 4 GiB, asked for at the file's start),
  // inside the next one (transactionBegin past 4 GiB too) and at its end.
  EXPECT_GE(checked, 4);
  bool inside_big = false, boundary = false, inside_next = false;
  for (const Got& g : whole.got) {
    if (!g.meta.safe_resume_point || g.meta.position.position < k4GiB) continue;
    inside_big |= g.meta.position.transaction_begin == f.txn1_begin;
    boundary |= g.meta.position.transaction_begin == 0 && g.meta.position.position == f.txn1_end;
    inside_next |= g.meta.position.transaction_begin == f.txn2_begin;
  }
  EXPECT_TRUE(inside_big);
  EXPECT_TRUE(boundary);
  EXPECT_TRUE(inside_next);
}

// A start that is not where an event begins, or past the file's end, is an
// error naming the offset, not a silent misplacement.
TEST_F(OffsetsPast4GiB, AStartPast4GiBThatIsNoEventBoundaryIsAnError) {
  const BigFile& f = *file_;
  for (uint64_t bad : {f.row2_offset + 1, f.size + 100}) {
    parser::ResumePoint point = FromStart();
    point.position = bad;
    Pipeline p;
    Status s = p.Run(file_, point);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.ToString().find(std::to_string(bad)), std::string::npos) << s.ToString();
    EXPECT_TRUE(p.got.empty());
  }
}

}  // namespace
}  // namespace canal::sink
