#include "canal/server/frame_codec.h"

#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

#include "canal/proto/field_numbers.h"
#include "canal/proto/wire.h"
#include "canal/store/ring_store.h"

namespace canal::server {

namespace {

using proto::wire::Int64Bits;
using proto::wire::kLengthDelimited;
using proto::wire::kVarint;
using proto::wire::Tag;
using proto::wire::VarintSize;
using proto::wire::WriteDelimited;
using proto::wire::WriteVarint;

// The fields of Packet and Messages (canal/proto/field_numbers.h) written by hand.
namespace fields = proto::fields;
constexpr char kPacketVersionTag = Tag(fields::packet::kVersion, kVarint);
constexpr char kPacketTypeTag = Tag(fields::packet::kType, kVarint);
constexpr char kPacketBodyTag = Tag(fields::packet::kBody, kLengthDelimited);
constexpr char kBatchIdTag = Tag(fields::messages::kBatchId, kVarint);
constexpr char kMessageTag = Tag(fields::messages::kMessages, kLengthDelimited);

// A Java client reads the frame length into an int.
constexpr uint64_t kMaxOutgoingFrame = std::numeric_limits<int32_t>::max();

char* PutFrameLength(char* p, uint32_t length) {
  p[0] = static_cast<char>(length >> 24);
  p[1] = static_cast<char>(length >> 16);
  p[2] = static_cast<char>(length >> 8);
  p[3] = static_cast<char>(length);
  return p + kFrameHeaderBytes;
}

}  // namespace

uint32_t DecodeFrameLength(const uint8_t (&header)[kFrameHeaderBytes]) {
  return (uint32_t{header[0]} << 24) | (uint32_t{header[1]} << 16) | (uint32_t{header[2]} << 8) | uint32_t{header[3]};
}

Status CheckFrameLength(uint32_t length, uint32_t max_frame_bytes) {
  if (length == 0) return Status::InvalidArgument("frame length 0 (an empty packet is not valid)");
  if (length > max_frame_bytes) {
    return Status::InvalidArgument("frame length " + std::to_string(length) + " exceeds the limit of " +
                                   std::to_string(max_frame_bytes) + " bytes");
  }
  return Status::OK();
}

void EncodePacketFrame(protocol::PacketType type, const google::protobuf::MessageLite& body, std::string* out) {
  protocol::Packet packet;
  packet.set_version(kPacketVersion);
  packet.set_type(type);
  body.SerializeToString(packet.mutable_body());
  const size_t size = packet.ByteSizeLong();
  out->resize(kFrameHeaderBytes + size);
  PutFrameLength(out->data(), static_cast<uint32_t>(size));
  packet.SerializeToArray(out->data() + kFrameHeaderBytes, static_cast<int>(size));
}

void EncodeOkAckFrame(std::string* out) { EncodePacketFrame(protocol::ACK, protocol::Ack(), out); }

void EncodeErrorAckFrame(int32_t error_code, std::string_view message, std::string* out) {
  protocol::Ack ack;
  ack.set_error_code(error_code);
  ack.set_error_message(std::string(message));
  EncodePacketFrame(protocol::ACK, ack, out);
}

namespace {

// Sizes a MESSAGES frame; InvalidArgument when a Java client could not read it.
Status SizeMessagesFrame(int64_t batch_id, const store::Batch& batch, uint64_t* body, uint64_t* packet) {
  // Sized first, then written once: entries can add up to megabytes.
  *body = 1 + VarintSize(Int64Bits(batch_id));
  for (const store::EntryView& e : batch.entries) *body += proto::wire::DelimitedSize(e.bytes.size());
  // Canal's server writes a batch with entries by hand, without `version`;
  // its empty batch goes through the Packet builder and carries version 1
  // (shared/protocol/CAPTURED_FRAMES.md). Byte for byte the same here.
  *packet = (batch.entries.empty() ? 2 : 0) + 2 /*type*/ + 1 + VarintSize(*body) + *body;
  if (*packet > kMaxOutgoingFrame) {
    return Status::InvalidArgument("MESSAGES packet of batch " + std::to_string(batch_id) + " would be " +
                                   std::to_string(*packet) + " bytes, more than a client can read (2^31 - 1); " +
                                   "fetch fewer entries per get");
  }
  return Status::OK();
}

// The frame up to its first entry: length, Packet's fields, Messages.batchId.
char* WriteMessagesPrefix(int64_t batch_id, const store::Batch& batch, uint64_t body, uint64_t packet, char* p) {
  p = PutFrameLength(p, static_cast<uint32_t>(packet));
  if (batch.entries.empty()) {
    *p++ = kPacketVersionTag;
    *p++ = static_cast<char>(kPacketVersion);
  }
  *p++ = kPacketTypeTag;
  *p++ = static_cast<char>(protocol::MESSAGES);
  *p++ = kPacketBodyTag;
  p = WriteVarint(body, p);
  *p++ = kBatchIdTag;
  return WriteVarint(Int64Bits(batch_id), p);
}

// An empty entry is never referenced: an empty iovec is a wasted one.
bool Gathered(std::string_view entry, size_t min_gather_bytes) {
  return !entry.empty() && entry.size() >= min_gather_bytes;
}

}  // namespace

Status EncodeMessagesFrame(int64_t batch_id, const store::Batch& batch, std::string* out) {
  uint64_t body = 0;
  uint64_t packet = 0;
  CANAL_RETURN_IF_ERROR(SizeMessagesFrame(batch_id, batch, &body, &packet));
  out->resize(kFrameHeaderBytes + packet);
  char* p = WriteMessagesPrefix(batch_id, batch, body, packet, out->data());
  for (const store::EntryView& e : batch.entries) p = WriteDelimited(kMessageTag, e.bytes, p);
  return Status::OK();
}

Status EncodeMessagesFrameGathered(int64_t batch_id, const store::Batch& batch, size_t min_gather_bytes,
                                   std::string* head, std::vector<std::string_view>* pieces) {
  pieces->clear();
  uint64_t body = 0;
  uint64_t packet = 0;
  CANAL_RETURN_IF_ERROR(SizeMessagesFrame(batch_id, batch, &body, &packet));
  // Everything but the gathered entries' bytes lands in *head, sized exactly
  // first: the pieces point into it, so it must not move once written.
  uint64_t gathered = 0;
  for (const store::EntryView& e : batch.entries) {
    if (Gathered(e.bytes, min_gather_bytes)) gathered += e.bytes.size();
  }
  head->resize(kFrameHeaderBytes + packet - gathered);
  char* p = WriteMessagesPrefix(batch_id, batch, body, packet, head->data());
  const char* run = head->data();  // start of the head bytes not yet listed
  for (const store::EntryView& e : batch.entries) {
    if (!Gathered(e.bytes, min_gather_bytes)) {
      p = WriteDelimited(kMessageTag, e.bytes, p);
      continue;
    }
    *p++ = kMessageTag;
    p = WriteVarint(e.bytes.size(), p);
    pieces->emplace_back(run, static_cast<size_t>(p - run));
    pieces->push_back(e.bytes);
    run = p;
  }
  if (p != run) pieces->emplace_back(run, static_cast<size_t>(p - run));
  return Status::OK();
}

}  // namespace canal::server
