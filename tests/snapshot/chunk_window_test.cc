#include "canal/snapshot/chunk_window.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <vector>

namespace canal::snapshot {
namespace {

LogPosition At(const char* file, uint64_t offset) {
  LogPosition p;
  p.journal_name = file;
  p.position = offset;
  return p;
}

std::string Key(std::string_view v) {
  KeyEncoder e;
  e.Append(v);
  return std::string(e.key());
}

TEST(StreamOrderTest, FilesByNumberThenOffsets) {
  EXPECT_TRUE(StreamBefore(At("mysql-bin.000009", 900), At("mysql-bin.000010", 4)));
  EXPECT_TRUE(StreamBefore(At("mysql-bin.999999", 900), At("mysql-bin.1000000", 4)))
      << "a seventh digit is a later file, though it sorts first as text";
  EXPECT_FALSE(StreamBefore(At("mysql-bin.1000000", 4), At("mysql-bin.999999", 900)));
  EXPECT_TRUE(StreamBefore(At("mysql-bin.000010", 4), At("mysql-bin.000010", 5)));
  EXPECT_FALSE(StreamBefore(At("mysql-bin.000010", 5), At("mysql-bin.000010", 5)));
  EXPECT_FALSE(StreamBefore(At("mysql-bin.0010", 5), At("mysql-bin.000010", 5))) << "leading zeros carry no value";
}

TEST(KeyEncoderTest, ColumnBoundariesAndNullStayDistinct) {
  KeyEncoder a, b, n, e;
  a.Append("ab");
  a.Append("c");
  b.Append("a");
  b.Append("bc");
  EXPECT_NE(a.key(), b.key());
  n.AppendNull();
  e.Append("");
  EXPECT_NE(n.key(), e.key());
  KeyEncoder a2;
  a2.Append("ab");
  a2.Append("c");
  EXPECT_EQ(a.key(), a2.key());
}

TEST(ChunkWindowTest, WaitsUntilTheStreamReachesTheSnapshotPoint) {
  ChunkWindow w(At("b.000001", 100), 100, 1 << 20);
  EXPECT_FALSE(w.Passed(At("b.000001", 1000))) << "no snapshot point yet";
  w.SetSnapshotPoint(At("b.000001", 500));
  EXPECT_FALSE(w.Passed(At("b.000001", 499)));
  EXPECT_TRUE(w.Passed(At("b.000001", 500)));
  EXPECT_TRUE(w.Passed(At("b.000002", 4)));
}

TEST(ChunkWindowTest, ChangesBeforeThePointAreInTheChunkAndKeepTheRow) {
  ChunkWindow w(At("b.000001", 100), 100, 1 << 20);
  // A transaction whose binlog event lies after the low mark but before P: the consistent read
  // sees it, so the chunk's row is already its result.
  w.NoteChange(Key("1"), At("b.000001", 200));
  w.SetSnapshotPoint(At("b.000001", 500));
  EXPECT_FALSE(w.Drops(Key("1")));
  EXPECT_EQ(w.changed_keys(), 0u);
  // Changes that come in after the point is known but lie before it are ignored too.
  w.NoteChange(Key("2"), At("b.000001", 499));
  EXPECT_FALSE(w.Drops(Key("2")));
}

TEST(ChunkWindowTest, ChangesAtOrAfterThePointDropTheRow) {
  ChunkWindow w(At("b.000001", 100), 100, 1 << 20);
  w.NoteChange(Key("1"), At("b.000001", 500));  // the first transaction after P starts at P
  w.NoteChange(Key("2"), At("b.000002", 10));
  w.SetSnapshotPoint(At("b.000001", 500));
  w.NoteChange(Key("3"), At("b.000002", 20));
  EXPECT_TRUE(w.Drops(Key("1")));
  EXPECT_TRUE(w.Drops(Key("2")));
  EXPECT_TRUE(w.Drops(Key("3")));
  EXPECT_FALSE(w.Drops(Key("4")));
}

TEST(ChunkWindowTest, AKeyChangedBeforeAndAfterThePointIsDropped) {
  ChunkWindow w(At("b.000001", 100), 100, 1 << 20);
  w.NoteChange(Key("1"), At("b.000001", 200));
  w.NoteChange(Key("1"), At("b.000001", 600));  // delete then re-insert, or two updates
  w.SetSnapshotPoint(At("b.000001", 500));
  EXPECT_TRUE(w.Drops(Key("1")));
}

TEST(ChunkWindowTest, OverflowsOnKeysOrBytes) {
  ChunkWindow by_keys(At("b.000001", 4), 2, 1 << 20);
  by_keys.NoteChange(Key("1"), At("b.000001", 10));
  by_keys.NoteChange(Key("1"), At("b.000001", 11));  // the same key again costs nothing
  by_keys.NoteChange(Key("2"), At("b.000001", 12));
  EXPECT_FALSE(by_keys.overflowed());
  by_keys.NoteChange(Key("3"), At("b.000001", 13));
  EXPECT_TRUE(by_keys.overflowed());
  EXPECT_EQ(by_keys.changed_keys(), 0u) << "its memory goes back at once";

  ChunkWindow by_bytes(At("b.000001", 4), 1000, 4096);
  by_bytes.NoteChange(Key(std::string(3000, 'k')), At("b.000001", 10));
  EXPECT_FALSE(by_bytes.overflowed());
  by_bytes.NoteChange(Key(std::string(3000, 'j')), At("b.000001", 11));
  EXPECT_TRUE(by_bytes.overflowed());
}

TEST(ChunkWindowTest, PruningAtThePointFreesRoom) {
  ChunkWindow w(At("b.000001", 4), 2, 1 << 20);
  w.NoteChange(Key("1"), At("b.000001", 10));
  w.NoteChange(Key("2"), At("b.000001", 11));
  w.SetSnapshotPoint(At("b.000001", 50));
  w.NoteChange(Key("3"), At("b.000001", 60));
  w.NoteChange(Key("4"), At("b.000001", 61));
  EXPECT_FALSE(w.overflowed());
  EXPECT_TRUE(w.Drops(Key("3")));
}

// A model of the whole merge: a table of integer keys and values, a primary running random
// transactions (inserts, updates, key moves, deletes, deletes and re-inserts), a stream that lags
// it, a snapshot that pages the table by key with chunks read at consistent points the stream has
// or has not reached yet, and a consumer applying what it receives (snapshot rows and changes as
// upserts, deletes as deletes). Whatever the interleaving, the consumer must end with the
// primary's table.
struct Change {
  enum Kind { kUpsert, kDelete } kind;
  int key;
  int value;
};
using Table = std::map<int, int>;
using Txn = std::vector<Change>;

void Apply(Table* t, const Change& c) {
  if (c.kind == Change::kUpsert) {
    (*t)[c.key] = c.value;
  } else {
    t->erase(c.key);
  }
}

class Primary {
 public:
  explicit Primary(std::mt19937* rng) : rng_(rng) {
    for (int k = 0; k < 400; k += 2) table_[k] = k;  // rows that existed before the snapshot
    history_.push_back(table_);
  }
  // One random transaction of 1-3 changes, each decided on the rows as the earlier ones left them.
  void Run() {
    Txn txn;
    Table rows = table_;
    auto add = [&](Change c) {
      txn.push_back(c);
      Apply(&rows, c);
    };
    int n = 1 + static_cast<int>((*rng_)() % 3);
    for (int i = 0; i < n; ++i) {
      int key = static_cast<int>((*rng_)() % 420);
      switch ((*rng_)() % 5) {
        case 0:
        case 1:
          add({Change::kUpsert, key, static_cast<int>((*rng_)() % 100000)});
          break;
        case 2:
          if (rows.count(key)) add({Change::kDelete, key, 0});
          break;
        case 3:  // a key update: the row moves, maybe across chunks
          if (auto it = rows.find(key); it != rows.end()) {
            int to = static_cast<int>((*rng_)() % 420);
            int value = it->second;
            if (!rows.count(to)) {
              add({Change::kDelete, key, 0});
              add({Change::kUpsert, to, value});
            }
          }
          break;
        default:  // delete and re-insert the same key in one transaction
          if (rows.count(key)) {
            add({Change::kDelete, key, 0});
            add({Change::kUpsert, key, -key});
          }
          break;
      }
    }
    table_ = std::move(rows);
    log_.push_back(std::move(txn));
    history_.push_back(table_);
  }
  size_t position() const { return log_.size(); }  // transactions committed: the snapshot point
  const Txn& txn(size_t i) const { return log_[i]; }
  const Table& table_at(size_t position) const { return history_[position]; }
  const Table& table() const { return table_; }

