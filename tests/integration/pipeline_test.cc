// The whole path below the server, against a real MariaDB: EventParser ->
// EntrySink -> RingStore -> a consumer that acks batches and moves its cursor
// in a FileMetaManager, torn down at random moments (the consumer "crashes"
// holding an unacked batch) and rebuilt from meta.dat alone, with the parser
// starting at the slowest client's cursor (the server's SlowestCursorSource).
// Every row must be acked exactly once over all the rounds: the cursor stands
// after the very entry acked, even inside a transaction, so nothing acked
// comes back and nothing is skipped.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/entry.pb.h"
#include "canal/meta/file_meta_manager.h"
#include "canal/parser/event_parser.h"
#include "canal/parser/resume_from_cursor.h"
#include "canal/server/slowest_cursor_source.h"
#include "canal/sink/entry_sink.h"
#include "canal/store/ring_store.h"
#include "support/mariadb_sandbox.h"
#include "support/test_ports.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;

constexpr uint16_t kPort = TestPort("pipeline");
constexpr int kTxns = 600, kRowsPerTxn = 30;

class Pipeline : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { sandbox_ = StartSuiteSandbox(kPort, &setup_error_); }
  static void TearDownTestSuite() { sandbox_.reset(); }
  void SetUp() override { CANAL_REQUIRE_SANDBOX(sandbox_, setup_error_); }

  static inline std::unique_ptr<MariadbSandbox> sandbox_;
  static inline std::string setup_error_;
};

