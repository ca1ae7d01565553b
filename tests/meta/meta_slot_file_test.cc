// meta.dat's two-slot form (canal/meta/meta_file.h): which slot a reader takes
// when one or both are torn or fail their checksum, the migration from
// Canal's plain JSON, and what FileMetaManager writes in place.
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/meta/file_meta_manager.h"
#include "canal/meta/meta_file.h"
#include "canal/meta/meta_json.h"
#include "meta_test_util.h"

namespace canal::meta {
namespace {

using namespace std::chrono_literals;
using testing::Client;
using testing::Pos;
using testing::ReadFile;
using testing::ReadMetaJson;
using testing::ScratchDir;
using testing::WriteFile;

constexpr size_t kSlot = kMinMetaSlotSize;
const std::string kJsonA = R"({"clientDatas":[],"destination":"a"})";
const std::string kJsonB = R"({"clientDatas":[],"destination":"bb"})";

// A two-slot file with `slot0` and `slot1` (nullopt: never written).
std::string TwoSlots(std::optional<std::pair<uint64_t, std::string>> slot0,
                     std::optional<std::pair<uint64_t, std::string>> slot1, size_t slot_size = kSlot) {
  std::string file(2 * slot_size, '\0');
  std::string bytes;
  if (slot0) {
    EncodeMetaSlot(slot0->first, slot0->second, &bytes);
    file.replace(0, bytes.size(), bytes);
  }
  if (slot1) {
    EncodeMetaSlot(slot1->first, slot1->second, &bytes);
    file.replace(slot_size, bytes.size(), bytes);
  }
  return file;
}

MetaFileContents Parse(const std::string& bytes, Status* status = nullptr) {
  MetaFileContents c;
  Status s = ParseMetaFile(bytes, "/data/x/meta.dat", &c);
  if (status != nullptr) *status = s;
  else EXPECT_TRUE(s.ok()) << s.ToString();
  return c;
}

TEST(MetaSlotFileTest, TheNewestValidSlotWinsWhicheverSlotItIsIn) {
  MetaFileContents c = Parse(TwoSlots(std::pair{7, kJsonA}, std::pair{8, kJsonB}));
  EXPECT_EQ(c.form, MetaFileForm::kSlots);
  EXPECT_EQ(c.json, kJsonB);
  EXPECT_EQ(c.sequence, 8u);
  EXPECT_EQ(c.slot, 1);
  EXPECT_EQ(c.slot_size, kSlot);
  EXPECT_EQ(c.other_slot, "");

  c = Parse(TwoSlots(std::pair{9, kJsonA}, std::pair{8, kJsonB}));
  EXPECT_EQ(c.json, kJsonA);
  EXPECT_EQ(c.slot, 0);
}

TEST(MetaSlotFileTest, AFreshFileHasOneSlotAndTheOtherNeverWritten) {
  MetaFileContents c = Parse(TwoSlots(std::pair{1, kJsonA}, std::nullopt));
  EXPECT_EQ(c.json, kJsonA);
  EXPECT_EQ(c.other_slot, "") << "a never written slot is not a bad one";
}

TEST(MetaSlotFileTest, ATornNewerSlotFallsBackToTheOlderOne) {
  // A write of seq 8 into slot 1 cut short: its header and half its JSON
  // reached the disk, the rest of the slot still holds seq 6's bytes.
  const std::string longer = R"({"clientDatas":[{"clientIdentity":{"clientId":1001,"destination":"a"}}],"destination":"a"})";
  std::string file = TwoSlots(std::pair{7, kJsonA}, std::pair{6, longer});
  std::string newer;
  EncodeMetaSlot(8, kJsonB + std::string(40, ' '), &newer);
  file.replace(kSlot, newer.size() / 2, newer.substr(0, newer.size() / 2));
  MetaFileContents c = Parse(file);
  EXPECT_EQ(c.json, kJsonA);
  EXPECT_EQ(c.sequence, 7u);
  EXPECT_EQ(c.slot, 0);
  EXPECT_NE(c.other_slot.find("slot 1 (offset 4096)"), std::string::npos) << c.other_slot;
  EXPECT_NE(c.other_slot.find("checksum mismatch"), std::string::npos) << c.other_slot;
}

TEST(MetaSlotFileTest, OneFlippedByteFailsTheChecksum) {
  for (size_t at : {size_t{20}, size_t{61 + 5}, size_t{61 + kJsonB.size() - 1}}) {
    std::string file = TwoSlots(std::pair{7, kJsonA}, std::pair{8, kJsonB});
    file[kSlot + at] ^= 0x01;
    MetaFileContents c = Parse(file);
    EXPECT_EQ(c.json, kJsonA) << "byte " << at;
    EXPECT_FALSE(c.other_slot.empty()) << "byte " << at;
  }
}

TEST(MetaSlotFileTest, GarbageHeaderAndOverlongLengthAreBadSlots) {
  std::string file = TwoSlots(std::pair{7, kJsonA}, std::pair{8, kJsonB});
  std::memcpy(&file[kSlot], "garbage", 7);
  EXPECT_NE(Parse(file).other_slot.find("no valid slot header"), std::string::npos);

  file = TwoSlots(std::pair{7, kJsonA}, std::pair{8, kJsonB});
  const size_t len_at = file.find(" len=", kSlot) + 5;
  std::memcpy(&file[len_at], "00001000", 8);  // 4096 bytes of JSON cannot fit a 4096-byte slot
  EXPECT_NE(Parse(file).other_slot.find("exceeds the slot"), std::string::npos) << Parse(file).other_slot;
}

TEST(MetaSlotFileTest, BothSlotsBadIsCorruptionNamingTheFileAndEachSlot) {
  std::string file = TwoSlots(std::pair{7, kJsonA}, std::pair{8, kJsonB});
  file[61 + 3] ^= 0x20;
  std::memcpy(&file[kSlot], "xx", 2);
  Status s;
  Parse(file, &s);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("/data/x/meta.dat"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("slot 0: checksum mismatch (seq 7)"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("slot 1: no valid slot header"), std::string::npos) << s.ToString();

  Parse(TwoSlots(std::nullopt, std::nullopt), &s);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("slot 0: never written; slot 1: never written"), std::string::npos) << s.ToString();
}

TEST(MetaSlotFileTest, AFileOfNeitherFormIsCorruption) {
  for (const std::string& bytes : {std::string("garbage"), std::string(3 * kSlot, 'x'),
                                   std::string(2 * (kSlot / 2), '\0'), std::string(2 * kSlot + 2, '\0')}) {
    Status s;
    Parse(bytes, &s);
    EXPECT_TRUE(s.IsCorruption()) << bytes.size() << " bytes: " << s.ToString();
    EXPECT_NE(s.message().find("neither JSON nor two slots"), std::string::npos) << s.ToString();
  }
}

TEST(MetaSlotFileTest, PlainJsonIsToldByItsFirstBrace) {
  MetaFileContents c = Parse("\n  " + kJsonA);
  EXPECT_EQ(c.form, MetaFileForm::kPlainJson);
  EXPECT_EQ(c.json, "\n  " + kJsonA);
  // An empty file is plain JSON that will not decode (as before slots).
  EXPECT_EQ(Parse("").form, MetaFileForm::kPlainJson);
}

TEST(MetaSlotFileTest, SlotSizesGrowWithTheDocument) {
  EXPECT_EQ(MetaSlotSizeFor(10), kSlot);
  EXPECT_EQ(MetaSlotSizeFor(3000), 2 * kSlot);  // twice what it needs, rounded to a power of two
  EXPECT_EQ(MetaSlotBytes(100), 61u + 100u + 1u);
}

class FileMetaSlotsTest : public ::testing::Test {
 protected:
  std::unique_ptr<FileMetaManager> Started() {
    auto m = std::make_unique<FileMetaManager>(FileMetaOptions{dir_.path(), 1h});
    Status s = m->Start();
    EXPECT_TRUE(s.ok()) << s.ToString();
    return m;
  }
  std::string MetaDat() const { return dir_.path() + "/example/meta.dat"; }
  MetaFileContents Contents() const {
    MetaFileContents c;
    Status s = ReadMetaFile(MetaDat(), &c);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return c;
  }
  uint64_t CursorOnDisk() const {
    DestinationMeta meta;
    Status s = DecodeMetaFile(ReadMetaJson(MetaDat()), &meta);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return meta.clients.empty() || !meta.clients[0].cursor ? 0 : meta.clients[0].cursor->position;
  }
  // The crash image of a running manager: the file as it is now, copied aside.
  std::string Snapshot() const { return ReadFile(MetaDat()); }

