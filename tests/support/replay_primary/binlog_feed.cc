// The dump side of the replay primary: binlog files framed into events and
// streamed the way a MySQL 8 primary does — a fake ROTATE naming the file and
// start position, the file's FORMAT_DESCRIPTION (log_pos 0 when the dump starts
// past it), the events, and heartbeats once everything is sent. A GTID dump is
// first checked against gtid_executed / gtid_purged as MySQL checks it, then
// skips the transactions (GTID and GTID_TAGGED) in the replica's set.
#include <zlib.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "support/replay_primary/replay_internal.h"

namespace canal::testing::replay {
namespace {

constexpr size_t kHeader = 19;
constexpr uint8_t kStopEvent = 3, kRotateEvent = 4, kFdeEvent = 15, kHeartbeatEvent = 27, kGtidEvent = 33,
                  kAnonymousGtidEvent = 34, kPreviousGtidsEvent = 35, kGtidTaggedEvent = 42;
constexpr uint16_t kArtificialFlag = 0x20, kInUseFlag = 0x01;
constexpr uint16_t kErMasterFatalReadingBinlog = 1236;

std::string MakeEvent(const Shared& sh, uint8_t type, uint64_t log_pos, uint16_t flags, std::string_view body,
                      bool crc) {
  std::string ev;
  PutInt(&ev, 0, 4);  // timestamp: artificial events carry none
  ev.push_back(static_cast<char>(type));
  PutInt(&ev, sh.options.server_id, 4);
  PutInt(&ev, kHeader + body.size() + (crc ? 4 : 0), 4);
  PutInt(&ev, log_pos, 4);
  PutInt(&ev, flags, 2);
  ev.append(body);
  if (crc) {
    ev.append(4, '\0');
    FixChecksum(&ev);
  }
  return ev;
}

bool SendEvent(PacketConn* conn, std::string_view ev) {
  std::string packet(1, '\0');
  packet.append(ev);
  return conn->Write(packet);
}

bool Refuse(PacketConn* conn, const std::string& message) {
  return conn->Write(ErrPacket(kErMasterFatalReadingBinlog, "HY000", message));
}

// MySQL's checks of a replica's GTID set before a GTID dump: "" when it may
// go on, else the message of the refusal.
std::string GtidStartRefusal(Shared* sh, const GtidSet& replica) {
  std::string executed_text, purged_text;
  {
    std::lock_guard<std::mutex> lock(sh->mu);
    executed_text = sh->gtid_executed;
    purged_text = sh->gtid_purged;
  }
  GtidSet executed, purged;
  std::string error, sid;
  // Both were parsed when set; a failure is named rather than ignored.
  if (!GtidSet::Parse(executed_text, &executed, &error) || !GtidSet::Parse(purged_text, &purged, &error) ||
      !ParseUuid(sh->options.server_uuid, &sid)) {
    return "replay primary: bad GTID state: " + error;
  }
  // MySQL compares the transactions of its own server sidno: its uuid, untagged.
  if (!replica.Only(sid, "").Minus(executed).empty()) {
    return "Slave has more GTIDs than the master has, using the master's SERVER_UUID. This may indicate that the end "
           "of the binary log was truncated or that the last binary log file was lost, e.g., after a power or disk "
           "failure when sync_binlog != 1. The master may or may not have rolled back transactions that were already "
           "replicated to the slave. Suggest to replicate any transactions that master has rolled back from slave to "
           "master, and/or commit empty transactions on master to account for transactions that have been committed "
           "on master but are not included in GTID_EXECUTED.";
  }
  const GtidSet missing = purged.Minus(replica);
  if (!missing.empty()) {
    return "Cannot replicate because the master purged required binary logs. Replicate the missing transactions from "
           "elsewhere, or provision a new slave from backup. Consider increasing the master's binary log expiration "
           "period. The GTID set sent by the slave is '" +
           replica.ToString() + "', and the missing transactions are '" + missing.ToString() + "'.";
  }
  return "";
}

}  // namespace

void FixChecksum(std::string* ev) {
  if (ev->size() < kHeader + 4) return;
  const size_t n = ev->size() - 4;
  const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(ev->data()), static_cast<uInt>(n));
  ev->resize(n);
  PutInt(ev, crc, 4);
}

