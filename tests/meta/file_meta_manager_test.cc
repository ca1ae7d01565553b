// FileMetaManager: what reaches meta.dat, when, and what happens on reload.
#include "canal/meta/file_meta_manager.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "canal/meta/meta_json.h"
#include "meta_test_util.h"

namespace canal::meta {
namespace {

using namespace std::chrono_literals;
using testing::Client;
using testing::Pos;
using testing::Range;
using testing::ReadFile;
using testing::ReadMetaJson;
using testing::ScratchDir;
using testing::WriteFile;

class FileMetaManagerTest : public ::testing::Test {
 protected:
  // A long period keeps the background flusher out of tests that count writes.
  std::unique_ptr<FileMetaManager> Make(std::chrono::milliseconds period = 1h) {
    return std::make_unique<FileMetaManager>(FileMetaOptions{dir_.path(), period});
  }
  std::unique_ptr<FileMetaManager> Started(std::chrono::milliseconds period = 1h) {
    auto m = Make(period);
    Status s = m->Start();
    EXPECT_TRUE(s.ok()) << s.ToString();
    return m;
  }
  std::string MetaDat(const std::string& destination = "example") const {
    return dir_.path() + "/" + destination + "/meta.dat";
  }

  ScratchDir dir_;
};

TEST_F(FileMetaManagerTest, SubscribeWritesTheFileAtOnce) {
  auto m = Started();
  ASSERT_TRUE(m->Subscribe(Client(1001, "example", ".*\\..*")).ok());
  EXPECT_EQ(ReadMetaJson(MetaDat()),
            R"({"clientDatas":[{"clientIdentity":{"clientId":1001,"destination":"example","filter":".*\\..*"}}],)"
            R"("destination":"example"})");
  EXPECT_EQ(m->file_writes(), 1u);
  EXPECT_EQ(m->MetaFilePath("example"), MetaDat());
}

TEST_F(FileMetaManagerTest, FlushedCursorIsWrittenInCanalShape) {
  auto m = Started();
  ASSERT_TRUE(m->Subscribe(Client()).ok());
  ASSERT_TRUE(m->SetSourceIdentity("example", LogIdentity{-1, "127.0.0.1", 3306}).ok());
  ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000004", 13885)).ok());
  ASSERT_TRUE(m->Flush("example").ok());
  EXPECT_EQ(ReadMetaJson(MetaDat()),
            R"({"clientDatas":[{"clientIdentity":{"clientId":1001,"destination":"example","filter":""},)"
            R"("cursor":{"identity":{"slaveId":-1,"sourceAddress":{"address":"127.0.0.1","port":3306}},)"
            R"("postion":{"gtid":"","included":false,"journalName":"mysql-bin.000004","position":13885,)"
            R"("serverId":1,"timestamp":1591600659000}}}],"destination":"example"})");
}

TEST_F(FileMetaManagerTest, UpdateCursorAloneDoesNotWrite) {
  auto m = Started();
  ASSERT_TRUE(m->Subscribe(Client()).ok());
  const std::string before = ReadMetaJson(MetaDat());
  ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000004", 4)).ok());
  EXPECT_EQ(ReadMetaJson(MetaDat()), before);
  EXPECT_EQ(m->file_writes(), 1u);
}

TEST_F(FileMetaManagerTest, FlushCoalescesEveryAckSinceTheLastWrite) {
  auto m = Started();
  ASSERT_TRUE(m->Subscribe(Client()).ok());
  ASSERT_TRUE(m->Subscribe(Client(1002)).ok());
  const uint64_t base = m->file_writes();
  for (uint64_t i = 1; i <= 100; ++i) {
    ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000004", i)).ok());
    ASSERT_TRUE(m->UpdateCursor(Client(1002), Pos("mysql-bin.000004", 1000 + i)).ok());
  }
  ASSERT_TRUE(m->Flush("example").ok());
  EXPECT_EQ(m->file_writes(), base + 1);
  // Nothing changed since: no write.
  ASSERT_TRUE(m->Flush("example").ok());
  ASSERT_TRUE(m->Flush("example").ok());
  EXPECT_EQ(m->file_writes(), base + 1);

  DestinationMeta meta;
  ASSERT_TRUE(DecodeMetaFile(ReadMetaJson(MetaDat()), &meta).ok());
  ASSERT_EQ(meta.clients.size(), 2u);
  EXPECT_EQ(meta.clients[0].cursor->position, 100u);
  EXPECT_EQ(meta.clients[1].cursor->position, 1100u);
}

// An ack that leaves the cursor where it stands (the entries of one snapshot chunk all resume at
// its start) has nothing to make durable: no fsync for it. Equal is by value: the progress and
// GTID texts in other objects with the same text are the same cursor.
TEST_F(FileMetaManagerTest, TheSameCursorAgainWritesNothing) {
  auto m = Started();
  ASSERT_TRUE(m->Subscribe(Client()).ok());
  ASSERT_TRUE(m->SetSourceIdentity("example", LogIdentity{-1, "127.0.0.1", 3306}).ok());
  const auto at = [](const std::string& progress, const std::string& gtid_set) {
    LogPosition p = Pos("mysql-bin.000004", 13885);
    p.gtid = "0-1-7";
    p.included = true;
    p.snapshot = std::make_shared<const std::string>(progress);
    p.gtid_set = std::make_shared<const std::string>(gtid_set);
    return p;
  };
  ASSERT_TRUE(m->UpdateCursor(Client(), at(R"({"chunk":1})", "0-1-6")).ok());
  ASSERT_TRUE(m->Flush("example").ok());
  const uint64_t written = m->file_writes();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(m->UpdateCursor(Client(), at(R"({"chunk":1})", "0-1-6")).ok());
    ASSERT_TRUE(m->Flush("example").ok());
  }
  EXPECT_EQ(m->file_writes(), written);