TEST_F(Pipeline, CrashesAtRandomMomentsNeitherRepeatNorSkipAnAckedRow) {
  ASSERT_TRUE(sandbox_->Sql("CREATE DATABASE p_db; CREATE TABLE p_db.t (id INT AUTO_INCREMENT PRIMARY KEY,"
                            " txn INT NOT NULL, seq INT NOT NULL, pad VARCHAR(40));"
                            "CREATE TABLE p_db.other (id INT PRIMARY KEY)"))
      << sandbox_->error();
  std::string status;
  ASSERT_TRUE(sandbox_->Sql("SHOW MASTER STATUS", &status));
  const std::string first_file = status.substr(0, status.find('\t'));
  const uint64_t first_pos = std::strtoull(status.c_str() + status.find('\t') + 1, nullptr, 10);
  {
    // Transactions of 30 rows in 3 statements, with a filtered table in between.
    const std::string path = sandbox_->dir() + "/pipeline.sql";
    std::ofstream out(path);
    for (int t = 1; t <= kTxns; ++t) {
      out << "BEGIN;\n";
      for (int part = 0; part < 3; ++part) {
        out << "INSERT INTO p_db.t (txn, seq, pad) VALUES ";
        for (int r = 0; r < kRowsPerTxn / 3; ++r) {
          const int seq = part * (kRowsPerTxn / 3) + r;
          out << (r ? "," : "") << "(" << t << "," << seq << ",'pad-" << t << "')";
        }
        out << ";\n";
        if (part == 1) out << "INSERT INTO p_db.other VALUES (" << t << ");\n";
      }
      out << "COMMIT;\n";
    }
    out.close();
    ASSERT_TRUE(sandbox_->SqlFile(path)) << sandbox_->error();
  }

  const std::string data_dir = sandbox_->dir() + "/pipeline-meta";
  std::filesystem::remove_all(data_dir);
  meta::ClientIdentity client;
  client.destination = "pipe";
  client.client_id = 1001;

  std::vector<int> acked(static_cast<size_t>(kTxns) * kRowsPerTxn, 0);
  uint64_t acked_rows = 0, duplicates = 0, rounds = 0, redelivered_unacked = 0;
  std::mt19937 rng(20261130);
  while (acked_rows < acked.size() && rounds < 40) {
    ++rounds;
    meta::FileMetaOptions mo;
    mo.data_dir = data_dir;
    mo.flush_period = 0ms;  // only explicit flushes: the test decides what is durable
    meta::FileMetaManager meta(mo);
    ASSERT_TRUE(meta.Start().ok());
    ASSERT_TRUE(meta.Subscribe(client).ok());

    store::RingStoreOptions so;
    so.buffer_size = 64;  // small: the parser feels back-pressure
    so.buffer_memunit = 256;
    std::unique_ptr<store::RingStore> ring;
    ASSERT_TRUE(store::RingStore::Create(so, &ring).ok());
    sink::EntrySinkOptions sink_options;
    ASSERT_TRUE(sink_options.CompileFilters("p_db\\.t", "", "", "").ok());
    sink::EntrySink sink(std::move(sink_options), ring.get());
    server::SlowestCursorSource source(&meta, client.destination);  // the server's own

    parser::EventParserOptions po;
    po.destination = client.destination;
    po.master.port = kPort;
    po.master.user = MariadbSandbox::kUser;
    po.master.password = MariadbSandbox::kPassword;
    po.start.journal_name = first_file;  // used only while there is no cursor
    po.start.position = first_pos;
    po.buffer.max_events = 1 + rng() % 6;  // pieces of every size, whole transactions too
    parser::EventParser parser(po, &sink, &source);
    parser.Start();

    // This round's consumer acks a random number of batches, then "crashes"
    // holding the next one unacked.
    const int batches_before_crash = 1 + static_cast<int>(rng() % 60);
    store::Batch batch;
    for (int b = 0; b <= batches_before_crash && acked_rows < acked.size(); ++b) {
      const size_t want = 1 + rng() % 40;
      Status s = ring->Get(want, 2s, &batch);
      ASSERT_TRUE(s.ok()) << s.ToString();
      ASSERT_TRUE(parser.fatal_error().ok()) << parser.fatal_error().ToString();
      if (batch.empty()) continue;
      std::vector<size_t> rows;
      for (const auto& view : batch.entries) {
        entry::Entry e;
        ASSERT_TRUE(e.ParseFromArray(view.bytes.data(), static_cast<int>(view.bytes.size())));
        if (e.entrytype() != entry::ROWDATA) continue;
        entry::RowChange rc;
        ASSERT_TRUE(rc.ParseFromString(e.storevalue()));
        if (rc.isddl()) continue;
        ASSERT_EQ(e.header().tablename(), "t");
        for (const auto& row : rc.rowdatas()) {
          const int txn = std::stoi(row.aftercolumns(1).value());
          const int seq = std::stoi(row.aftercolumns(2).value());
          rows.push_back(static_cast<size_t>(txn - 1) * kRowsPerTxn + static_cast<size_t>(seq));
        }
      }
      if (b == batches_before_crash) {
        redelivered_unacked += rows.size();  // the crash loses this batch unacked
        break;
      }
      ASSERT_TRUE(ring->Ack(batch).ok());
      for (size_t r : rows) {
        if (acked[r]++ != 0) ++duplicates;
        ++acked_rows;
      }
      if (batch.safe_position.has_value()) {
        ASSERT_TRUE(meta.UpdateCursor(client, *batch.safe_position).ok());
        ASSERT_TRUE(meta.Flush(client.destination).ok());  // durable before "answering"
      }
    }
    // The crash: the ring stops (the parser's blocked put ends), the parser
    // stops; nothing else is written.
    ring->Stop();
    parser.Stop();
  }
  uint64_t missing = 0;
  for (int c : acked) missing += c == 0;
  std::printf("[ pipeline ] %llu rounds, %llu rows acked, %llu duplicates, %llu missing, %llu rows of unacked "
              "batches dropped by crashes\n",
              static_cast<unsigned long long>(rounds), static_cast<unsigned long long>(acked_rows),
              static_cast<unsigned long long>(duplicates), static_cast<unsigned long long>(missing),
              static_cast<unsigned long long>(redelivered_unacked));
  EXPECT_GE(rounds, 3u);
  EXPECT_EQ(duplicates, 0u);
  EXPECT_EQ(missing, 0u);
}

}  // namespace
}  // namespace canal::testing
