#include "canal/parser/binlog/compression.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <string>

namespace canal::binlog {
namespace {

// First output allocation; the buffer then doubles as data arrives, so that a
// corrupt size field cannot make us allocate far more than the data produces.
size_t InitialCapacity(size_t input_size, uint64_t declared) {
  const uint64_t guess = std::max<uint64_t>(uint64_t{64} << 10, uint64_t{input_size} * 4);
  return static_cast<size_t>(std::min(guess, declared + 1));
}

// Grows `buf` (doubling) up to `limit` bytes; false when already at the limit.
bool Grow(std::string* buf, size_t limit) {
  if (buf->size() >= limit) return false;
  const size_t doubled = buf->size() > limit / 2 ? limit : std::max<size_t>(buf->size() * 2, 1);
  buf->resize(std::min(doubled, limit));
  return true;
}

struct ZstdDCtxFree {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

Status ZstdDecompress(std::string_view in_data, uint64_t declared, std::string* out) {
  constexpr std::string_view ev = "TRANSACTION_PAYLOAD event";
  std::unique_ptr<ZSTD_DCtx, ZstdDCtxFree> dctx(ZSTD_createDCtx());
  if (!dctx) return Status::Aborted(std::string(ev) + ": cannot allocate a zstd context");

  // One byte of room past the declared size detects output that is too long.
  const size_t limit = static_cast<size_t>(declared) + 1;
  std::string buf;
  buf.resize(InitialCapacity(in_data.size(), declared));
  size_t produced = 0;
  ZSTD_inBuffer in{in_data.data(), in_data.size(), 0};
  for (;;) {
    if (produced == buf.size() && !Grow(&buf, limit)) break;
    const size_t in_before = in.pos;
    ZSTD_outBuffer o{buf.data() + produced, buf.size() - produced, 0};
    const size_t ret = ZSTD_decompressStream(dctx.get(), &o, &in);
    if (ZSTD_isError(ret)) {
      return Status::Corruption(std::string(ev) + ": zstd: " + ZSTD_getErrorName(ret));
    }
    produced += o.pos;
    if (produced > declared) break;
    if (ret == 0 && in.pos == in.size) {  // last frame complete, input used up
      buf.resize(produced);
      if (produced != declared) {
        return Status::Corruption(std::string(ev) + ": payload inflates to " +
                                  std::to_string(produced) + " bytes, declared " +
                                  std::to_string(declared));
      }
      *out = std::move(buf);
      return Status::OK();
    }
    // No progress with output room left: the input ended inside a frame.
    if (o.pos == 0 && in.pos == in_before) {
      return Status::Corruption(std::string(ev) + ": zstd frame truncated after " +
                                std::to_string(produced) + " bytes of output");
    }
  }
  return Status::Corruption(std::string(ev) + ": payload inflates to more than the declared " +
                            std::to_string(declared) + " bytes");
}

}  // namespace

Status DecompressTransactionPayload(const TransactionPayloadEvent& ev, std::string* out) {
  constexpr std::string_view name = "TRANSACTION_PAYLOAD event";
  switch (ev.compression) {
    case 0:
      if (ev.uncompressed_size > kMaxUncompressedEventBytes) {
        return Status::NotSupported(std::string(name) + ": uncompressed size " +
                                    std::to_string(ev.uncompressed_size) +
                                    " exceeds the 1 GiB limit");
      }
      return ZstdDecompress(ev.payload, ev.uncompressed_size, out);
    case 255:
      if (ev.uncompressed_size != 0 && ev.uncompressed_size != ev.payload.size()) {
        return Status::Corruption(std::string(name) + ": uncompressed payload of " +
                                  std::to_string(ev.payload.size()) + " bytes, declared " +
                                  std::to_string(ev.uncompressed_size));
      }
      out->assign(ev.payload);
      return Status::OK();
    default:
      return Status::NotSupported(std::string(name) + ": compression type " +
                                  std::to_string(ev.compression));
  }
}

Status MariaUncompress(std::string_view data, std::string* out, size_t* consumed) {
  constexpr std::string_view ev = "MariaDB compressed event";
  if (data.empty()) return Status::Truncated(std::string(ev) + ": compression header truncated");
  const uint8_t header = static_cast<uint8_t>(data[0]);
  if (!(header & 0x80)) {
    return Status::Corruption(std::string(ev) + ": compression header " + std::to_string(header) +
                              " lacks the compressed flag");
  }
  const unsigned algorithm = (header >> 4) & 0x7;
  if (algorithm != 0) {
    return Status::NotSupported(std::string(ev) + ": compression algorithm " +
                                std::to_string(algorithm));
  }
  const size_t len_bytes = header & 0x7;
  if (len_bytes < 1 || len_bytes > 4) {
    return Status::Corruption(std::string(ev) + ": uncompressed length of " +
                              std::to_string(len_bytes) + " bytes");
  }
  if (data.size() < 1 + len_bytes) {
    return Status::Truncated(std::string(ev) + ": uncompressed length truncated");
  }
  uint64_t declared = 0;
  for (size_t i = 0; i < len_bytes; ++i) {
    declared = (declared << 8) | static_cast<uint8_t>(data[1 + i]);  // big-endian
  }
  if (declared == 0) return Status::Corruption(std::string(ev) + ": uncompressed length 0");
  if (declared > kMaxUncompressedEventBytes) {
    return Status::NotSupported(std::string(ev) + ": uncompressed length " +
                                std::to_string(declared) + " exceeds the 1 GiB limit");
  }

  const std::string_view stream = data.substr(1 + len_bytes);
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return Status::Aborted(std::string(ev) + ": inflateInit failed");
  struct InflateEnd {
    z_stream* zs;
    ~InflateEnd() { inflateEnd(zs); }
  } end_guard{&zs};

  const size_t limit = static_cast<size_t>(declared) + 1;
  std::string buf;
  buf.resize(InitialCapacity(stream.size(), declared));
  size_t in_pos = 0, produced = 0;
  for (;;) {
    if (produced == buf.size() && !Grow(&buf, limit)) {
      return Status::Corruption(std::string(ev) + ": data inflates to more than the declared " +
                                std::to_string(declared) + " bytes");
    }
    // zlib counts in uInt; feed and drain in chunks it can describe.
    const size_t in_chunk = std::min<size_t>(stream.size() - in_pos, UINT_MAX);
    const size_t out_chunk = std::min<size_t>(buf.size() - produced, UINT_MAX);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(stream.data() + in_pos));
    zs.avail_in = static_cast<uInt>(in_chunk);
    zs.next_out = reinterpret_cast<Bytef*>(buf.data() + produced);
    zs.avail_out = static_cast<uInt>(out_chunk);
    const int rc = inflate(&zs, Z_NO_FLUSH);
    in_pos += in_chunk - zs.avail_in;
    produced += out_chunk - zs.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && zs.avail_out == 0) continue;  // output full: grow and retry
    if (rc == Z_BUF_ERROR) {
      return Status::Corruption(std::string(ev) + ": zlib stream truncated after " +
                                std::to_string(produced) + " bytes of output");
    }
    return Status::Corruption(std::string(ev) + ": zlib: " + (zs.msg ? zs.msg : std::to_string(rc)));
  }
  if (produced != declared) {
    return Status::Corruption(std::string(ev) + ": data inflates to " + std::to_string(produced) +
                              " bytes, declared " + std::to_string(declared));
  }
  buf.resize(produced);
  *out = std::move(buf);
  *consumed = 1 + len_bytes + in_pos;
  return Status::OK();
}

}  // namespace canal::binlog