  // Any difference is written: the progress, the GTID state, a field, the upstream.
  ASSERT_TRUE(m->UpdateCursor(Client(), at(R"({"chunk":2})", "0-1-6")).ok());
  ASSERT_TRUE(m->Flush("example").ok());
  EXPECT_EQ(m->file_writes(), written + 1);
  ASSERT_TRUE(m->UpdateCursor(Client(), at(R"({"chunk":2})", "0-1-7")).ok());
  ASSERT_TRUE(m->Flush("example").ok());
  EXPECT_EQ(m->file_writes(), written + 2);
  LogPosition later = at(R"({"chunk":2})", "0-1-7");
  later.timestamp_ms += 1;
  ASSERT_TRUE(m->UpdateCursor(Client(), later).ok());
  ASSERT_TRUE(m->Flush("example").ok());
  EXPECT_EQ(m->file_writes(), written + 3);
  ASSERT_TRUE(m->SetSourceIdentity("example", LogIdentity{-1, "10.0.0.2", 3306}).ok());
  ASSERT_TRUE(m->UpdateCursor(Client(), later).ok());
  ASSERT_TRUE(m->Flush("example").ok());
  EXPECT_EQ(m->file_writes(), written + 4);
  std::optional<LogPosition> cursor;
  LogIdentity identity;
  ASSERT_TRUE(m->GetCursor(Client(), &cursor, &identity).ok());
  EXPECT_EQ(identity.address, "10.0.0.2");

