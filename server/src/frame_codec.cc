#include "canal/server/frame_codec.h"

#include <cstring>
#include <limits>

#include "canal/store/ring_store.h"

namespace canal::server {

namespace {

// Protobuf wire tags (field number << 3 | wire type) of the fields we write by hand.
constexpr uint8_t kPacketVersionTag = (2 << 3) | 0;  // Packet.version, varint
constexpr uint8_t kPacketTypeTag = (3 << 3) | 0;     // Packet.type, varint
constexpr uint8_t kPacketBodyTag = (5 << 3) | 2;     // Packet.body, length-delimited
constexpr uint8_t kBatchIdTag = (1 << 3) | 0;        // Messages.batch_id, varint
constexpr uint8_t kMessageTag = (2 << 3) | 2;        // Messages.messages, length-delimited

// A Java client reads the frame length into an int.
constexpr uint64_t kMaxOutgoingFrame = std::numeric_limits<int32_t>::max();

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

char* PutVarint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

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

Status EncodeMessagesFrame(int64_t batch_id, const store::Batch& batch, std::string* out) {
  // Sized first, then written once: entries can add up to megabytes.
  uint64_t body = 1 + VarintSize(static_cast<uint64_t>(batch_id));
  for (const store::EntryView& e : batch.entries) body += 1 + VarintSize(e.bytes.size()) + e.bytes.size();
  // Canal's server writes a batch with entries by hand, without `version`;
  // its empty batch goes through the Packet builder and carries version 1
  // (shared/protocol/CAPTURED_FRAMES.md). Byte for byte the same here.
  const bool with_version = batch.entries.empty();
  const uint64_t packet = (with_version ? 2 : 0) + 2 /*type*/ + 1 + VarintSize(body) + body;
  if (packet > kMaxOutgoingFrame) {
    return Status::InvalidArgument("MESSAGES packet of batch " + std::to_string(batch_id) + " would be " +
                                   std::to_string(packet) + " bytes, more than a client can read (2^31 - 1); " +
                                   "fetch fewer entries per get");
  }
  out->resize(kFrameHeaderBytes + packet);
  char* p = PutFrameLength(out->data(), static_cast<uint32_t>(packet));
  if (with_version) {
    *p++ = static_cast<char>(kPacketVersionTag);
    *p++ = static_cast<char>(kPacketVersion);
  }
  *p++ = static_cast<char>(kPacketTypeTag);
  *p++ = static_cast<char>(protocol::MESSAGES);
  *p++ = static_cast<char>(kPacketBodyTag);
  p = PutVarint(p, body);
  *p++ = static_cast<char>(kBatchIdTag);
  p = PutVarint(p, static_cast<uint64_t>(batch_id));  // two's complement, as protobuf encodes int64
  for (const store::EntryView& e : batch.entries) {
    *p++ = static_cast<char>(kMessageTag);
    p = PutVarint(p, e.bytes.size());
    if (!e.bytes.empty()) std::memcpy(p, e.bytes.data(), e.bytes.size());
    p += e.bytes.size();
  }
  return Status::OK();
}

}  // namespace canal::server