 private:
  std::mt19937* rng_;
  Table table_;
  std::vector<Txn> log_;
  std::vector<Table> history_;
};

LogPosition StreamPoint(size_t txn_index) {
  // Transaction i starts at offset 4 + 100 i; rotate files every 50 transactions.
  LogPosition p;
  char name[32];
  snprintf(name, sizeof name, "b.%06zu", txn_index / 50 + 1);
  p.journal_name = name;
  p.position = 4 + 100 * (txn_index % 50);
  return p;
}

std::string IntKey(int k) { return Key(std::to_string(k)); }

TEST(ChunkWindowModelTest, ConsumerEndsWithThePrimarysTableUnderEveryInterleaving) {
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    Primary primary(&rng);
    Table consumer;
    size_t delivered = 0;  // transactions the stream has delivered
    auto deliver_one = [&](ChunkWindow* window) {
      for (const Change& c : primary.txn(delivered)) {
        Apply(&consumer, c);
        if (window) window->NoteChange(IntKey(c.key), StreamPoint(delivered));
      }
      ++delivered;
    };
    const size_t chunk_rows = 1 + rng() % 40;
    std::optional<int> last_key;
    size_t chunks = 0, dropped = 0, retried = 0;
    for (;;) {
      // The primary runs ahead; the stream lags it by a random amount.
      for (int i = rng() % 6; i > 0; --i) primary.Run();
      while (delivered < primary.position() && rng() % 3 == 0) deliver_one(nullptr);

      ChunkWindow window(StreamPoint(delivered), rng() % 8 == 0 ? 2 : 1000, 1 << 20);
      // The read happens at the primary's current point, while the primary keeps going.
      for (int i = rng() % 4; i > 0; --i) primary.Run();
      const size_t snapshot_point = primary.position();
      std::vector<std::pair<int, int>> chunk;
      const Table& at = primary.table_at(snapshot_point);
      for (auto it = last_key ? at.upper_bound(*last_key) : at.begin();
           it != at.end() && chunk.size() < chunk_rows; ++it) {
        chunk.push_back(*it);
      }
      for (int i = rng() % 4; i > 0; --i) primary.Run();
      // The stream runs on while the chunk is read: maybe short of the point, maybe past it.
      for (int i = rng() % 8; i > 0 && delivered < primary.position(); --i) deliver_one(&window);
      window.SetSnapshotPoint(StreamPoint(snapshot_point));
      while (!window.Passed(StreamPoint(delivered))) deliver_one(&window);
      if (window.overflowed()) {
        ++retried;
        continue;  // read the same chunk again
      }
      for (const auto& [k, v] : chunk) {
        if (window.Drops(IntKey(k))) {
          ++dropped;
          continue;
        }
        consumer[k] = v;
      }
      ++chunks;
      if (chunk.size() < chunk_rows) break;  // the last chunk
      last_key = chunk.back().first;
    }
    for (int i = 0; i < 20; ++i) primary.Run();
    while (delivered < primary.position()) deliver_one(nullptr);
    ASSERT_EQ(consumer, primary.table()) << "seed " << seed << ": " << chunks << " chunks, " << dropped
                                         << " rows dropped, " << retried << " chunks read again";
  }
}

}  // namespace
}  // namespace canal::snapshot