Status LoadBinlogFile(const std::string& path, BinlogFile* file) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  if (!in) return Status::IOError("replay primary: cannot read binlog file '" + path + "'");
  file->bytes = ss.str();
  file->name = path.substr(path.rfind('/') + 1);
  const std::string& b = file->bytes;
  if (b.size() < 4 + kHeader || b.compare(0, 4, "\xfe" "bin") != 0) {
    return Status::Corruption("replay primary: '" + path + "' is not a binlog file (no magic number)");
  }
  for (size_t off = 4; off + kHeader <= b.size();) {
    const size_t size = GetInt(b, off + 9, 4);
    if (size < kHeader || off + size > b.size()) break;  // a truncated tail is not served
    file->event_offsets.push_back(off);
    off += size;
  }
  if (file->event_offsets.empty() || static_cast<uint8_t>(b[4 + 4]) != kFdeEvent) {
    return Status::Corruption("replay primary: '" + path + "' does not start with a FORMAT_DESCRIPTION event");
  }
  file->fde_size = GetInt(b, 4 + 9, 4);
  // binlog version (2) + server version (50): checksums exist from 5.6.1 on;
  // such an FDE ends with the algorithm byte and a CRC32.
  const std::string_view version(b.data() + 4 + kHeader + 2, 50);
  file->fde_has_checksum = VersionNumber(version) >= 50601 && file->fde_size >= kHeader + 57 + 5;
  file->crc32 = file->fde_has_checksum && b[4 + file->fde_size - 5] == 1;
  return Status::OK();
}

