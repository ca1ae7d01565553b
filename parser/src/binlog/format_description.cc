#include "canal/parser/binlog/format_description.h"

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "canal/parser/binlog/byte_reader.h"

namespace canal::binlog {

namespace {

constexpr size_t kServerVersionLength = 50;

void ParseVersion(FormatDescription* fde) {
  const std::string& v = fde->server_version;
  int parts[3] = {0, 0, 0};
  size_t i = 0;
  for (int k = 0; k < 3 && i < v.size(); ++k) {
    int n = 0;
    bool any = false;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9') {
      n = n * 10 + (v[i] - '0');
      if (n > 100000) n = 100000;
      ++i;
      any = true;
    }
    if (!any) break;
    parts[k] = n;
    if (i < v.size() && v[i] == '.') ++i; else break;
  }
  fde->version_major = parts[0];
  fde->version_minor = parts[1];
  fde->version_patch = parts[2];
  fde->flavor = v.find("MariaDB") != std::string::npos ? ServerFlavor::kMariaDB : ServerFlavor::kMySQL;
}

bool VersionAtLeast(const FormatDescription& f, int a, int b, int c) {
  if (f.version_major != a) return f.version_major > a;
  if (f.version_minor != b) return f.version_minor > b;
  return f.version_patch >= c;
}

// MySQL 5.1.[1-5]-a_drop5*, 5.1.4-a_drop6* and 5.2.[0-2]-a_drop6* trees wrote
// TABLE_MAP, the pre-GA rows events, XID and the LOAD DATA pair under other
// numbers; the server remaps them after reading the FDE.
bool UsesPreGaNumbering(const FormatDescription& f) {
  const std::string& v = f.server_version;
  if (v.size() < 12) return false;
  auto starts = [&](std::string_view p) { return v.compare(0, p.size(), p) == 0; };
  if (starts("5.1.") && v[4] >= '1' && v[4] <= '5' && v.compare(5, 8, "-a_drop5") == 0) return true;
  if (starts("5.1.4-a_drop6")) return true;
  if (starts("5.2.") && v[4] >= '0' && v[4] <= '2' && v.compare(5, 8, "-a_drop6") == 0) return true;
  return false;
}

constexpr uint8_t kPreGaMap[][2] = {{16, 19}, {17, 20}, {18, 21}, {19, 22}, {20, 16}, {21, 17}, {22, 18}};

}  // namespace

uint8_t RemapEventType(const FormatDescription& fde, uint8_t raw) {
  if (!fde.pre_ga_numbering) return raw;
  for (const auto& m : kPreGaMap) {
    if (m[0] == raw) return m[1];
  }
  return raw;
}

Status DecodeFormatDescription(const uint8_t* body, size_t size, FormatDescription* fde, bool* has_checksum) {
  ByteReader r(body, size);
  std::string_view version;
  if (!r.ReadLE(&fde->binlog_version) || !r.ReadBytes(kServerVersionLength, &version) ||
      !r.ReadLE(&fde->create_timestamp) || !r.ReadU8(&fde->header_length)) {
    return Status::Truncated("event too short (" + std::to_string(size) + " bytes)");
  }
  size_t nul = version.find('\0');
  fde->server_version.assign(version.substr(0, nul));
  ParseVersion(fde);
  if (fde->binlog_version != 4) {
    return Status::NotSupported("binlog version " + std::to_string(fde->binlog_version) +
                                " in a FORMAT_DESCRIPTION event (only 4 exists)");
  }
  if (fde->header_length < 19) {
    return Status::Corruption("common header length " + std::to_string(fde->header_length) + " is below 19");
  }
  bool checksum_aware = fde->flavor == ServerFlavor::kMariaDB ? VersionAtLeast(*fde, 5, 3, 0)
                                                              : VersionAtLeast(*fde, 5, 6, 1);
  size_t table_len = r.remaining();
  fde->checksum = ChecksumAlg::kOff;
  if (checksum_aware) {
    if (table_len < 5) return Status::Truncated("checksum algorithm and CRC missing");
    table_len -= 5;
    uint8_t alg = body[r.offset() + table_len];
    if (alg != 0 && alg != 1) {
      return Status::NotSupported("checksum algorithm " + std::to_string(alg) + " (known: 0 none, 1 CRC32)");
    }
    fde->checksum = static_cast<ChecksumAlg>(alg);
  }
  fde->post_header_lengths.assign(r.current(), r.current() + table_len);
  *has_checksum = checksum_aware;
  fde->pre_ga_numbering = UsesPreGaNumbering(*fde);
  if (fde->pre_ga_numbering) {
    // Re-index the post-header lengths by GA type code.
    std::vector<uint8_t> remapped = fde->post_header_lengths;
    for (const auto& m : kPreGaMap) {
      if (m[0] <= fde->post_header_lengths.size() && m[1] <= remapped.size()) {
        remapped[m[1] - 1] = fde->post_header_lengths[m[0] - 1];
      }
    }
    fde->post_header_lengths = std::move(remapped);
  }
  return Status::OK();
}

Status DecodeStartV3(const uint8_t* event, size_t size, FormatDescription* fde) {
  // v3 has 19-byte headers and binlog_version 3 in the body; v1 has 13-byte
  // headers and version 1.
  uint16_t v = 0;
  size_t hlen = 0;
  if (size >= 19 + 2 && (event[19] | event[20] << 8) == 3) {
    hlen = 19;
    v = 3;
  } else if (size >= 13 + 2 && (event[13] | event[14] << 8) == 1) {
    hlen = 13;
    v = 1;
  } else {
    return Status::Corruption("START_EVENT_V3 with a binlog version other than 1 or 3");
  }
  ByteReader r(event + hlen, size - hlen);
  std::string_view version;
  if (!r.Skip(2) || !r.ReadBytes(kServerVersionLength, &version) || !r.ReadLE(&fde->create_timestamp)) {
    return Status::Truncated("START_EVENT_V3 too short");
  }
  fde->binlog_version = v;
  fde->server_version.assign(version.substr(0, version.find('\0')));
  ParseVersion(fde);
  fde->header_length = static_cast<uint8_t>(hlen);
  fde->checksum = ChecksumAlg::kOff;
  // Fixed post-header sizes of the v1/v3 formats (QUERY without status vars,
  // ROTATE with its position only in v3, the LOAD family).
  fde->post_header_lengths.assign(18, 0);
  fde->post_header_lengths[1] = 11;            // QUERY
  fde->post_header_lengths[3] = v == 1 ? 0 : 8;  // ROTATE
  fde->post_header_lengths[5] = 18;            // LOAD
  fde->post_header_lengths[7] = 22;            // CREATE_FILE
  fde->post_header_lengths[8] = 4;             // APPEND_BLOCK
  fde->post_header_lengths[9] = 4;             // EXEC_LOAD
  fde->post_header_lengths[10] = 4;            // DELETE_FILE
  fde->post_header_lengths[11] = 18;           // NEW_LOAD
  return Status::OK();
}

bool WritesMariaDbHiresTemporal(const FormatDescription& f) {
  return f.flavor == ServerFlavor::kMariaDB && VersionAtLeast(f, 5, 3, 0);
}

bool PrintsIntegerDisplayWidths(const FormatDescription& f) {
  return f.flavor == ServerFlavor::kMariaDB || !VersionAtLeast(f, 8, 0, 19);
}

}  // namespace canal::binlog
