// The MetaManager rules, checked on every back end.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/meta/file_meta_manager.h"
#include "canal/meta/memory_meta_manager.h"
#include "meta_test_util.h"

namespace canal::meta {
namespace {

using testing::Client;
using testing::Pos;
using testing::Range;
using testing::ScratchDir;

class MetaManagerRulesTest : public testing::BackEndTest {
 protected:
  int64_t Add(const ClientIdentity& c, uint64_t from) {
    int64_t id = -1;
    Status s = meta_->AddBatch(c, Range(from, from + 10), &id);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return id;
  }
};

TEST_P(MetaManagerRulesTest, BatchIdsCountFromOnePerClient) {
  ClientIdentity other = Client(1002);
  ASSERT_TRUE(meta_->Subscribe(other).ok());
  EXPECT_EQ(Add(client_, 100), 1);
  EXPECT_EQ(Add(client_, 200), 2);
  EXPECT_EQ(Add(other, 100), 1);
  EXPECT_EQ(Add(client_, 300), 3);
}

TEST_P(MetaManagerRulesTest, GetBatchReturnsTheRangeRecorded) {
  int64_t id = Add(client_, 100);
  PositionRange r;
  ASSERT_TRUE(meta_->GetBatch(client_, id, &r).ok());
  EXPECT_EQ(r, Range(100, 110));
}

TEST_P(MetaManagerRulesTest, UnknownBatchIdIsNotFoundNamingClientAndRequest) {
  Add(client_, 100);
  PositionRange r;
  for (int64_t id : {int64_t{0}, int64_t{-1}, int64_t{2}, INT64_MAX}) {
    Status s = meta_->GetBatch(client_, id, &r);
    EXPECT_TRUE(s.IsNotFound()) << s.ToString();
    s = meta_->RemoveBatch(client_, id, &r);
    EXPECT_TRUE(s.IsNotFound()) << s.ToString();
    EXPECT_NE(s.message().find("RemoveBatch"), std::string::npos) << s.ToString();
    EXPECT_NE(s.message().find("client 1001 of destination example"), std::string::npos) << s.ToString();
    EXPECT_NE(s.message().find("batchId:" + std::to_string(id)), std::string::npos) << s.ToString();
  }
}

TEST_P(MetaManagerRulesTest, OnlyTheOldestOutstandingBatchCanBeRemoved) {
  Add(client_, 100);
  Add(client_, 200);
  Add(client_, 300);
  PositionRange r;
  Status s = meta_->RemoveBatch(client_, 2, &r);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("batchId:2 is not the firstly:1"), std::string::npos) << s.ToString();
  // The refused removal changed nothing.
  std::vector<Batch> batches;
  ASSERT_TRUE(meta_->ListBatches(client_, &batches).ok());
  ASSERT_EQ(batches.size(), 3u);

  ASSERT_TRUE(meta_->RemoveBatch(client_, 1, &r).ok());
  EXPECT_EQ(r, Range(100, 110));
  s = meta_->RemoveBatch(client_, 3, &r);
  EXPECT_NE(s.message().find("batchId:3 is not the firstly:2"), std::string::npos) << s.ToString();
  ASSERT_TRUE(meta_->RemoveBatch(client_, 2, &r).ok());
  ASSERT_TRUE(meta_->RemoveBatch(client_, 3, &r).ok());
  EXPECT_TRUE(meta_->RemoveBatch(client_, 3, &r).IsNotFound());
}

TEST_P(MetaManagerRulesTest, RemovedIdsAreNotReused) {
  Add(client_, 100);
  PositionRange r;
  ASSERT_TRUE(meta_->RemoveBatch(client_, 1, &r).ok());
  EXPECT_EQ(Add(client_, 200), 2);
}

TEST_P(MetaManagerRulesTest, FirstAndLastestBatchFollowOutstandingIds) {
  std::optional<Batch> b;
  ASSERT_TRUE(meta_->GetFirstBatch(client_, &b).ok());
  EXPECT_FALSE(b.has_value());
  ASSERT_TRUE(meta_->GetLastestBatch(client_, &b).ok());
  EXPECT_FALSE(b.has_value());

  Add(client_, 100);
  Add(client_, 200);
  Add(client_, 300);
  ASSERT_TRUE(meta_->GetFirstBatch(client_, &b).ok());
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->id, 1);
  EXPECT_EQ(b->range, Range(100, 110));
  ASSERT_TRUE(meta_->GetLastestBatch(client_, &b).ok());
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->id, 3);
  EXPECT_EQ(b->range, Range(300, 310));

  std::vector<Batch> all;
  ASSERT_TRUE(meta_->ListBatches(client_, &all).ok());
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].id, 1);
  EXPECT_EQ(all[2].id, 3);
}

