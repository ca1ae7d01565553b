// PacketFrame: the outer canal.protocol.Packet of a frame from the server,
// read in place.
//
// Every reply is a 4-byte big-endian length and a serialised Packet (magic 1,
// version 2, type 3, compression 4, body 5). The Connector reads the Packet
// with this view instead of protobuf's Packet class, which would copy the
// body (a whole MESSAGES batch, megabytes) into a fresh string per reply:
// here the body is a view into the frame's bytes, so the batch's entries are
// read from the buffer the socket filled.
//
// Values read as protobuf's generated class reads them: absent fields are
// their defaults, a field that repeats reads as its last occurrence, unknown
// fields and known numbers with another wire type are skipped. Malformed
// bytes (a varint past the end or beyond 10 bytes, a length beyond the bytes
// left, field number 0, groups, wire types 6 and 7) are Corruption naming the
// problem and its offset, never a read outside the bytes.
#pragma once

#include <cstdint>
#include <string_view>

#include "canal/common/status.h"

namespace canal::client {

struct PacketFrame {
  int32_t type = 0;  // canal.protocol.PacketType (0: absent)
  bool has_version = false;
  int32_t version = 0;
  bool has_compression = false;
  int32_t compression = 0;  // canal.protocol.Compression
  std::string_view body;    // into the bytes parsed

  // Reads `packet_bytes` (a frame without its length prefix) into *out.
  static Status Parse(std::string_view packet_bytes, PacketFrame* out);
};

}  // namespace canal::client
