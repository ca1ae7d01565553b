#include "canal/client/packet_frame.h"

#include "canal/proto/field_numbers.h"
#include "canal/proto/in_order_fields.h"
#include "canal/proto/wire.h"

namespace canal::client {

namespace wire = proto::wire;
namespace packet_field = proto::fields::packet;

namespace {

// Protobuf reads int32 and enum fields as a varint cut to 32 bits.
int32_t AsInt32(uint64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

}  // namespace

Status PacketFrame::Parse(std::string_view bytes, PacketFrame* out) {
  *out = PacketFrame();
  uint64_t v;
  // Servers write the type and the body (Canal's Java server also the
  // version and compression) in field order: take them straight away.
  proto::InOrderFields in(bytes);
  in.Varint(wire::Tag(packet_field::kMagicNumber, wire::kVarint), &v);  // not checked, as Canal's clients do not
  if (in.Varint(wire::Tag(packet_field::kVersion, wire::kVarint), &v)) out->version = AsInt32(v), out->has_version = true;
  if (in.Varint(wire::Tag(packet_field::kType, wire::kVarint), &v)) out->type = AsInt32(v);
  if (in.Varint(wire::Tag(packet_field::kCompression, wire::kVarint), &v)) out->compression = AsInt32(v), out->has_compression = true;
  in.Bytes(wire::Tag(packet_field::kBody, wire::kLengthDelimited), &out->body);
  if (in.done()) return Status::OK();
  wire::WireReader r(bytes, in.pos());
  wire::Field f;
  while (r.Next(&f)) {
    const bool varint = f.wire_type == wire::kVarint;
    switch (f.number) {
      case packet_field::kVersion:
        if (varint) out->version = AsInt32(f.varint), out->has_version = true;
        break;
      case packet_field::kType:
        if (varint) out->type = AsInt32(f.varint);
        break;
      case packet_field::kCompression:
        if (varint) out->compression = AsInt32(f.varint), out->has_compression = true;
        break;
      case packet_field::kBody:
        if (f.wire_type == wire::kLengthDelimited) out->body = f.bytes;
        break;
      default:  // the magic number and unknown fields
        break;
    }
  }
  if (r.failed()) {
    Status s = r.Error("canal.protocol.Packet");
    *out = PacketFrame();
    return s;
  }
  return Status::OK();
}

}  // namespace canal::client
