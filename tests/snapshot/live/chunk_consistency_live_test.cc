// The consistency hazard, live: while a writer commits many small transactions (each inserts the
// next id into snap.seq and sets snap.counter's one row to it), chunks are read again and again.
// Each chunk must show exactly the binlog's state at its position P: the largest id it sees is the
// largest id whose INSERT lies before P in the binlog (read afterwards with the project's decoder),
// and the counter it sees is the last value set before P. A reader that took P from anywhere but
// the snapshot itself (SHOW MASTER STATUS before or after the read, say) fails within a few
// chunks. Skips where Debian's mariadb-server is not installed.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "canal/parser/binlog/column_value.h"
#include "canal/snapshot/chunk_window.h"
#include "snapshot_live_support.h"
#include "support/binlog_walk.h"
#include "support/wait.h"

namespace canal::testing {
namespace {

namespace fs = std::filesystem;
using snapshot::ChunkReader;
using snapshot::SnapshotOptions;
using snapshot::TableShape;

constexpr uint16_t kPort = kSnapshotLivePort;
constexpr int kWriterTransactions = 4000;
constexpr int kMinChunksRead = 300;

// Where each change lies in the binlog: (file, end of its rows event).
struct Change {
  std::string file;
  uint64_t end = 0;
  int64_t value = 0;
};

// The largest value of `changes` (in binlog order, values increasing) before `p`; 0 when none.
int64_t LastBefore(const std::vector<Change>& changes, const LogPosition& p) {
  int64_t last = 0;
  for (const Change& c : changes) {
    LogPosition at;
    at.journal_name = c.file;
    at.position = c.end;
    if (snapshot::StreamBefore(p, at)) break;
    last = c.value;
  }
  return last;
}

class ChunkConsistencyLive : public SnapshotLiveSuite<ChunkConsistencyLive> {
 public:
  static std::string SetupSql() {
    return "CREATE DATABASE snap; CREATE TABLE snap.seq (id INT PRIMARY KEY, pad VARCHAR(20)); "
           "CREATE TABLE snap.counter (k INT PRIMARY KEY, n INT NOT NULL); INSERT INTO snap.counter VALUES (1, 0);";
  }
};

struct Observation {
  enum Kind { kSeq, kCounter, kSeqTail } kind = kSeq;
  LogPosition p;
  int64_t value = 0;   // max id seen in seq (-1: none), or n seen in counter
  int64_t after = 0;   // kSeqTail: the key the chunk was read after
};

TEST_F(ChunkConsistencyLive, EveryChunkIsTheBinlogsStateAtItsPosition) {
  // The writer: one transaction per id, over TCP as root.
  std::atomic<int> committed{0};
  std::atomic<bool> writer_failed{false}, stop{false};
  std::string writer_error;
  std::thread writer([&] {
    mysql::QueryConnection w(Login(kPort, "root", ""));
    Status s = w.Connect();
    for (int i = 1; s.ok() && i <= kWriterTransactions && !stop.load(); ++i) {
      s = w.Execute("BEGIN");
      if (s.ok()) s = w.Execute("INSERT INTO snap.seq VALUES (" + std::to_string(i) + ", 'p')");
      if (s.ok()) s = w.Execute("UPDATE snap.counter SET n = " + std::to_string(i) + " WHERE k = 1");
      if (s.ok()) s = w.Execute("COMMIT");
      if (s.ok()) committed.store(i);
    }
    if (!s.ok()) {
      writer_error = s.ToString();
      writer_failed.store(true);
    }
  });

  // A failed assertion returns early: the writer stops and is joined first.
  struct JoinWriter {
    std::thread& t;
    std::atomic<bool>& stop;
    ~JoinWriter() {
      stop.store(true);
      if (t.joinable()) t.join();
    }
  } join_writer{writer, stop};

  // The reader, in turn: a whole-table chunk of seq (its max id), of counter (its n), and a next
  // chunk of seq after a key a little behind the last max id seen (through the bound key), until
  // the writer is done and at least kMinChunksRead chunks were read.
  mysql::QueryConnection& conn = *conn_;
  TableShape seq_shape, counter_shape;
  ASSERT_TRUE(snapshot::LoadTableShape(&conn, "snap", "seq", &seq_shape).ok());
  ASSERT_TRUE(snapshot::LoadTableShape(&conn, "snap", "counter", &counter_shape).ok());
  SnapshotOptions whole;
  whole.chunk_rows = SnapshotOptions::kMaxChunkRows;
  ChunkReader seq_reader(&conn), counter_reader(&conn);
  ASSERT_TRUE(seq_reader.Open(seq_shape, "", whole).ok());
  ASSERT_TRUE(counter_reader.Open(counter_shape, "", whole).ok());

  std::vector<Observation> seen;
  std::vector<snapshot::KeyValue> none;
  // Wait for the writer to be going, so that the reads overlap its commits.
  ASSERT_TRUE(WaitFor([&] { return committed.load() > 0 || writer_failed.load(); }, std::chrono::seconds(30)));
  int64_t last_seq_max = 0;
  while (!writer_failed.load() && (committed.load() < kWriterTransactions || seen.size() < kMinChunksRead)) {
    Observation o;
    o.kind = static_cast<Observation::Kind>(seen.size() % 3);
    snapshot::ChunkResult result;
    int64_t max_id = -1, rows = 0;
    auto seq_row = [&](const snapshot::ChunkRow& row) {
      max_id = std::max(max_id, row.fields[0].i64);
      ++rows;
      return Status::OK();
    };
    Status s;
    if (o.kind == Observation::kCounter) {
      s = counter_reader.ReadChunk(none, [&](const snapshot::ChunkRow& row) {
        max_id = row.fields[1].i64;
        return Status::OK();
      }, &result);
    } else if (o.kind == Observation::kSeq) {
      s = seq_reader.ReadChunk(none, seq_row, &result);
    } else {
      // The next-chunk statement, bound with a key a little behind what the last read saw.
      o.after = std::max<int64_t>(0, last_seq_max - 5);
      std::vector<snapshot::KeyValue> after(1);
      after[0].kind = snapshot::FieldKind::kSigned;
      after[0].field_type = 3;  // MYSQL_TYPE_LONG
      after[0].i64 = o.after;
      s = seq_reader.ReadChunk(after, seq_row, &result);
    }
    ASSERT_TRUE(s.ok()) << s.ToString();
    if (o.kind == Observation::kSeq) {
      ASSERT_EQ(rows, std::max<int64_t>(max_id, 0)) << "ids are 1..n, each in one committed transaction";
      last_seq_max = std::max<int64_t>(max_id, 0);
    } else if (o.kind == Observation::kSeqTail && max_id >= 0) {
      ASSERT_EQ(rows, max_id - o.after) << "the ids after " << o.after;
    }
    o.p = result.snapshot;
    o.value = max_id;
    seen.push_back(o);
  }
  writer.join();
  ASSERT_FALSE(writer_failed.load()) << writer_error;

  // The binlog, decoded: where each insert into seq and each update of counter lies.
  std::vector<Change> inserts, updates;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(sandbox_->binlog_dir())) {
    const std::string ext = e.path().extension().string();
    if (ext.size() > 1 && ext.find_first_not_of(".0123456789") == std::string::npos) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  for (const fs::path& file : files) {
    WalkOptions wo;
    const std::string name = file.filename().string();
    wo.on_row = [&](const binlog::Event& ev, const binlog::TableMap& t, const binlog::RowChange& c) {
      if (t.db != "snap") return Status::OK();
      if (t.table == "seq" && c.kind == binlog::RowsKind::kWrite) {
        inserts.push_back({name, ev.header.log_pos, c.after.values[0].i64});
      } else if (t.table == "counter" && c.kind == binlog::RowsKind::kUpdate) {
        updates.push_back({name, ev.header.log_pos, c.after.values[1].i64});
      }
      return Status::OK();
    };
    WalkResult r = WalkBinlog(file.string(), wo);
    ASSERT_TRUE(r.error.ok()) << file << ": " << r.error.ToString();
  }
  ASSERT_EQ(inserts.size(), static_cast<size_t>(kWriterTransactions));
  ASSERT_EQ(updates.size(), static_cast<size_t>(kWriterTransactions));

  size_t mid_stream = 0;  // chunks that saw some but not all of the writer's rows
  for (size_t i = 0; i < seen.size(); ++i) {
    const Observation& o = seen[i];
    const bool counter = o.kind == Observation::kCounter;
    const int64_t expected = LastBefore(counter ? updates : inserts, o.p);
    const char* what = counter ? " (counter)" : o.kind == Observation::kSeq ? " (seq)" : " (seq after a key)";
    if (o.value < 0) {
      // Nothing in the chunk: nothing before P lies past its key (or the table was empty).
      ASSERT_LE(expected, o.after) << "chunk " << i << what << " at " << o.p.ToString();
      continue;
    }
    ASSERT_EQ(o.value, expected) << "chunk " << i << " of " << seen.size() << what << " at " << o.p.ToString();
    if (o.value > 0 && o.value < kWriterTransactions) ++mid_stream;
  }
  // The check means something only if many chunks were read while the writer ran.
  EXPECT_GE(mid_stream, 50u) << "of " << seen.size() << " chunks";
  std::printf("[ consistency ] %zu chunks read, %zu of them while the writer ran, %d transactions\n", seen.size(),
              mid_stream, kWriterTransactions);
}

}  // namespace
}  // namespace canal::testing
