// meta.dat on disk: its two forms, and reading either.
//
// - Plain JSON: Canal's FileMixedMetaManager document (meta_json.h), nothing
//   else. What Canal writes, what a person edits, and what FileMetaManager
//   leaves at a clean stop, so a data folder can be handed back to Canal.
// - Slots: while the server runs it keeps the file as two fixed-size slots of
//   one power-of-two size (>= 4 KiB each; the file is exactly two slots long).
//   Each slot is a one-line text header and the same JSON document:
//
//     canal-meta v1 seq=<16 hex> len=<8 hex> crc=<8 hex>\n<len bytes of JSON>\n
//
//   crc is CRC-32 (zlib's) over the header up to and including "crc=" and the
//   JSON. Writes go alternately to the slot that does not hold the newest
//   state, each with one fdatasync and no rename, so a crash in the middle of
//   a write tears at most that slot and the other one still holds the
//   previous state. A reader takes the valid slot with the highest seq.
//
// The form is told by the first byte that is not white space: '{' is plain
// JSON, anything else must be slots. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "canal/common/status.h"

namespace canal::meta {

enum class MetaFileForm { kAbsent, kPlainJson, kSlots };

struct MetaFileContents {
  MetaFileForm form = MetaFileForm::kAbsent;
  std::string json;        // the newest state's JSON (empty when absent)
  uint64_t sequence = 0;   // slots: the newest valid slot's seq
  int slot = -1;           // slots: which slot holds it (0 or 1)
  size_t slot_size = 0;    // slots: bytes per slot
  std::string other_slot;  // slots: why the other slot is unusable; empty when it is
                           // valid or was never written (all zero bytes)
};

inline constexpr size_t kMinMetaSlotSize = 4096;

// Reads `path`; absent is OK with form kAbsent. Corruption names the file and,
// for slots, what is wrong with each of them; the JSON itself is not decoded.
Status ReadMetaFile(const std::string& path, MetaFileContents* out);
// The same from bytes already read; `path` names them in errors.
Status ParseMetaFile(std::string_view bytes, const std::string& path, MetaFileContents* out);

// The bytes of one slot's header and JSON (without the zero padding after it).
void EncodeMetaSlot(uint64_t sequence, std::string_view json, std::string* out);
// Header plus JSON plus newline: what a slot must have room for.
size_t MetaSlotBytes(size_t json_size);
// The slot size for a new file holding `json_size` bytes, with room to grow.
size_t MetaSlotSizeFor(size_t json_size);

}  // namespace canal::meta