TEST_P(MetaManagerRulesTest, ClearAllBatchesDropsThemAndKeepsCounting) {
  Add(client_, 100);
  Add(client_, 200);
  ASSERT_TRUE(meta_->ClearAllBatches(client_).ok());
  std::vector<Batch> all;
  ASSERT_TRUE(meta_->ListBatches(client_, &all).ok());
  EXPECT_TRUE(all.empty());
  EXPECT_EQ(Add(client_, 300), 3);
}

TEST_P(MetaManagerRulesTest, AddBatchWithIdMovesTheCounterPastIt) {
  ASSERT_TRUE(meta_->AddBatchWithId(client_, Range(100, 110), 7).ok());
  EXPECT_EQ(Add(client_, 200), 8);
  PositionRange r;
  ASSERT_TRUE(meta_->GetBatch(client_, 7, &r).ok());
  EXPECT_EQ(r, Range(100, 110));
  // A lower id does not move the counter back.
  ASSERT_TRUE(meta_->AddBatchWithId(client_, Range(50, 60), 3).ok());
  EXPECT_EQ(Add(client_, 300), 9);
}

TEST_P(MetaManagerRulesTest, AddBatchWithIdRefusesNonPositiveAndOutstandingIds) {
  EXPECT_EQ(meta_->AddBatchWithId(client_, Range(1, 2), 0).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(meta_->AddBatchWithId(client_, Range(1, 2), -5).code(), Status::Code::kInvalidArgument);
  ASSERT_TRUE(meta_->AddBatchWithId(client_, Range(1, 2), 4).ok());
  Status s = meta_->AddBatchWithId(client_, Range(3, 4), 4);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  PositionRange r;
  ASSERT_TRUE(meta_->GetBatch(client_, 4, &r).ok());
  EXPECT_EQ(r, Range(1, 2));  // the first one stays
  // The largest id does not overflow the counter.
  ASSERT_TRUE(meta_->AddBatchWithId(client_, Range(5, 6), INT64_MAX).ok());
}

TEST_P(MetaManagerRulesTest, CursorIsAbsentUntilUpdated) {
  std::optional<LogPosition> cursor;
  ASSERT_TRUE(meta_->GetCursor(client_, &cursor).ok());
  EXPECT_FALSE(cursor.has_value());
  ASSERT_TRUE(meta_->UpdateCursor(client_, Pos("mysql-bin.000004", 13885)).ok());
  ASSERT_TRUE(meta_->GetCursor(client_, &cursor).ok());
  ASSERT_TRUE(cursor.has_value());
  EXPECT_EQ(*cursor, Pos("mysql-bin.000004", 13885));
}

TEST_P(MetaManagerRulesTest, CursorWithoutJournalNameIsRefused) {
  Status s = meta_->UpdateCursor(client_, LogPosition{});
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("UpdateCursor"), std::string::npos);
}

TEST_P(MetaManagerRulesTest, CursorCarriesTheSourceIdentityOfItsDestination) {
  LogIdentity id{-1, "127.0.0.1", 3306};
  ASSERT_TRUE(meta_->SetSourceIdentity("example", id).ok());
  ASSERT_TRUE(meta_->UpdateCursor(client_, Pos("mysql-bin.000004", 4)).ok());
  std::optional<LogPosition> cursor;
  LogIdentity got;
  ASSERT_TRUE(meta_->GetCursor(client_, &cursor, &got).ok());
  EXPECT_EQ(got, id);
}

TEST_P(MetaManagerRulesTest, UnsubscribeDropsBatchesAndCursor) {
  ASSERT_TRUE(meta_->UpdateCursor(client_, Pos("mysql-bin.000004", 4)).ok());
  Add(client_, 100);
  ASSERT_TRUE(meta_->Unsubscribe(client_).ok());
  bool subscribed = true;
  ASSERT_TRUE(meta_->HasSubscribe(client_, &subscribed).ok());
  EXPECT_FALSE(subscribed);
  std::optional<LogPosition> cursor;
  EXPECT_TRUE(meta_->GetCursor(client_, &cursor).IsNotFound());

  ASSERT_TRUE(meta_->Subscribe(client_).ok());
  ASSERT_TRUE(meta_->GetCursor(client_, &cursor).ok());
  EXPECT_FALSE(cursor.has_value());
  std::vector<Batch> all;
  ASSERT_TRUE(meta_->ListBatches(client_, &all).ok());
  EXPECT_TRUE(all.empty());
  // Ids of the earlier subscription are not handed out again.
  EXPECT_EQ(Add(client_, 200), 2);
}

TEST_P(MetaManagerRulesTest, UnsubscribingAnUnknownClientIsHarmless) {
  EXPECT_TRUE(meta_->Unsubscribe(Client(7)).ok());
  std::vector<ClientIdentity> clients;
  ASSERT_TRUE(meta_->ListClients("example", &clients).ok());
  EXPECT_EQ(clients.size(), 1u);
}