  ScratchDir dir_;
};

TEST_F(FileMetaSlotsTest, PlainJsonIsMigratedToSlotsAndBackAtAStop) {
  const std::string canal = testing::kCanalMetaFile;
  WriteFile(MetaDat(), canal);
  auto m = Started();
  std::optional<LogPosition> cursor;
  ASSERT_TRUE(m->GetCursor(Client(), &cursor).ok());
  ASSERT_TRUE(cursor.has_value());
  EXPECT_EQ(cursor->position, 13885u);
  EXPECT_EQ(ReadFile(MetaDat()), canal) << "reading alone changes nothing";

  // The first write makes the slot file (temp + rename), the next ones write in place.
  for (uint64_t p = 20000; p < 20005; ++p) {
    ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000004", p)).ok());
    ASSERT_TRUE(m->Flush("example").ok());
    EXPECT_EQ(CursorOnDisk(), p);
  }
  EXPECT_EQ(m->file_writes(), 5u);
  EXPECT_EQ(m->slot_writes(), 4u);
  EXPECT_EQ(Contents().form, MetaFileForm::kSlots);
  EXPECT_EQ(std::filesystem::file_size(MetaDat()), 2 * kSlot);
  EXPECT_FALSE(std::filesystem::exists(MetaDat() + ".tmp"));

  const std::string json_before_stop = ReadMetaJson(MetaDat());
  ASSERT_TRUE(m->Stop().ok());
  EXPECT_EQ(ReadFile(MetaDat()), json_before_stop) << "a stopped server leaves Canal's plain file";
  ASSERT_TRUE(m->Stop().ok());  // again: nothing left to do
  EXPECT_EQ(ReadFile(MetaDat()), json_before_stop);
}

TEST_F(FileMetaSlotsTest, WritesAlternateSlotsAndNeverOverwriteTheNewest) {
  auto m = Started();
  ASSERT_TRUE(m->Subscribe(Client()).ok());
  MetaFileContents c = Contents();
  int slot = c.slot;
  uint64_t seq = c.sequence;
  for (uint64_t p = 1; p <= 6; ++p) {
    const std::string before = Snapshot();
    ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000001", p)).ok());
    ASSERT_TRUE(m->Flush("example").ok());
    c = Contents();
    EXPECT_EQ(c.slot, 1 - slot);
    EXPECT_EQ(c.sequence, seq + 1);
    // The slot that held the newest state before this write is byte for byte untouched.
    const std::string after = Snapshot();
    ASSERT_EQ(after.size(), before.size());
    EXPECT_EQ(after.substr(slot * kSlot, kSlot), before.substr(slot * kSlot, kSlot));
    slot = c.slot;
    seq = c.sequence;
  }
}

TEST_F(FileMetaSlotsTest, ATornLastWriteResumesFromThePreviousFlush) {
  {
    auto m = Started();
    ASSERT_TRUE(m->Subscribe(Client()).ok());
    ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000001", 100)).ok());
    ASSERT_TRUE(m->Flush("example").ok());
    ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000001", 200)).ok());
    ASSERT_TRUE(m->Flush("example").ok());
    std::string crash = Snapshot();
    const MetaFileContents c = Contents();
    ASSERT_EQ(CursorOnDisk(), 200u);
    // The write of 200 torn: zero its slot's JSON tail, as a lost sector would.
    const size_t json_at = c.slot * kSlot + 61;
    std::fill(crash.begin() + static_cast<long>(json_at + 30), crash.begin() + static_cast<long>(json_at + 80), '\0');
    ASSERT_TRUE(m->Stop().ok());
    WriteFile(MetaDat(), crash);  // the file as a kill -9 at that moment would have left it
  }
  auto m = Started();
  std::optional<LogPosition> cursor;
  ASSERT_TRUE(m->GetCursor(Client(), &cursor).ok());
  ASSERT_TRUE(cursor.has_value());
  EXPECT_EQ(cursor->position, 100u);
  // The next write goes over the torn slot, not over the one it resumed from.
  const MetaFileContents loaded = Contents();
  ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000001", 150)).ok());
  ASSERT_TRUE(m->Flush("example").ok());
  const MetaFileContents c = Contents();
  EXPECT_EQ(c.slot, 1 - loaded.slot);
  EXPECT_GT(c.sequence, loaded.sequence);
  EXPECT_EQ(c.other_slot, "");
  EXPECT_EQ(m->slot_writes(), 1u) << "a slot file left by a crash is written in place";
  EXPECT_EQ(CursorOnDisk(), 150u);
}

TEST_F(FileMetaSlotsTest, BothSlotsBadIsAnErrorOnEveryCallAndTheFileIsKept) {
  std::string file = TwoSlots(std::pair{7, std::string(R"({"clientDatas":[],"destination":"example"})")},
                              std::pair{8, std::string(R"({"clientDatas":[],"destination":"example"})")});
  file[61] ^= 0x01;
  file[kSlot + 61] ^= 0x01;
  WriteFile(MetaDat(), file);
  auto m = Started();
  testing::ExpectCorruptDestination(m.get(), MetaDat());
  ASSERT_TRUE(m->Stop().ok());
  EXPECT_EQ(ReadFile(MetaDat()), file) << "a cursor is never reset silently";
}

TEST_F(FileMetaSlotsTest, ADocumentThatOutgrowsItsSlotsMovesToABiggerFile) {
  auto m = Started();
  // Long filters: each client adds ~1 KiB of JSON.
  for (int16_t id = 1; id <= 12; ++id) {
    ASSERT_TRUE(m->Subscribe(Client(id, "example", std::string(1000, 'f'))).ok());
  }
  const MetaFileContents c = Contents();
  EXPECT_GT(c.slot_size, kSlot);
  EXPECT_EQ(std::filesystem::file_size(MetaDat()), 2 * c.slot_size);
  DestinationMeta meta;
  ASSERT_TRUE(DecodeMetaFile(c.json, &meta).ok());
  EXPECT_EQ(meta.clients.size(), 12u);
  // Growing is rare: the slots are sized with room for as much again.
  EXPECT_LT(m->file_writes() - m->slot_writes(), 6u);
}

TEST_F(FileMetaSlotsTest, AMetaFileRemovedWhileRunningComesBackOnTheNextWrite) {
  auto m = Started();
  ASSERT_TRUE(m->Subscribe(Client()).ok());
  ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000001", 5)).ok());
  ASSERT_TRUE(m->Flush("example").ok());
  ASSERT_EQ(m->slot_writes(), 1u);
  // The writer keeps the file open: writing on into the removed file would lose every ack.
  std::filesystem::remove(MetaDat());
  ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000001", 6)).ok());
  ASSERT_TRUE(m->Flush("example").ok());
  EXPECT_EQ(Contents().form, MetaFileForm::kSlots);
  EXPECT_EQ(CursorOnDisk(), 6u);
  ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000001", 7)).ok());
  ASSERT_TRUE(m->Flush("example").ok());
  EXPECT_EQ(CursorOnDisk(), 7u);
  EXPECT_EQ(m->slot_writes(), 2u);
}

// A power cut can leave any part of a slot write on the disk: a prefix, a
// suffix, or scattered pieces of it. Every such image of every write must
// load as the state before the write or after it, never fail, never older.
TEST_F(FileMetaSlotsTest, EveryTearOfAWriteLoadsTheStateBeforeOrAfterIt) {
  auto m = Started();
  ASSERT_TRUE(m->Subscribe(Client()).ok());
  ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000001", 1)).ok());
  ASSERT_TRUE(m->Flush("example").ok());
  std::mt19937 rng(20261201);
  int images = 0, old_state = 0, new_state = 0;
  for (uint64_t p = 2; p <= 40; ++p) {
    const std::string before = Snapshot();
    // Positions of growing width: the JSON's length changes now and then.
    ASSERT_TRUE(m->UpdateCursor(Client(), Pos("mysql-bin.000001", p * p * p * 997)).ok());
    ASSERT_TRUE(m->Flush("example").ok());
    const std::string after = Snapshot();
    ASSERT_EQ(before.size(), after.size());
    size_t first = 0, last = after.size();
    while (first < last && before[first] == after[first]) ++first;
    while (last > first && before[last - 1] == after[last - 1]) --last;
    ASSERT_LT(first, last) << "the write changed nothing";
    const uint64_t old_pos = p == 2 ? 1 : (p - 1) * (p - 1) * (p - 1) * 997;
    for (int trial = 0; trial < 30; ++trial) {
      std::string image = before;
      const size_t cut = first + rng() % (last - first + 1);
      switch (trial % 3) {
        case 0:  // the first bytes of the write landed
          image.replace(first, cut - first, after, first, cut - first);
          break;
        case 1:  // the last bytes landed
          image.replace(cut, last - cut, after, cut, last - cut);
          break;
        default:  // scattered 16-byte pieces landed
          for (size_t at = first; at < last; at += 16) {
            if (rng() % 2) image.replace(at, std::min<size_t>(16, last - at), after, at, std::min<size_t>(16, last - at));
          }
      }
      MetaFileContents c;
      Status s = ParseMetaFile(image, MetaDat(), &c);
      ASSERT_TRUE(s.ok()) << "write " << p << " trial " << trial << ": " << s.ToString();
      DestinationMeta meta;
      ASSERT_TRUE((s = DecodeMetaFile(c.json, &meta)).ok()) << s.ToString();
      ASSERT_EQ(meta.clients.size(), 1u);
      const uint64_t got = meta.clients[0].cursor->position;
      if (image == after) {
        ASSERT_EQ(got, p * p * p * 997);
      } else {
        ASSERT_TRUE(got == old_pos || got == p * p * p * 997) << "write " << p << " trial " << trial << ": " << got;
      }
      ++images;
      (got == old_pos ? old_state : new_state)++;
    }
  }
  // Both outcomes occur, or the tears did not tear.
  EXPECT_GT(old_state, images / 4);
  EXPECT_GT(new_state, 0);
}

}  // namespace
}  // namespace canal::meta