  // Back to an earlier cursor is a change too, and a restart reads the last one.
  ASSERT_TRUE(m->UpdateCursor(Client(), at(R"({"chunk":1})", "0-1-6")).ok());
  ASSERT_TRUE(m->Flush("example").ok());
  EXPECT_EQ(m->file_writes(), written + 5);
  ASSERT_TRUE(m->Stop().ok());
  m = Started();
  ASSERT_TRUE(m->GetCursor(Client(), &cursor).ok());
  ASSERT_TRUE(cursor.has_value());
  EXPECT_EQ(*cursor, at(R"({"chunk":1})", "0-1-6"));
}

// MayNeedFlush: false only while everything is written, so a session may skip the flush.
TEST_F(FileMetaManagerTest, MayNeedFlushIsFalseOnlyWhileEverythingIsWritten) {
  auto m = Started();
  EXPECT_TRUE(m->MayNeedFlush("example"));  // not loaded yet: Flush's business
  ASSERT_TRUE(m->Subscribe(Client()).ok());
  EXPECT_FALSE(m->MayNeedFlush("example"));  // Subscribe wrote it
  ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000004", 100)).ok());
  EXPECT_TRUE(m->MayNeedFlush("example"));
  ASSERT_TRUE(m->Flush("example").ok());
  EXPECT_FALSE(m->MayNeedFlush("example"));
  ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000004", 100)).ok());
  EXPECT_FALSE(m->MayNeedFlush("example"));  // the same cursor: nothing to write
  ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000004", 101)).ok());
  EXPECT_TRUE(m->MayNeedFlush("example"));
  EXPECT_TRUE(m->MayNeedFlush("other"));
}

// A pending change stays pending when the same cursor comes again before the flush.
TEST_F(FileMetaManagerTest, TheSameCursorAgainKeepsAPendingWrite) {
  auto m = Started();
  ASSERT_TRUE(m->Subscribe(Client()).ok());
  const uint64_t written = m->file_writes();
  ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000004", 100)).ok());
  ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000004", 100)).ok());
  ASSERT_TRUE(m->Flush("example").ok());
  EXPECT_EQ(m->file_writes(), written + 1);
  DestinationMeta meta;
  ASSERT_TRUE(DecodeMetaFile(ReadMetaJson(MetaDat()), &meta).ok());
  ASSERT_EQ(meta.clients.size(), 1u);
  EXPECT_EQ(meta.clients[0].cursor->position, 100u);
}

TEST_F(FileMetaManagerTest, FlushOfAnUntouchedDestinationWritesNothing) {
  auto m = Started();
  ASSERT_TRUE(m->Flush("example").ok());
  EXPECT_EQ(m->file_writes(), 0u);
  EXPECT_FALSE(std::filesystem::exists(MetaDat()));
}

TEST_F(FileMetaManagerTest, BatchChangesDoNotMakeTheFileDirty) {
  auto m = Started();
  ASSERT_TRUE(m->Subscribe(Client()).ok());
  int64_t id;
  ASSERT_TRUE(m->AddBatch(Client(), Range(1, 2), &id).ok());
  ASSERT_TRUE(m->RemoveBatch(Client(), id, nullptr).ok());
  ASSERT_TRUE(m->Flush("example").ok());
  EXPECT_EQ(m->file_writes(), 1u);
}

TEST_F(FileMetaManagerTest, RestartYieldsTheSameSubscriptionsAndCursors) {
  {
    auto m = Started();
    ASSERT_TRUE(m->Subscribe(Client(1001, "example", "canal\\..*")).ok());
    ASSERT_TRUE(m->Subscribe(Client(1002)).ok());
    ASSERT_TRUE(m->Subscribe(Client(5, "other")).ok());
    ASSERT_TRUE(m->SetSourceIdentity("example", LogIdentity{-1, "db1", 3307}).ok());
    LogPosition p = Pos("mysql-bin.000009", 777);
    p.gtid = "0-1-42";
    p.included = true;
    ASSERT_TRUE(m->UpdateCursor(Client(1001), p).ok());
    ASSERT_TRUE(m->UpdateCursor(Client(5, "other"), Pos("mysql-bin.000002", 120)).ok());
    int64_t id;
    ASSERT_TRUE(m->AddBatch(Client(1001), Range(1, 2), &id).ok());
    ASSERT_TRUE(m->Stop().ok());  // writes the dirty cursors
  }
  auto m = Started();
  std::vector<ClientIdentity> clients;
  ASSERT_TRUE(m->ListClients("example", &clients).ok());
  ASSERT_EQ(clients.size(), 2u);
  EXPECT_EQ(clients[0], Client(1001, "example", "canal\\..*"));
  EXPECT_EQ(clients[1], Client(1002));

  std::optional<LogPosition> cursor;
  LogIdentity identity;
  ASSERT_TRUE(m->GetCursor(Client(1001), &cursor, &identity).ok());
  ASSERT_TRUE(cursor.has_value());
  EXPECT_EQ(cursor->journal_name, "mysql-bin.000009");
  EXPECT_EQ(cursor->position, 777u);
  EXPECT_EQ(cursor->gtid, "0-1-42");
  EXPECT_TRUE(cursor->included);
  EXPECT_EQ(identity, (LogIdentity{-1, "db1", 3307}));
  ASSERT_TRUE(m->GetCursor(Client(1002), &cursor).ok());
  EXPECT_FALSE(cursor.has_value());
  ASSERT_TRUE(m->GetCursor(Client(5, "other"), &cursor).ok());
  ASSERT_TRUE(cursor.has_value());
  EXPECT_EQ(cursor->position, 120u);

  // Batches are memory-only: a restart starts over from the cursor, ids from 1.
  std::vector<Batch> batches;
  ASSERT_TRUE(m->ListBatches(Client(1001), &batches).ok());
  EXPECT_TRUE(batches.empty());
  int64_t id;
  ASSERT_TRUE(m->AddBatch(Client(1001), Range(1, 2), &id).ok());
  EXPECT_EQ(id, 1);
}

TEST_F(FileMetaManagerTest, LoadedCursorKeepsItsUpstreamUntilTheInstanceNamesOne) {
  WriteFile(MetaDat(),
            R"({"clientDatas":[{"clientIdentity":{"clientId":1001,"destination":"example","filter":""},)"
            R"("cursor":{"identity":{"slaveId":-1,"sourceAddress":{"address":"localhost","port":3306}},)"
            R"("postion":{"gtid":"","included":false,"journalName":"mysql-bin.000003","position":13788906,)"
            R"("serverId":1,"timestamp":1584689464000}}}],"destination":"example"})");
  auto m = Started();
  ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000003", 13790000)).ok());
  std::optional<LogPosition> cursor;
  LogIdentity identity;
  ASSERT_TRUE(m->GetCursor(Client(), &cursor, &identity).ok());
  EXPECT_EQ(identity, (LogIdentity{-1, "localhost", 3306}));
  ASSERT_TRUE(m->SetSourceIdentity("example", LogIdentity{-1, "10.0.0.2", 3306}).ok());
  ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000003", 13790100)).ok());
  ASSERT_TRUE(m->GetCursor(Client(), &cursor, &identity).ok());
  EXPECT_EQ(identity.address, "10.0.0.2");
}

TEST_F(FileMetaManagerTest, UnsubscribeWritesAtOnceAndDropsTheCursorFromTheFile) {
  auto m = Started();
  ASSERT_TRUE(m->Subscribe(Client()).ok());
  ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000004", 4)).ok());
  ASSERT_TRUE(m->Unsubscribe(Client()).ok());
  EXPECT_EQ(ReadMetaJson(MetaDat()), R"({"clientDatas":[],"destination":"example"})");
}

TEST_F(FileMetaManagerTest, StopWritesWhatIsDirty) {
  auto m = Started();
  ASSERT_TRUE(m->Subscribe(Client()).ok());
  ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000004", 4242)).ok());
  ASSERT_TRUE(m->Stop().ok());
  // Stop leaves Canal's plain JSON, nothing else.
  EXPECT_EQ(ReadFile(MetaDat()).rfind(R"({"clientDatas":)", 0), 0u) << ReadFile(MetaDat());
  EXPECT_NE(ReadFile(MetaDat()).find(R"("position":4242)"), std::string::npos);
}

TEST_F(FileMetaManagerTest, DestructorWritesWhatIsDirty) {
  {
    auto m = Started();
    ASSERT_TRUE(m->Subscribe(Client()).ok());
    ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000004", 4343)).ok());
  }
  EXPECT_EQ(ReadFile(MetaDat()).rfind(R"({"clientDatas":)", 0), 0u) << ReadFile(MetaDat());
  EXPECT_NE(ReadFile(MetaDat()).find(R"("position":4343)"), std::string::npos);
}

TEST_F(FileMetaManagerTest, BackgroundFlusherWritesWithinThePeriod) {
  auto m = Started(20ms);
  ASSERT_TRUE(m->Subscribe(Client()).ok());
  ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000004", 5151)).ok());
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (ReadMetaJson(MetaDat()).find(R"("position":5151)") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_NE(ReadMetaJson(MetaDat()).find(R"("position":5151)"), std::string::npos);
  EXPECT_TRUE(m->background_status().ok());
}

TEST_F(FileMetaManagerTest, MissingFileIsAnEmptyDestination) {
  auto m = Started();
  std::vector<ClientIdentity> clients;
  ASSERT_TRUE(m->ListClients("example", &clients).ok());
  EXPECT_TRUE(clients.empty());
}

TEST_F(FileMetaManagerTest, MissingDataAndDestinationDirectoriesAreCreated) {
  const std::string data_dir = dir_.path() + "/not/yet/there";
  FileMetaManager m(FileMetaOptions{data_dir, 1h});
  ASSERT_TRUE(m.Start().ok());
  EXPECT_TRUE(std::filesystem::is_directory(data_dir));
  ASSERT_TRUE(m.Subscribe(Client()).ok());
  EXPECT_TRUE(std::filesystem::is_regular_file(data_dir + "/example/meta.dat"));
  // A destination directory removed under us comes back on the next write.
  std::filesystem::remove_all(data_dir + "/example");
  ASSERT_TRUE(m.UpdateCursor(Client(), Pos("mysql-bin.000001", 4)).ok());
  ASSERT_TRUE(m.Flush("example").ok());
  EXPECT_TRUE(std::filesystem::is_regular_file(data_dir + "/example/meta.dat"));
}

TEST_F(FileMetaManagerTest, StartFailsWhenTheDataDirectoryIsAFile) {
  WriteFile(dir_.path() + "/plain", "x");
  FileMetaManager m(FileMetaOptions{dir_.path() + "/plain", 1h});
  Status s = m.Start();
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find(dir_.path() + "/plain"), std::string::npos) << s.ToString();
  EXPECT_EQ(FileMetaManager(FileMetaOptions{"", 1h}).Start().code(), Status::Code::kInvalidArgument);
}

TEST_F(FileMetaManagerTest, CorruptFileIsAnErrorNamingItAndIsNeverReset) {
  const std::string torn = R"({"clientDatas":[{"clientIdentity":{"clientId":1001,"destina)";
  WriteFile(MetaDat(), torn);
  auto m = Started();
  // Every call on the destination keeps failing; none rewrites the file.
  testing::ExpectCorruptDestination(m.get(), MetaDat());
  EXPECT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000001", 4)).IsCorruption());
  EXPECT_TRUE(m->Unsubscribe(Client()).IsCorruption());
  ASSERT_TRUE(m->Stop().ok());
  EXPECT_EQ(ReadFile(MetaDat()), torn);
  // Other destinations are unaffected.
  m = Started();
  EXPECT_TRUE(m->Subscribe(Client(1, "other")).ok());
  // Once repaired, the destination loads.
  WriteFile(MetaDat(), R"({"clientDatas":[],"destination":"example"})");
  std::vector<ClientIdentity> clients;
  EXPECT_TRUE(m->ListClients("example", &clients).ok());
}