void StreamBinlog(Shared* sh, PacketConn* conn, const DumpRequest& req) {
  const std::vector<BinlogFile>& files = sh->files;
  size_t fi = 0;
  if (!req.file.empty()) {
    while (fi < files.size() && files[fi].name != req.file) ++fi;
  }
  bool purged = false;
  {
    std::lock_guard<std::mutex> lock(sh->mu);
    purged = sh->purged;
  }
  if (purged) {
    Refuse(conn, req.gtid ? "Cannot replicate because the source purged required binary logs (replay primary fault)"
                          : "Could not find first log file name in binary log index file (replay primary fault: '" +
                                req.file + "' purged)");
    return;
  }
  if (req.gtid) {
    const std::string refusal = GtidStartRefusal(sh, req.executed);
    if (!refusal.empty()) {
      sh->Count([](ReplayPrimaryStats& s) { ++s.gtid_refusals; });
      Refuse(conn, refusal);
      return;
    }
  }
  if (fi == files.size()) {
    Refuse(conn, "Could not find first log file name in binary log index file");
    return;
  }
  for (const BinlogFile& f : files) {
    if (f.crc32 && !req.checksum_aware) {
      Refuse(conn, "Replica can not handle replication events with the checksum that source is configured to log "
                   "(set @master_binlog_checksum first)");
      return;
    }
  }
  uint64_t from = std::max<uint64_t>(req.position, 4);
  {
    const BinlogFile& f = files[fi];
    bool boundary = from == 4 || from == f.bytes.size();
    for (size_t off : f.event_offsets) boundary = boundary || off == from;
    if (!boundary) {
      Refuse(conn, "Client requested source to start replication from position " + std::to_string(from) +
                       ", which is not the start of an event in '" + f.name + "' (size " +
                       std::to_string(f.bytes.size()) + ")");
      return;
    }
  }

  uint64_t index = 0;  // events sent from the files in this dump
  bool skipping = false;
  std::string ev;
  for (; fi < files.size(); ++fi, from = 4) {
    const BinlogFile& f = files[fi];
    std::string body;
    PutInt(&body, from, 8);
    body.append(f.name);
    if (!SendEvent(conn, MakeEvent(*sh, kRotateEvent, 0, kArtificialFlag, body, f.crc32))) return;
    ev.assign(f.bytes, f.fde_offset, f.fde_size);
    ev[17] = static_cast<char>(static_cast<uint8_t>(ev[17]) & ~kInUseFlag);
    if (from > 4) ev.replace(13, 4, std::string(4, '\0'));  // a replica must not take the FDE as its position
    if (f.fde_has_checksum) FixChecksum(&ev);
    if (!SendEvent(conn, ev)) return;

    for (size_t off : f.event_offsets) {
      if (off < from || off == f.fde_offset) continue;
      const size_t size = GetInt(f.bytes, off + 9, 4);
      const std::string_view raw(f.bytes.data() + off, size);
      const uint8_t type = static_cast<uint8_t>(raw[4]);
      if (req.gtid) {
        if (type == kGtidEvent && size >= kHeader + 25) {
          skipping = req.executed.Contains(raw.substr(kHeader + 1, 16), "", GetInt(raw, kHeader + 17, 8));
          if (skipping) sh->Count([](ReplayPrimaryStats& s) { ++s.transactions_skipped; });
        } else if (type == kGtidTaggedEvent) {
          // A body that cannot be read is streamed: the replica's parser says what is wrong with it.
          const size_t crc = f.crc32 ? 4 : 0;
          std::string sid, tag;
          uint64_t gno = 0;
          skipping = size >= kHeader + crc &&
                     ReadTaggedGtid(raw.substr(kHeader, size - kHeader - crc), &sid, &tag, &gno) &&
                     req.executed.Contains(sid, tag, gno);
          if (skipping) sh->Count([](ReplayPrimaryStats& s) { ++s.transactions_skipped; });
        } else if (type == kAnonymousGtidEvent || type == kRotateEvent || type == kPreviousGtidsEvent ||
                   type == kStopEvent || type == kFdeEvent) {
          skipping = false;
        }
        if (skipping) continue;
      }
      if (sh->TakeFault(&sh->drop_at, index)) {
        std::string packet(1, '\0');
        packet.append(raw);
        conn->WriteTruncated(packet, packet.size() / 2);
        conn->Shutdown();
        return;
      }
      ev.assign(raw);
      if (sh->TakeFault(&sh->corrupt_at, index)) ev.back() = static_cast<char>(ev.back() ^ 0x5A);
      // Counted first: a client may act on the event before this thread runs on.
      sh->Count([](ReplayPrimaryStats& s) { ++s.events_sent; });
      if (!SendEvent(conn, ev)) return;
      ++index;
    }
  }

  // Caught up: heartbeats at the period the replica asked for, until it goes.
  const BinlogFile& last = files.back();
  const int period_ms = req.heartbeat_ns > 0 ? static_cast<int>(std::max<int64_t>(req.heartbeat_ns / 1'000'000, 1))
                                             : 0;
  auto next_beat = std::chrono::steady_clock::now() + std::chrono::milliseconds(period_ms);
  while (!sh->stop.load()) {
    bool readable = false, closed = false;
    conn->WaitInput(100, &readable, &closed);
    if (closed) return;
    if (readable) {
      std::string ignored;  // a replica sends nothing while dumping but COM_QUIT
      if (!conn->Read(&ignored, 1000)) return;
      return;
    }
    if (period_ms > 0 && std::chrono::steady_clock::now() >= next_beat) {
      sh->Count([](ReplayPrimaryStats& s) { ++s.heartbeats; });
      if (!SendEvent(conn, MakeEvent(*sh, kHeartbeatEvent, last.bytes.size(), kArtificialFlag, last.name,
                                     last.crc32))) {
        return;
      }
      next_beat = std::chrono::steady_clock::now() + std::chrono::milliseconds(period_ms);
    }
  }
}

}  // namespace canal::testing::replay
