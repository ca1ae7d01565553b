// Message::FromMessagesBody: the MESSAGES body read in place (entries are
// views into it), checked against protobuf's own encoding, and malformed
// bodies refused with a message saying where.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "canal/client/message.h"
#include "canal/packet.pb.h"

namespace canal::client {
namespace {

std::string Body(int64_t batch_id, const std::vector<std::string>& entries, const std::string& warning = "") {
  canal::protocol::Messages m;
  m.set_batch_id(batch_id);
  for (const std::string& e : entries) m.add_messages(e);
  if (!warning.empty()) m.set_server_warning(warning);
  return m.SerializeAsString();
}

TEST(MessageBodyTest, EntriesAreViewsIntoTheBodyInServerOrder) {
  const std::vector<std::string> entries = {"first", std::string(3000, 'x'), "", "last"};
  Message m;
  ASSERT_TRUE(Message::FromMessagesBody(Body(42, entries), &m).ok());
  EXPECT_EQ(m.batch_id(), 42);
  ASSERT_EQ(m.raw_entry_count(), 4u);
  for (size_t i = 0; i < entries.size(); ++i) EXPECT_EQ(m.raw_entry(i), entries[i]) << i;
  EXPECT_EQ(m.raw_entries(), (std::vector<std::string_view>{"first", entries[1], "", "last"}));
  // Views into one buffer: consecutive entries sit a tag and a length apart.
  EXPECT_LT(m.raw_entry(0).data(), m.raw_entry(1).data());
  EXPECT_LT(m.raw_entry(1).data() - m.raw_entry(0).data(), 16);
}

TEST(MessageBodyTest, CopiesAndMovesKeepTheEntries) {
  Message m;
  ASSERT_TRUE(Message::FromMessagesBody(Body(7, {"ab", "cd"}), &m).ok());  // short: the body fits in SSO
  Message copy = m;
  Message moved = std::move(m);
  EXPECT_EQ(copy.raw_entry(1), "cd");
  EXPECT_EQ(moved.raw_entry(0), "ab");
  EXPECT_EQ(moved.TakeRawEntries(), (std::vector<std::string>{"ab", "cd"}));
  EXPECT_TRUE(moved.empty());
  EXPECT_EQ(moved.batch_id(), 7);
}

TEST(MessageBodyTest, EmptyBatchIsIdMinusOneWithTheServerWarning) {
  Message m;
  ASSERT_TRUE(Message::FromMessagesBody(Body(9, {}, "not streaming: replica lost"), &m).ok());
  EXPECT_EQ(m.batch_id(), -1);
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.server_warning(), "not streaming: replica lost");
  ASSERT_TRUE(Message::FromMessagesBody("", &m).ok());
  EXPECT_EQ(m.batch_id(), -1);
}

TEST(MessageBodyTest, NegativeBatchIdAndUnknownFieldsReadAsProtobufDoes) {
  std::string body = Body(-5, {"e"});
  body += std::string("\x18\x07", 2);         // field 3, varint: unknown, skipped
  body += std::string("\x10\x01", 2);         // field 2 as a varint: not an entry, skipped
  body += std::string("\x2a\x02zz", 4);       // field 5, bytes: skipped
  Message m;
  ASSERT_TRUE(Message::FromMessagesBody(body, &m).ok());
  EXPECT_EQ(m.batch_id(), -5);
  ASSERT_EQ(m.raw_entry_count(), 1u);
  EXPECT_EQ(m.raw_entry(0), "e");
  canal::protocol::Messages pb;
  ASSERT_TRUE(pb.ParseFromString(body));
  EXPECT_EQ(pb.messages_size(), 1);
}

TEST(MessageBodyTest, FieldsInAnotherOrderAndRepeatedIdsReadAsProtobufDoes) {
  // The reader takes the id and the entries in the order servers write them
  // first, then reads the rest generically: entries before the id, the
  // warning between entries and a second id (the last one wins) all count.
  std::string body;
  body += std::string("\x12\x01" "a", 3);           // entry "a" before any id
  body += std::string("\xa2\x06\x02" "w1", 5);     // server_warning (field 100)
  body += std::string("\x08\x05", 2);               // batch id 5
  body += std::string("\x12\x02" "bc", 4);          // entry "bc"
  body += std::string("\x08\x09", 2);               // batch id 9: the last wins
  body += std::string("\x12\x00", 2);               // an empty entry
  Message m;
  ASSERT_TRUE(Message::FromMessagesBody(body, &m).ok());
  canal::protocol::Messages pb;
  ASSERT_TRUE(pb.ParseFromString(body));
  EXPECT_EQ(m.batch_id(), pb.batch_id());
  EXPECT_EQ(m.batch_id(), 9);
  EXPECT_EQ(m.server_warning(), pb.server_warning());
  ASSERT_EQ(m.raw_entry_count(), static_cast<size_t>(pb.messages_size()));
  for (int i = 0; i < pb.messages_size(); ++i) EXPECT_EQ(m.raw_entry(i), pb.messages(i)) << i;
}

TEST(MessageBodyTest, ABodyInsideALargerBufferIsReadInPlaceAndARangeOutsideItRefused) {
  // As the connector hands over a frame: bytes before the body (length prefix,
  // packet fields) and spare bytes after it (a buffer kept from a larger batch).
  const std::string body = Body(8, {"one", "two"});
  const std::string buffer = std::string("\x00\x00\x00\x10\x18\x07", 6) + body + std::string(50, '\x12');
  Message m;
  ASSERT_TRUE(Message::FromMessagesBody(buffer, 6, body.size(), &m).ok());
  EXPECT_EQ(m.batch_id(), 8);
  EXPECT_EQ(m.raw_entries(), (std::vector<std::string_view>{"one", "two"}));
  const Message copy = m;
  EXPECT_EQ(copy.raw_entry(1), "two");
  Status st = Message::FromMessagesBody(buffer, buffer.size() + 1, 0, &m);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << st.ToString();
  EXPECT_EQ(m.batch_id(), -1);
  EXPECT_TRUE(m.empty());
  st = Message::FromMessagesBody(buffer, 6, buffer.size(), &m);
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("outside its buffer"), std::string_view::npos) << st.ToString();
  st = Message::FromMessagesBody(buffer, 6, ~size_t{0}, &m);  // must not wrap around
  EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << st.ToString();
  // The spare bytes after the body are not read as entries.
  ASSERT_TRUE(Message::FromMessagesBody(buffer, 6, body.size() - 3, &m).IsCorruption());
}