TEST_F(FileMetaManagerTest, FileOfAnotherDestinationIsCorruption) {
  WriteFile(MetaDat(), R"({"clientDatas":[],"destination":"elsewhere"})");
  auto m = Started();
  std::vector<ClientIdentity> clients;
  Status s = m->ListClients("example", &clients);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("elsewhere"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find(MetaDat()), std::string::npos) << s.ToString();
}

TEST_F(FileMetaManagerTest, MetaFileThatIsADirectoryIsAnIOError) {
  std::filesystem::create_directories(MetaDat());
  auto m = Started();
  std::vector<ClientIdentity> clients;
  Status s = m->ListClients("example", &clients);
  EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  EXPECT_NE(s.message().find(MetaDat()), std::string::npos) << s.ToString();
}

TEST_F(FileMetaManagerTest, LeftoverTempFileFromACrashIsHarmless) {
  WriteFile(MetaDat() + ".tmp", "half a fi");
  WriteFile(MetaDat(), R"({"clientDatas":[],"destination":"example"})");
  auto m = Started();
  ASSERT_TRUE(m->Subscribe(Client()).ok());
  DestinationMeta meta;
  ASSERT_TRUE(DecodeMetaFile(ReadMetaJson(MetaDat()), &meta).ok());
  EXPECT_EQ(meta.clients.size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(MetaDat() + ".tmp"));
}

