// Frames of Canal's client protocol: a 4-byte big-endian length, then that
// many bytes holding one serialised canal.protocol.Packet.
//
// The encoders build whole frames (header included) into a caller-owned
// string, so a session can reuse one buffer for every reply. Pure functions;
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"
#include "canal/packet.pb.h"
#include "canal/proto/field_numbers.h"

namespace canal::store {
struct Batch;
}

namespace canal::server {

inline constexpr size_t kFrameHeaderBytes = 4;
// The version every packet we send carries; Canal's Java client refuses a
// handshake with any other.
inline constexpr int32_t kPacketVersion = proto::values::kPacketVersion;

// The length a frame header announces.
uint32_t DecodeFrameLength(const uint8_t (&header)[kFrameHeaderBytes]);

// OK when a frame of `length` bytes may be read; InvalidArgument (saying
// why) for zero or for more than `max_frame_bytes`. Checked before anything
// is allocated for the body.
Status CheckFrameLength(uint32_t length, uint32_t max_frame_bytes);

// Packet{version=1, type, body=serialised `body`} as a frame (HANDSHAKE, ACK).
void EncodePacketFrame(protocol::PacketType type, const google::protobuf::MessageLite& body, std::string* out);

// ACK with an empty Ack body (success).
void EncodeOkAckFrame(std::string* out);
// ACK carrying Ack{error_code, error_message}.
void EncodeErrorAckFrame(int32_t error_code, std::string_view message, std::string* out);

// MESSAGES with Messages{batch_id, messages = the batch's entry bytes}, written
// straight from the ring's views (one copy). An empty batch gives no messages.
// As Canal's server: a batch with entries leaves Packet.version unset, an
// empty one carries version 1.
// InvalidArgument when the frame would exceed what a Java client can read
// (2^31 - 1 bytes).
Status EncodeMessagesFrame(int64_t batch_id, const store::Batch& batch, std::string* out);

// The same frame, byte for byte, as a gather list for one vectored write, so
// that big entries go to the socket straight from the ring's slots instead of
// being copied into the reply first. `*pieces` lists the frame's bytes in
// order: runs of `*head` (the framing bytes and copies of the entries smaller
// than `min_gather_bytes`) and views of the entries of at least that size.
// The pieces are valid while *head is untouched and the batch's entries are
// neither acked nor freed: the caller must hold the batch (no ack, no ring
// dropped) until the write of every piece has completed.
Status EncodeMessagesFrameGathered(int64_t batch_id, const store::Batch& batch, size_t min_gather_bytes,
                                   std::string* head, std::vector<std::string_view>* pieces);

}  // namespace canal::server
