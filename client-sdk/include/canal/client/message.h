// Message: one batch returned by Connector::GetWithoutAck.
//
// A batch is an id plus the serialised canal.entry.Entry values the server sent.
// The Message keeps the frame of the MESSAGES packet as the socket filled it,
// and the entries are views into it: no allocation or copy per entry, and
// none per batch either when the caller passes the same Message to every get
// (the connector reads the next batch into the buffer the last one held). View(i) reads
// one entry in place, without allocating (entry_view.h), for clients that
// must keep up with a fast stream; entries() parses protobuf Entry objects on
// its first call only, for callers that ask for them; TakeRawEntries() copies
// the bytes out for callers that queue them.
//
// An empty batch (nothing new within the get's timeout) has batch_id() == -1 and
// no entries; it needs no ack.
//
// Not thread-safe: entries() fills a cache. Hand a Message to one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "canal/client/entry_view.h"
#include "canal/common/status.h"
#include "canal/entry.pb.h"

namespace canal::client {

class Connector;

class Message {
 public:
  // An empty batch (id -1).
  Message() = default;
  // A batch of these entries (copied into one buffer; for tests and tools).
  Message(int64_t batch_id, const std::vector<std::string>& raw_entries);

  // Reads the body of a MESSAGES packet (canal.protocol.Messages: batch_id 1,
  // messages 2, server_warning 100; other fields skipped) without copying an
  // entry: *out keeps `body` and views into it. Corruption saying where when
  // the bytes are malformed. An empty batch is id -1 whatever the server wrote.
  static Status FromMessagesBody(std::string body, Message* out);
  // The same for a body at [offset, offset + size) of `buffer` (a frame as
  // read from the socket): *out keeps the whole buffer. InvalidArgument when
  // the range lies outside it.
  static Status FromMessagesBody(std::string buffer, size_t offset, size_t size, Message* out);

  Message(Message&&) noexcept = default;
  Message& operator=(Message&&) noexcept = default;
  Message(const Message&) = default;
  Message& operator=(const Message&) = default;

  // The id to pass to Connector::Ack or Connector::Rollback; -1 for an empty batch.
  int64_t batch_id() const { return batch_id_; }
  bool empty() const { return raw_.empty(); }

  // The serialised entries, in server order.
  size_t raw_entry_count() const { return raw_.size(); }
  std::string_view raw_entry(size_t i) const { return {storage_.data() + raw_[i].offset, raw_[i].size}; }
  // Views of every entry, valid while this Message holds its entries.
  std::vector<std::string_view> raw_entries() const;
  // Copies the bytes out (the Message is then empty of entries; batch_id stays).
  std::vector<std::string> TakeRawEntries();

  // A zero-copy view of entry i (entry_view.h), valid while this Message
  // holds its entries; nothing is allocated or cached. Corruption names the batch and the entry's index;
  // InvalidArgument when i >= raw_entry_count().
  Status View(size_t i, EntryView* out) const;

  // Parses every entry (first call only; later calls return the first result).
  // A malformed entry is Corruption naming the batch and its index; the entries
  // before it stay available through entries().
  Status ParseEntries();

  // The parsed entries, parsing on the first call. After a parse error these are
  // the entries before the bad one: call ParseEntries() when you must know.
  const std::vector<canal::entry::Entry>& entries();

  // What this server says about the destination with an empty batch when it
  // is not streaming from its primary (why, since when); "" otherwise and
  // from Canal's own servers. An idle primary gives "", a failing one not.
  const std::string& server_warning() const { return server_warning_; }
  void set_server_warning(std::string warning) { server_warning_ = std::move(warning); }

 private:
  friend class Connector;
  // Leaves this Message empty and hands back its buffer, for the connector to
  // read the next batch into (a caller that reuses one Message for its gets
  // then allocates no buffer per batch).
  std::string TakeBuffer();
  // Empties everything but the buffer, keeping the allocations of the spans.
  void Clear();

  // Where an entry's bytes are in storage_ (offsets, not views: a copied or
  // moved Message keeps them right).
  struct Span {
    size_t offset = 0;
    size_t size = 0;
  };

  int64_t batch_id_ = -1;
  std::string server_warning_;
  std::string storage_;  // the MESSAGES body or the frame holding it (or the entries, back to back)
  std::vector<Span> raw_;
  std::vector<canal::entry::Entry> parsed_;
  bool parse_done_ = false;
  Status parse_status_;
};

// The proto3 schema keeps Canal's proto2 defaults visible as presence: these
// return the value a Canal client sees, default included.
canal::entry::EntryType EntryTypeOf(const canal::entry::Entry& entry);        // default ROWDATA
canal::entry::EventType EventTypeOf(const canal::entry::Header& header);      // default UPDATE
canal::entry::EventType EventTypeOf(const canal::entry::RowChange& change);   // default UPDATE
bool IsNull(const canal::entry::Column& column);                              // default false
bool IsDdl(const canal::entry::RowChange& change);                            // default false

// "INSERT", "TRANSACTIONBEGIN", ...: Canal's enum names ("UNKNOWN(n)" otherwise).
std::string EventTypeName(canal::entry::EventType type);
std::string EntryTypeName(canal::entry::EntryType type);

}  // namespace canal::client