TEST_P(MetaManagerRulesTest, ResubscribingReplacesTheFilterAndKeepsTheCursor) {
  ASSERT_TRUE(meta_->UpdateCursor(client_, Pos("mysql-bin.000004", 4)).ok());
  Add(client_, 100);
  ASSERT_TRUE(meta_->Subscribe(Client(1001, "example", "canal\\..*")).ok());
  std::vector<ClientIdentity> clients;
  ASSERT_TRUE(meta_->ListClients("example", &clients).ok());
  ASSERT_EQ(clients.size(), 1u);
  EXPECT_EQ(clients[0].filter, "canal\\..*");
  std::optional<LogPosition> cursor;
  ASSERT_TRUE(meta_->GetCursor(client_, &cursor).ok());
  EXPECT_TRUE(cursor.has_value());
  PositionRange r;
  EXPECT_TRUE(meta_->GetBatch(client_, 1, &r).ok());
}

TEST_P(MetaManagerRulesTest, ListClientsKeepsSubscriptionOrderPerDestination) {
  ASSERT_TRUE(meta_->Subscribe(Client(3)).ok());
  ASSERT_TRUE(meta_->Subscribe(Client(2)).ok());
  ASSERT_TRUE(meta_->Subscribe(Client(9, "other")).ok());
  std::vector<ClientIdentity> clients;
  ASSERT_TRUE(meta_->ListClients("example", &clients).ok());
  ASSERT_EQ(clients.size(), 3u);
  EXPECT_EQ(clients[0].client_id, 1001);
  EXPECT_EQ(clients[1].client_id, 3);
  EXPECT_EQ(clients[2].client_id, 2);
  ASSERT_TRUE(meta_->ListClients("other", &clients).ok());
  ASSERT_EQ(clients.size(), 1u);
  ASSERT_TRUE(meta_->ListClients("nobody", &clients).ok());
  EXPECT_TRUE(clients.empty());
}

TEST_P(MetaManagerRulesTest, RequestsOfAnUnsubscribedClientAreNotFound) {
  ClientIdentity stranger = Client(42);
  int64_t id;
  PositionRange r;
  std::optional<Batch> b;
  std::vector<Batch> all;
  std::optional<LogPosition> cursor;
  std::vector<std::pair<std::string, Status>> results = {
      {"AddBatch", meta_->AddBatch(stranger, Range(1, 2), &id)},
      {"AddBatchWithId", meta_->AddBatchWithId(stranger, Range(1, 2), 5)},
      {"GetBatch", meta_->GetBatch(stranger, 1, &r)},
      {"RemoveBatch", meta_->RemoveBatch(stranger, 1, &r)},
      {"GetFirstBatch", meta_->GetFirstBatch(stranger, &b)},
      {"GetLastestBatch", meta_->GetLastestBatch(stranger, &b)},
      {"ListBatches", meta_->ListBatches(stranger, &all)},
      {"ClearAllBatches", meta_->ClearAllBatches(stranger)},
      {"GetCursor", meta_->GetCursor(stranger, &cursor)},
      {"UpdateCursor", meta_->UpdateCursor(stranger, Pos("mysql-bin.000001", 4))},
  };
  for (const auto& [request, s] : results) {
    EXPECT_TRUE(s.IsNotFound()) << request << ": " << s.ToString();
    EXPECT_NE(s.message().find(request + " for client 42 of destination example"), std::string::npos)
        << s.ToString();
  }
}

TEST_P(MetaManagerRulesTest, DestinationNamesThatAreNotPlainNamesAreRefused) {
  for (const std::string& bad : {std::string(""), std::string("."), std::string(".."), std::string("a/b"),
                                std::string("../etc"), std::string("a\0b", 3)}) {
    Status s = meta_->Subscribe(Client(1, bad));
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
    std::vector<ClientIdentity> clients;
    EXPECT_EQ(meta_->ListClients(bad, &clients).code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(meta_->Flush(bad).code(), Status::Code::kInvalidArgument);
  }
}

TEST_P(MetaManagerRulesTest, CallsAfterStopAreAborted) {
  ASSERT_TRUE(meta_->Stop().ok());
  EXPECT_EQ(meta_->Subscribe(client_).code(), Status::Code::kAborted);
  EXPECT_EQ(meta_->UpdateCursor(client_, Pos("mysql-bin.000001", 4)).code(), Status::Code::kAborted);
  EXPECT_EQ(meta_->Flush("example").code(), Status::Code::kAborted);
  EXPECT_TRUE(meta_->Stop().ok());  // idempotent
  ASSERT_TRUE(meta_->Start().ok());  // and TearDown stops it again
}

TEST_P(MetaManagerRulesTest, CallsBeforeStartAreAborted) {
  std::unique_ptr<MetaManager> fresh = GetParam().make(dir_.path() + "/fresh");
  bool subscribed;
  EXPECT_EQ(fresh->HasSubscribe(client_, &subscribed).code(), Status::Code::kAborted);
}

INSTANTIATE_TEST_SUITE_P(AllBackEnds, MetaManagerRulesTest, testing::LocalBackEnds(), testing::BackEndName);

}  // namespace
}  // namespace canal::meta
