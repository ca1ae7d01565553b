// In-flight batches have one record, the meta manager's (
// "Ownership"): a GET records there everything its ack needs (positions, the
// cursor's ack position, the ring's ack point, the rows), the session keeps
// no copy, and acks, rollbacks and errors are derived from that record and
// from the ring of the run the client subscribed to. Real sockets, in-memory
// destinations, port 0.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "session_fixture.h"

namespace canal::server {
namespace {

using namespace std::chrono_literals;

constexpr char kDest[] = "example";
constexpr char kClient[] = "1001";

class SessionBatchesTest : public testing::SessionFixture {
 protected:
  void SetUp() override {
    dest_ = std::make_shared<MemoryDestination>(kDest);
    registry_.Add(dest_);
    SessionServerOptions o = LoopbackOptions();
    o.user = "canal";
    o.password_stored = proto::StoredPasswordForm("canal");
    o.max_frame_bytes = 1 << 20;
    StartSessionServer(o);
  }

  // A logged-in client subscribed as kClient, retrying while the last
  // holder's session ends.
  std::unique_ptr<TestClient> Subscribed() { return SubscribedWhenReleased(kDest, kClient); }

  meta::ClientIdentity Identity() const { return IdentityOf(kDest, 1001); }

  std::vector<meta::Batch> MetaBatches() {
    std::vector<meta::Batch> batches;
    EXPECT_TRUE(dest_->meta()->ListBatches(Identity(), &batches).ok());
    return batches;
  }

  std::optional<LogPosition> Cursor() {
    std::optional<LogPosition> cursor;
    EXPECT_TRUE(dest_->meta()->GetCursor(Identity(), &cursor).ok());
    return cursor;
  }

  // An entry at `offset` holding `rows` table rows.
  Status PutRows(uint64_t offset, uint64_t rows, bool safe) {
    store::EntryMeta m;
    m.kind = safe ? store::EntryKind::kTransactionEnd : store::EntryKind::kOther;
    m.safe_resume_point = safe;
    m.position = MemoryDestination::Position(offset);
    m.rows = rows;
    return dest_->store()->Put(MemoryDestination::EntryBytes(offset), m);
  }

  std::string Here(const TestClient& c) const {
    sockaddr_in addr{};
    socklen_t len = sizeof addr;
    ::getpeername(c.fd(), reinterpret_cast<sockaddr*>(&addr), &len);
    return "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  }

  std::shared_ptr<MemoryDestination> dest_;
};

TEST_F(SessionBatchesTest, AGetRecordsEverythingItsAckNeedsInTheMetaAndTheAckAppliesThatRecord) {
  auto c = Subscribed();
  ASSERT_TRUE(c);
  ASSERT_TRUE(PutRows(10, 2, /*safe=*/false).ok());
  ASSERT_TRUE(PutRows(11, 3, /*safe=*/true).ok());  // a transaction ends here
  ASSERT_TRUE(PutRows(12, 4, /*safe=*/false).ok());
  ASSERT_TRUE(PutRows(13, 1, /*safe=*/true).ok());
  ASSERT_EQ(c->Get(kDest, kClient, 3).messages.batch_id(), 1);

  std::vector<meta::Batch> batches = MetaBatches();
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0].id, 1);
  EXPECT_EQ(batches[0].range.start, MemoryDestination::Position(10));
  EXPECT_EQ(batches[0].range.end, MemoryDestination::Position(12));
  EXPECT_EQ(batches[0].range.ack, MemoryDestination::Position(11));
  EXPECT_EQ(batches[0].range.store_ack, 3u);  // one past the batch's last ring entry
  EXPECT_EQ(batches[0].range.rows, 9u);
  EXPECT_EQ(dest_->store()->stats().ack_sequence, 0u);