TEST(MessageBodyTest, EntryLongerThanTheBodyIsCorruption) {
  std::string body = Body(3, {"abcdef"});
  body.resize(body.size() - 2);
  Message m;
  const Status s = Message::FromMessagesBody(body, &m);
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("Messages body"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("longer than the bytes left"), std::string::npos) << s.ToString();
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.batch_id(), -1);
}

TEST(MessageBodyTest, TruncatedVarintsInvalidWireTypesAndGroupsAreCorruption) {
  const std::vector<std::string> bad = {
      std::string("\x08", 1),                                  // batch id's varint missing
      std::string("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12),  // varint beyond 10 bytes
      std::string("\x12", 1),                                  // entry without its length
      std::string("\x12\x80", 2),                              // the length's varint cut short
      std::string("\x0f\x00", 2),                              // wire type 7
      std::string("\x0b\x0c", 2),                              // a group
      std::string("\x00\x00", 2),                              // field number 0
      std::string("\x09\x01\x02", 3),                          // fixed64 cut short
  };
  for (const std::string& body : bad) {
    Message m;
    const Status s = Message::FromMessagesBody(body, &m);
    EXPECT_TRUE(s.IsCorruption()) << testing::PrintToString(body) << " " << s.ToString();
    EXPECT_TRUE(m.empty());
  }
}

TEST(MessageBodyTest, ViewAndParseEntriesReadTheInPlaceBytes) {
  canal::entry::Entry e;
  e.mutable_header()->set_logfilename("mysql-bin.000001");
  e.mutable_header()->set_logfileoffset(120);
  e.set_entrytype(canal::entry::TRANSACTIONBEGIN);
  Message m;
  ASSERT_TRUE(Message::FromMessagesBody(Body(1, {e.SerializeAsString(), "\xff"}), &m).ok());
  EntryView v;
  ASSERT_TRUE(m.View(0, &v).ok());
  EXPECT_TRUE(m.View(1, &v).IsCorruption());
  EXPECT_TRUE(m.ParseEntries().IsCorruption());
  ASSERT_EQ(m.entries().size(), 1u);
  EXPECT_EQ(m.entries()[0].header().logfileoffset(), 120);
}

}  // namespace
}  // namespace canal::client
