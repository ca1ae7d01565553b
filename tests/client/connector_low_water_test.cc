// The Connector asks the kernel to wake its reads only once the bytes a read
// still needs have arrived (SO_RCVLOWAT, at most 1 MiB), instead of at every
// segment. These tests are the ways that could go wrong: a frame that arrives
// in slow pieces, a short frame right after a big one (a low-water mark left
// at the big one's size would keep the short one waiting until the timeout),
// a header that trickles in byte by byte, and a server that hangs up while a
// big frame is still owed.
#include <chrono>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "canal/client/connector.h"
#include "client/client_test_util.h"

namespace canal::client::test {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// `n` entries of `value_size` bytes each, entry i filled with fill + i % 5 (ASCII).
std::vector<std::string> Batch(int n, size_t value_size, char fill) {
  std::vector<std::string> entries;
  for (int i = 0; i < n; ++i) {
    const std::string value(value_size, static_cast<char>(fill + i % 5));
    entries.push_back(RowEntry("f", 100 + i, "d", "t", ce::INSERT, {Row({}, {Col("v", value.c_str())})}));
  }
  return entries;
}

// The framed MESSAGES packet a server sends for the batch.
std::string FramedMessages(int64_t batch_id, const std::vector<std::string>& entries) {
  pb::Messages m;
  m.set_batch_id(batch_id);
  for (const auto& e : entries) m.add_messages(e);
  pb::Packet p;
  p.set_type(pb::MESSAGES);
  p.set_body(m.SerializeAsString());
  const std::string bytes = p.SerializeAsString();
  return FakeSession::LengthPrefix(static_cast<uint32_t>(bytes.size())) + bytes;
}

// Sends `bytes` in pieces of `piece` bytes with a pause after each.
bool SendInPieces(FakeSession& s, std::string_view bytes, size_t piece, milliseconds pause) {
  for (size_t at = 0; at < bytes.size(); at += piece) {
    if (!s.SendRaw(bytes.substr(at, piece))) return false;
    std::this_thread::sleep_for(pause);
  }
  return true;
}

void ExpectBatch(const Message& m, int64_t id, const std::vector<std::string>& entries) {
  EXPECT_EQ(m.batch_id(), id);
  ASSERT_EQ(m.raw_entry_count(), entries.size());
  for (size_t i = 0; i < entries.size(); ++i) EXPECT_EQ(m.raw_entry(i), entries[i]) << "batch " << id << " entry " << i;
}

TEST(ConnectorLowWater, ABigFrameInSlowPiecesThenAShortOneBothArriveWhole) {
  const auto big = Batch(150, 20'000, 'a');  // ~3 MiB: past the 1 MiB cap
  const auto small = Batch(1, 10, 'k');
  SubscribedConnector t(
      [&](FakeSession& s) {
        pb::Get get;
        if (!s.Expect(pb::GET, &get)) return;
        // 64 KiB pieces, paused: the client waits many times inside the frame.
        if (!SendInPieces(s, FramedMessages(21, big), 64 << 10, milliseconds(2))) return;
        s.AnswerGet(22, small);
      },
      [](ConnectorOptions& o) { o.read_timeout = milliseconds(3000); });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  Status st = t.client.GetWithoutAck(100, &m);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ExpectBatch(m, 21, big);
  // The short reply must not wait for a megabyte that never comes.
  const auto start = Clock::now();
  st = t.client.GetWithoutAck(100, &m);
  const auto took = Clock::now() - start;
  ASSERT_TRUE(st.ok()) << st.ToString();
  ExpectBatch(m, 22, small);
  EXPECT_LT(took, milliseconds(1500)) << "the short frame waited as if for the big one's bytes";
  t.Finish();
}

TEST(ConnectorLowWater, AFrameWhoseLengthAndBodyTrickleInByteByByteIsRead) {
  const auto small = Batch(2, 30, 'p');
  SubscribedConnector t([&](FakeSession& s) {
    pb::Get get;
    if (!s.Expect(pb::GET, &get)) return;
    SendInPieces(s, FramedMessages(5, small), 1, milliseconds(1));
  });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  Status st = t.client.GetWithoutAck(100, &m);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ExpectBatch(m, 5, small);
  t.Finish();
}

TEST(ConnectorLowWater, AServerThatHangsUpInsideABigFrameIsAnIOErrorAtOnce) {
  const std::string framed = FramedMessages(9, Batch(150, 20'000, 'u'));
  SubscribedConnector t(
      [&](FakeSession& s) {
        pb::Get get;
        if (!s.Expect(pb::GET, &get)) return;
        s.SendRaw(std::string_view(framed).substr(0, 1'500'000));
        std::this_thread::sleep_for(milliseconds(50));  // the client is waiting for the rest
        s.Close();
      },
      [](ConnectorOptions& o) { o.read_timeout = milliseconds(5000); });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  const auto start = Clock::now();
  Status st = t.client.GetWithoutAck(100, &m);
  const auto took = Clock::now() - start;
  EXPECT_EQ(st.code(), Status::Code::kIOError) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "of " + std::to_string(framed.size() - 4) + " bytes of a frame")) << st.ToString();
  EXPECT_LT(took, milliseconds(2500)) << "the hang-up was seen only at the read timeout";
  EXPECT_FALSE(t.client.connected());
  t.Finish();
}

TEST(ConnectorLowWater, AShortErrorReplyAfterABigBatchIsSeenBeforeTheNextRequest) {
  // The big batch's last wait leaves the low-water mark at its tail's size;
  // the ack's error reply, far shorter, must still be found waiting.
  const auto big = Batch(150, 20'000, 'a');
  std::promise<void> error_sent;
  SubscribedConnector t([&](FakeSession& s) {
    pb::Get get;
    if (!s.Expect(pb::GET, &get)) return;
    const std::string framed = FramedMessages(4, big);
    // All but the last 300,000 bytes, then a pause (the client waits for that tail), then the tail.
    s.SendRaw(std::string_view(framed).substr(0, framed.size() - 300'000));
    std::this_thread::sleep_for(milliseconds(30));
    s.SendRaw(std::string_view(framed).substr(framed.size() - 300'000));
    RefuseTheAckOfBatch5(s, &error_sent);
  });
  ASSERT_TRUE(t.ready.ok()) << t.ready.ToString();
  Message m;
  Status st = t.client.GetWithoutAck(100, &m);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ExpectBatch(m, 4, big);
  ASSERT_TRUE(t.client.Ack(5).ok());
  error_sent.get_future().wait();
  std::this_thread::sleep_for(milliseconds(50));  // let the loopback deliver it
  st = t.client.GetWithoutAck(10, &m);
  EXPECT_EQ(ServerErrorCode(st), 400) << st.ToString();
  EXPECT_TRUE(Contains(st.message(), "earlier ack of batch 5")) << st.ToString();
  EXPECT_TRUE(t.client.connected());
  st = t.client.GetWithoutAck(10, &m);
  EXPECT_TRUE(st.ok()) << st.ToString();
  t.Finish();
}

}  // namespace
}  // namespace canal::client::test