TEST_F(FileMetaManagerTest, ConcurrentAcksAndFlushesEndWithEveryLastCursorOnDisk) {
  auto m = Started(5ms);  // the background flusher joins in
  constexpr int kThreads = 4;
  constexpr uint64_t kAcks = 300;
  for (int t = 0; t < kThreads; ++t) ASSERT_TRUE(m->Subscribe(Client(static_cast<int16_t>(t))).ok());
  const uint64_t base = m->file_writes();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (uint64_t i = 1; i <= kAcks; ++i) {
        ClientIdentity c = Client(static_cast<int16_t>(t));
        int64_t id;
        EXPECT_TRUE(m->AddBatch(c, Range(i, i + 1), &id).ok());
        EXPECT_TRUE(m->RemoveBatch(c, id, nullptr).ok());
        EXPECT_TRUE(m->UpdateCursor(c, Pos("mysql-bin.000004", i)).ok());
        if (i % 3 == 0) {
          EXPECT_TRUE(m->Flush("example").ok());
        }
      }
      EXPECT_TRUE(m->Flush("example").ok());
    });
  }
  for (auto& th : threads) th.join();
  // A write needs a change it has not yet covered: never more writes than acks.
  EXPECT_LE(m->file_writes() - base, uint64_t{kThreads} * kAcks);
  DestinationMeta meta;
  ASSERT_TRUE(DecodeMetaFile(ReadMetaJson(MetaDat()), &meta).ok());
  ASSERT_EQ(meta.clients.size(), static_cast<size_t>(kThreads));
  for (const ClientMeta& c : meta.clients) {
    ASSERT_TRUE(c.cursor.has_value());
    EXPECT_EQ(c.cursor->position, kAcks) << "client " << c.client.client_id;
  }
}

}  // namespace
}  // namespace canal::meta