  c->Ack(kDest, kClient, 1);
  TestClient::GetReply r = c->Get(kDest, kClient, 3);  // answered after the ack
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.batch_id(), 2);
  EXPECT_EQ(dest_->store()->stats().ack_sequence, 3u);
  EXPECT_EQ(Cursor(), MemoryDestination::Position(11));
  batches = MetaBatches();
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_EQ(batches[0].id, 2);
  EXPECT_EQ(batches[0].range.store_ack, 4u);
  EXPECT_EQ(batches[0].range.ack, MemoryDestination::Position(13));
}

TEST_F(SessionBatchesTest, AnOutOfOrderAckFreesNothingAndMovesNoCursor) {
  auto c = Subscribed();
  ASSERT_TRUE(c);
  ASSERT_TRUE(dest_->PutRange(0, 6).ok());
  for (int64_t id = 1; id <= 3; ++id) ASSERT_EQ(c->Get(kDest, kClient, 2).messages.batch_id(), id);
  c->Ack(kDest, kClient, 1);
  c->Ack(kDest, kClient, 3);
  TestClient::GetReply r = c->Get(kDest, kClient, 2);
  ASSERT_TRUE(r.received);
  EXPECT_FALSE(r.is_messages);
  EXPECT_EQ(r.ack.error_code(), 400);
  EXPECT_NE(r.ack.error_message().find("batchId:3 is not the firstly:2"), std::string::npos)
      << r.ack.error_message();
  EXPECT_TRUE(c->WaitClosed(5s));
  // Batch 1 stays acked; 2 and 3 were neither freed nor acked, and go back.
  EXPECT_EQ(dest_->store()->stats().ack_sequence, 2u);
  EXPECT_EQ(Cursor(), MemoryDestination::Position(1));
  EXPECT_TRUE(WaitUntil([&] { return dest_->store()->stats().get_sequence == 2; }));
  EXPECT_TRUE(MetaBatches().empty());
}

TEST_F(SessionBatchesTest, RollbackChecksTheMetaRecordsAndAnAckedIdIsUnknown) {
  auto c = Subscribed();
  ASSERT_TRUE(c);
  ASSERT_TRUE(dest_->PutRange(0, 6).ok());
  for (int64_t id = 1; id <= 3; ++id) ASSERT_EQ(c->Get(kDest, kClient, 2).messages.batch_id(), id);
  c->Ack(kDest, kClient, 1);
  c->Rollback(kDest, kClient, 2);  // the oldest outstanding: 2 and 3 go back
  TestClient::GetReply r = c->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.batch_id(), 4);
  EXPECT_EQ(r.messages.messages_size(), 4);
  ASSERT_EQ(MetaBatches().size(), 1u);

  c->Rollback(kDest, kClient, 1);  // acked already: not outstanding any more
  r = c->Get(kDest, kClient, 2);
  ASSERT_TRUE(r.received);
  EXPECT_EQ(r.ack.error_code(), 400);
  EXPECT_NE(r.ack.error_message().find("rollback error, clientId:1001 batchId:1 is not exist"), std::string::npos)
      << r.ack.error_message();
}

// Batch ids are the meta's and never come back: an id another session was
// given cannot ack what the next session holds.
TEST_F(SessionBatchesTest, ATakeoverByAnotherSessionStartsFromTheAckedPositionAndOldIdsAreUnknown) {
  auto a = Subscribed();
  ASSERT_TRUE(a);
  ASSERT_TRUE(dest_->PutRange(0, 5).ok());
  ASSERT_EQ(a->Get(kDest, kClient, 2).messages.batch_id(), 1);
  ASSERT_EQ(a->Get(kDest, kClient, 2).messages.batch_id(), 2);
  a->Ack(kDest, kClient, 1);
  a->Abort();  // batch 2 outstanding

  auto b = Subscribed();
  ASSERT_TRUE(b);
  EXPECT_TRUE(MetaBatches().empty());  // the subscription cleared the old session's record
  TestClient::GetReply r = b->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.batch_id(), 3);
  EXPECT_EQ(r.messages.messages_size(), 3);  // offsets 2..4: batch 2 again
  b->Ack(kDest, kClient, 2);                 // the old session's id
  r = b->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.received);
  EXPECT_EQ(r.ack.error_code(), 400);
  EXPECT_NE(r.ack.error_message().find("ack error , clientId:1001 batchId:2 is not exist"), std::string::npos)
      << r.ack.error_message();
  EXPECT_TRUE(b->WaitClosed(5s));
  EXPECT_EQ(dest_->store()->stats().ack_sequence, 2u);  // nothing of batch 3 was freed
  EXPECT_EQ(Cursor(), MemoryDestination::Position(1));

  auto c = Subscribed();
  ASSERT_TRUE(c);
  r = c->Get(kDest, kClient, 10);
  ASSERT_TRUE(r.is_messages);
  EXPECT_EQ(r.messages.batch_id(), 4);
  c->Ack(kDest, kClient, 4);
  ASSERT_TRUE(c->Get(kDest, kClient, 10).is_messages);
  EXPECT_EQ(dest_->store()->stats().ack_sequence, 5u);
  EXPECT_EQ(Cursor(), MemoryDestination::Position(4));
}

