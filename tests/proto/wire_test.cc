// The wire messages: field numbers and presence as Canal's clients expect them,
// checked on bytes built by hand from the protocol's field table, and the
// password scramble's test vector.
#include <string>

#include <gtest/gtest.h>

#include "canal/entry.pb.h"
#include "canal/packet.pb.h"
#include "canal/proto/password_scramble.h"

namespace canal::proto {
namespace {

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}

TEST(Wire, HandshakePacketEncodesVersionTypeAndBodyAsCanalDoes) {
  protocol::Handshake hs;
  hs.set_seeds(Bytes({1, 2, 3, 4, 5, 6, 7, 8}));
  protocol::Packet p;
  p.set_version(1);
  p.set_type(protocol::HANDSHAKE);
  p.set_body(hs.SerializeAsString());
  // version (field 2, varint 1), type (field 3, varint 1), body (field 5, 10 bytes:
  // seeds = field 2, 8 bytes).
  EXPECT_EQ(p.SerializeAsString(), Bytes({0x10, 0x01, 0x18, 0x01, 0x2a, 0x0a, 0x12, 0x08, 1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(Wire, OptionalFieldsKeepPresenceEvenAtTheirZeroValue) {
  protocol::Ack ok;
  ok.set_error_code(0);  // present although zero
  EXPECT_EQ(ok.SerializeAsString(), Bytes({0x08, 0x00}));
  protocol::Ack absent;
  EXPECT_EQ(absent.SerializeAsString(), "");
  protocol::Ack parsed;
  ASSERT_TRUE(parsed.ParseFromString(Bytes({0x08, 0x00})));
  EXPECT_EQ(parsed.error_code_present_case(), protocol::Ack::kErrorCode);
}

TEST(Wire, EmptyBatchIsBatchIdMinusOneWithNoMessages) {
  protocol::Messages m;
  m.set_batch_id(-1);
  EXPECT_EQ(m.SerializeAsString(),
            Bytes({0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
}

TEST(Wire, GetParsesEveryFieldOfAJavaClientRequest) {
  // destination "example", client_id "1001", fetch_size 100, timeout 1000, unit 2 (ms), auto_ack false.
  const std::string body = Bytes({0x0a, 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0x12, 4, '1', '0', '0', '1', 0x18, 100,
                                  0x20, 0xe8, 0x07, 0x28, 0x02, 0x30, 0x00});
  protocol::Get g;
  ASSERT_TRUE(g.ParseFromString(body));
  EXPECT_EQ(g.destination(), "example");
  EXPECT_EQ(g.client_id(), "1001");
  EXPECT_EQ(g.fetch_size(), 100);
  EXPECT_EQ(g.timeout(), 1000);
  EXPECT_EQ(g.unit(), 2);
  EXPECT_EQ(g.auto_ack_present_case(), protocol::Get::kAutoAck);
  EXPECT_FALSE(g.auto_ack());
  EXPECT_EQ(g.SerializeAsString(), body);  // re-encodes byte for byte
  protocol::Get defaults;
  ASSERT_TRUE(defaults.ParseFromString(Bytes({0x0a, 1, 'x'})));
  EXPECT_EQ(defaults.timeout_present_case(), protocol::Get::TIMEOUT_PRESENT_NOT_SET);  // means -1
}

TEST(Wire, EntryFieldNumbersMatchTheProtocolTable) {
  entry::Column c;
  c.set_index(1);
  c.set_sqltype(4);
  c.set_name("id");
  c.set_iskey(true);
  c.set_isnull(false);
  c.set_value("7");
  c.set_mysqltype("int(11)");
  EXPECT_EQ(c.SerializeAsString(), Bytes({0x08, 1, 0x10, 4, 0x1a, 2, 'i', 'd', 0x20, 1, 0x30, 0, 0x42, 1, '7', 0x52, 7,
                                          'i', 'n', 't', '(', '1', '1', ')'}));
  entry::RowChange rc;
  rc.set_eventtype(entry::INSERT);
  rc.set_isddl(false);
  rc.set_sql("x");
  EXPECT_EQ(rc.SerializeAsString(), Bytes({0x10, 1, 0x50, 0, 0x5a, 1, 'x'}));
  entry::Entry e;
  e.mutable_header()->set_logfilename("b");
  e.set_entrytype(entry::TRANSACTIONEND);
  EXPECT_EQ(e.SerializeAsString(), Bytes({0x0a, 3, 0x12, 1, 'b', 0x10, 3}));
}

TEST(PasswordScramble, MatchesTheProtocolTestVector) {
  const std::string seed = Bytes({1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(ScramblePassword(seed, "canal"), "7de44690d8e53782cb61804a2455c284a3bbfb06");
  EXPECT_EQ(StoredPasswordForm("canal"), "e3619321c1a937c46a0d8bd1dac39f93b27d4458");
  EXPECT_TRUE(VerifyScrambledPassword(seed, "7de44690d8e53782cb61804a2455c284a3bbfb06",
                                      "e3619321c1a937c46a0d8bd1dac39f93b27d4458"));
}

TEST(PasswordScramble, RejectsWrongPasswordsOtherSeedsAndMalformedHex) {
  const std::string seed = Bytes({1, 2, 3, 4, 5, 6, 7, 8});
  const std::string stored = StoredPasswordForm("canal");
  EXPECT_FALSE(VerifyScrambledPassword(seed, ScramblePassword(seed, "Canal"), stored));
  EXPECT_FALSE(VerifyScrambledPassword(Bytes({8, 7, 6, 5, 4, 3, 2, 1}), ScramblePassword(seed, "canal"), stored));
  EXPECT_FALSE(VerifyScrambledPassword(seed, "zz", stored));
  EXPECT_FALSE(VerifyScrambledPassword(seed, std::string(40, 'g'), stored));
  EXPECT_FALSE(VerifyScrambledPassword(seed, ScramblePassword(seed, "canal"), "not hex"));
}

}  // namespace
}  // namespace canal::proto
