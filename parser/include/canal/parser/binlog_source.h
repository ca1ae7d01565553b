// BinlogSource: where the parse loop gets its events — the replication socket
// (DumpSource) or binlog files on disk (FileSource) — as one small interface.
//
// A source frames, decodes (once, with the caller's decoder) and places every
// event: the file it is in and its 64-bit offset there. Offsets are the bytes
// of the file before the event, counted by the source; the header's 32-bit
// log_pos only checks their low 32 bits (a file grows past 4 GiB when one
// transaction is that large, and log_pos wraps). Events a server sends that
// are not in the file (the artificial ROTATE a dump opens with, a re-sent
// FORMAT_DESCRIPTION, heartbeats) sit at the stream's position with
// in_file = false. The events inside a TRANSACTION_PAYLOAD follow it, with the
// payload's offsets and inner = true. A ROTATE carries its own file; the
// events after it are in the file it names. Errors are Status values naming the file and offset; the end of
// the stream (EOF packet, last file read) is NotFound.
//
// Not thread-safe, except Shutdown().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/binlog/binlog_file_reader.h"
#include "canal/parser/binlog/event.h"
#include "canal/parser/binlog/event_decoder.h"

namespace canal::parser {

struct SourceEvent {
  binlog::Event event;      // valid until the next Next()
  std::string_view file;    // the file the event is in; valid until the next Next()
  uint64_t offset = 0;      // where it starts; for events not in the file, the stream's position
  uint64_t end = 0;         // where the next event starts (== offset when not in the file)
  bool in_file = false;     // a real event of the file, at a real position
  bool inner = false;       // from inside a TRANSACTION_PAYLOAD (offsets are the payload's)
  uint64_t wire_bytes = 0;  // bytes read from the source for this event (0 for inner events)
};

class BinlogSource {
 public:
  virtual ~BinlogSource() = default;
  // The next event, decoded with `decoder` (the same decoder for the whole
  // stream). NotFound at the end of the stream.
  virtual Status Next(binlog::EventDecoder* decoder, SourceEvent* out) = 0;
  // From any thread: a blocked Next() returns an error soon.
  virtual void Shutdown() {}
};

// Raw events as a replica connection returns them (checksum included, the
// OK byte stripped); a view valid until the next call.
class RawEventStream {
 public:
  virtual ~RawEventStream() = default;
  virtual Status ReadEvent(std::string_view* event) = 0;
  virtual void Shutdown() {}
  // The last event ends in a CRC32 of the rest, and it matched (checked where
  // it was read; ReadAheadStream): the decoder need not compute it again.
  virtual bool checksum_checked() const { return false; }
};

// COM_BINLOG_DUMP carries a 32-bit position: a start past 4 GiB (in a file a
// huge transaction made that large) is asked for at the file's start (4), and
// the DumpSource's skip_to brings the stream to it.
inline uint64_t DumpRequestOffset(uint64_t position) { return position <= UINT32_MAX ? position : 4; }

// The replication socket's events. Started at `file`:`position`, as the dump
// was asked: the opening artificial ROTATE is read by hand (it comes before
// the FORMAT_DESCRIPTION the decoder needs). When the server could only be
// asked for an earlier position (COM_BINLOG_DUMP carries 32 bits; a GTID dump
// skips transactions), events ending at or before `skip_to` are decoded but not
// returned, so the stream starts exactly there.
class DumpSource final : public BinlogSource {
 public:
  DumpSource(RawEventStream* stream, std::string file, uint64_t position, bool crc32, uint64_t skip_to = 0);
  Status Next(binlog::EventDecoder* decoder, SourceEvent* out) override;
  void Shutdown() override { stream_->Shutdown(); }

  // Events whose log_pos said the server skipped bytes (GTID dumps), for tests and logs.
  uint64_t gaps() const { return gaps_; }
  // The last error came from the stream (network, server), not from the
  // bytes: another connection may fix it.
  bool stream_failed() const { return stream_failed_; }
  const std::string& file() const { return file_; }
  uint64_t position() const { return pos_; }

 private:
  Status ReadOne(binlog::EventDecoder* decoder, SourceEvent* out);

  RawEventStream* stream_;
  bool inner_ = false;  // a payload's events are pending in the decoder
  uint64_t outer_offset_ = 0, outer_end_ = 0;
  std::string file_;
  uint64_t pos_;
  bool crc32_;
  uint64_t skip_to_;
  uint64_t gaps_ = 0;
  bool stream_failed_ = false;
  uint64_t pending_bytes_ = 0;  // read but not yet reported (the opening ROTATE)
  bool rotate_pending_ = false;  // a ROTATE was returned: its file starts at the next read
  std::string rotate_to_;
  uint64_t rotate_position_ = 0;
};

// Binlog files on disk, as mariadb-binlog reads them: a list of files (or the
// files of a directory, see binlog::ExpandBinlogPaths) in order, each from its
// magic; or one file held in memory. Starts in `start_file` (a base name; ""
// = the first file) at `start_position` (4 = the file's start): like a dump,
// the file's FORMAT_DESCRIPTION comes first (not in_file when the start is
// later). Each file's events carry its base name. The last file's end is the
// end of the stream; a file that ends inside an event is a Truncated error.
class FileSource final : public BinlogSource {
 public:
  FileSource(std::vector<std::string> paths, std::string start_file = "", uint64_t start_position = 4);
  // One file from memory, named `name` (tests, tools).
  static std::unique_ptr<FileSource> FromBuffer(std::string name, std::string bytes, uint64_t start_position = 4);

  Status Next(binlog::EventDecoder* decoder, SourceEvent* out) override;

 private:
  Status OpenNext(binlog::EventDecoder* decoder);

  std::vector<std::string> paths_;
  std::string start_file_;
  uint64_t start_position_;
  size_t next_path_ = 0;
  std::string buffer_name_, buffer_bytes_;  // FromBuffer
  bool from_buffer_ = false;
  std::unique_ptr<binlog::BinlogFileReader> reader_;
  std::string file_;           // base name of the open file
  bool seek_pending_ = false;  // the first file's FDE comes first, then the start position
  uint64_t outer_offset_ = 0, outer_end_ = 0;  // the last outer event (for a payload's inner events)
};

}  // namespace canal::parser