// A new run of the destination (restart, HA flip back) brings a new ring and
// clears the meta's batches: a session of the old run must not apply an ack
// to either, and still knows it held batches.
TEST_F(SessionBatchesTest, AnAckAfterANewRunClearedTheBatchesIs409NotAnUnknownId) {
  auto c = Subscribed();
  ASSERT_TRUE(c);
  ASSERT_TRUE(dest_->PutRange(0, 2).ok());
  ASSERT_EQ(c->Get(kDest, kClient, 2).messages.batch_id(), 1);
  ASSERT_TRUE(dest_->NewRun().ok());
  ASSERT_TRUE(dest_->PutRange(0, 2).ok());
  c->Ack(kDest, kClient, 1);
  TestClient::GetReply r = c->Get(kDest, kClient, 2);
  ASSERT_TRUE(r.received);
  EXPECT_FALSE(r.is_messages);
  EXPECT_EQ(r.ack.error_code(), 409) << r.ack.error_message();
  EXPECT_NE(r.ack.error_message().find("was restarted"), std::string::npos) << r.ack.error_message();
  EXPECT_TRUE(c->WaitClosed(5s));
  EXPECT_EQ(dest_->store()->stats().ack_sequence, 0u);  // the new ring is untouched
  EXPECT_FALSE(Cursor());
}

TEST_F(SessionBatchesTest, EvictedAfterANewRunClearedTheBatchesTheClientStillHears409) {
  auto c = Subscribed();
  ASSERT_TRUE(c);
  ASSERT_TRUE(dest_->PutRange(0, 2).ok());
  ASSERT_EQ(c->Get(kDest, kClient, 2).messages.batch_id(), 1);
  ASSERT_TRUE(dest_->NewRun().ok());
  server_->CloseDestination(kDest, "fenced (test)");
  std::optional<protocol::Ack> ack = c->ReadAck();
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 409);
  EXPECT_EQ(ack->error_message(), "destination example is not active on canal server " + Here(*c) +
                                      " any more (fenced (test)); the batches handed out were not acked "
                                      "here and will be delivered again: reconnect to the active server");
  EXPECT_TRUE(c->WaitClosed(5s));
}

TEST_F(SessionBatchesTest, EvictedWithNothingOutstandingIs503) {
  auto c = Subscribed();
  ASSERT_TRUE(c);
  ASSERT_TRUE(dest_->PutRange(0, 2).ok());
  ASSERT_EQ(c->Get(kDest, kClient, 2).messages.batch_id(), 1);
  c->Ack(kDest, kClient, 1);
  ASSERT_TRUE(c->Get(kDest, kClient, 2).is_messages);  // empty: the ack is applied
  server_->CloseDestination(kDest, "fenced (test)");
  std::optional<protocol::Ack> ack = c->ReadAck();
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->error_code(), 503) << ack->error_message();
  EXPECT_TRUE(c->WaitClosed(5s));
}

}  // namespace
}  // namespace canal::server
