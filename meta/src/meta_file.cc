#include "canal/meta/meta_file.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "durable_file.h"

namespace canal::meta {

namespace {

constexpr std::string_view kMagic = "canal-meta v1 seq=";
// "canal-meta v1 seq=" 16 hex " len=" 8 hex " crc=" 8 hex "\n"
constexpr size_t kSeqAt = kMagic.size();
constexpr size_t kLenAt = kSeqAt + 16 + 5;
constexpr size_t kCrcAt = kLenAt + 8 + 5;
constexpr size_t kHeaderSize = kCrcAt + 8 + 1;

uint32_t Crc(std::string_view header_prefix, std::string_view json) {
  uLong c = crc32(0L, Z_NULL, 0);
  c = crc32(c, reinterpret_cast<const Bytef*>(header_prefix.data()), static_cast<uInt>(header_prefix.size()));
  // zlib's length is 32-bit; a slot is far below 4 GiB but feed it in pieces anyway.
  while (!json.empty()) {
    const size_t n = std::min<size_t>(json.size(), 1u << 30);
    c = crc32(c, reinterpret_cast<const Bytef*>(json.data()), static_cast<uInt>(n));
    json.remove_prefix(n);
  }
  return static_cast<uint32_t>(c);
}

bool ParseHex(std::string_view text, uint64_t* value) {
  uint64_t v = 0;
  for (char ch : text) {
    int d;
    if (ch >= '0' && ch <= '9') d = ch - '0';
    else if (ch >= 'a' && ch <= 'f') d = ch - 'a' + 10;
    else return false;
    v = v << 4 | static_cast<uint64_t>(d);
  }
  *value = v;
  return true;
}

enum class SlotState { kValid, kEmpty, kBad };

// Checks one slot; on kBad, *why says what is wrong.
SlotState ReadSlot(std::string_view slot, uint64_t* sequence, std::string_view* json, std::string* why) {
  const std::string_view head = slot.substr(0, kHeaderSize);
  if (std::all_of(head.begin(), head.end(), [](char c) { return c == '\0'; })) return SlotState::kEmpty;
  uint64_t seq = 0, len = 0, crc = 0;
  if (head.substr(0, kMagic.size()) != kMagic || !ParseHex(head.substr(kSeqAt, 16), &seq) ||
      head.substr(kLenAt - 5, 5) != " len=" || !ParseHex(head.substr(kLenAt, 8), &len) ||
      head.substr(kCrcAt - 5, 5) != " crc=" || !ParseHex(head.substr(kCrcAt, 8), &crc) ||
      head[kHeaderSize - 1] != '\n') {
    *why = "no valid slot header";
    return SlotState::kBad;
  }
  if (len > slot.size() - kHeaderSize - 1) {
    *why = "length " + std::to_string(len) + " exceeds the slot";
    return SlotState::kBad;
  }
  const std::string_view body = slot.substr(kHeaderSize, len);
  if (Crc(head.substr(0, kCrcAt), body) != crc) {
    *why = "checksum mismatch (seq " + std::to_string(seq) + ")";
    return SlotState::kBad;
  }
  *sequence = seq;
  *json = body;
  return SlotState::kValid;
}

bool IsPowerOfTwo(size_t n) { return n != 0 && (n & (n - 1)) == 0; }

}  // namespace

size_t MetaSlotBytes(size_t json_size) { return kHeaderSize + json_size + 1; }

size_t MetaSlotSizeFor(size_t json_size) {
  // Twice what is needed: a few more clients do not force a new file.
  const size_t want = 2 * MetaSlotBytes(json_size);
  size_t size = kMinMetaSlotSize;
  while (size < want) size *= 2;
  return size;
}

void EncodeMetaSlot(uint64_t sequence, std::string_view json, std::string* out) {
  char head[kHeaderSize + 1];
  std::snprintf(head, sizeof head, "%.*s%016llx len=%08x crc=", static_cast<int>(kMagic.size()), kMagic.data(),
                static_cast<unsigned long long>(sequence), static_cast<unsigned>(json.size()));
  const uint32_t crc = Crc(std::string_view(head, kCrcAt), json);
  std::snprintf(head + kCrcAt, sizeof head - kCrcAt, "%08x\n", static_cast<unsigned>(crc));
  out->assign(head, kHeaderSize);
  out->append(json);
  out->push_back('\n');
}

Status ParseMetaFile(std::string_view bytes, const std::string& path, MetaFileContents* out) {
  *out = MetaFileContents{};
  const size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || bytes[first] == '{') {
    // Plain JSON (an empty file too: decoding it names the problem).
    out->form = MetaFileForm::kPlainJson;
    out->json.assign(bytes);
    return Status::OK();
  }
  const size_t slot_size = bytes.size() / 2;
  if (bytes.size() % 2 != 0 || slot_size < kMinMetaSlotSize || !IsPowerOfTwo(slot_size)) {
    return Status::Corruption("meta file " + path + ": neither JSON nor two slots (" + std::to_string(bytes.size()) +
                              " bytes; slot files are two equal power-of-two slots of at least " +
                              std::to_string(kMinMetaSlotSize) + " bytes)");
  }
  uint64_t seq[2] = {0, 0};
  std::string_view json[2];
  std::string why[2];
  SlotState state[2];
  for (int i = 0; i < 2; ++i) state[i] = ReadSlot(bytes.substr(i * slot_size, slot_size), &seq[i], &json[i], &why[i]);
  int newest = -1;
  for (int i = 0; i < 2; ++i) {
    if (state[i] == SlotState::kValid && (newest < 0 || seq[i] > seq[newest])) newest = i;
  }
  if (newest < 0) {
    auto describe = [&](int i) { return state[i] == SlotState::kEmpty ? std::string("never written") : why[i]; };
    return Status::Corruption("meta file " + path + ": no valid slot (slot 0: " + describe(0) + "; slot 1: " +
                              describe(1) + "); restore it from a backup or reset the cursors (docs/operations.md)");
  }
  const int other = 1 - newest;
  out->form = MetaFileForm::kSlots;
  out->json.assign(json[newest]);
  out->sequence = seq[newest];
  out->slot = newest;
  out->slot_size = slot_size;
  if (state[other] == SlotState::kBad) {
    out->other_slot = "slot " + std::to_string(other) + " (offset " + std::to_string(other * slot_size) + "): " + why[other];
  }
  return Status::OK();
}

Status ReadMetaFile(const std::string& path, MetaFileContents* out) {
  *out = MetaFileContents{};
  std::string bytes;
  bool exists = false;
  CANAL_RETURN_IF_ERROR(ReadWholeFile(path, &bytes, &exists));
  if (!exists) return Status::OK();
  return ParseMetaFile(bytes, path, out);
}

}  // namespace canal::meta
