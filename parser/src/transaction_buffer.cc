#include "canal/parser/transaction_buffer.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

namespace canal::parser {
namespace {

constexpr size_t kChunkSize = 1u << 20;
// The smallest chunk, when a shared limit makes them smaller.
constexpr size_t kMinChunkSize = 64u << 10;
constexpr size_t kNoSharedLimit = std::numeric_limits<size_t>::max();

// Statement keywords compared case-insensitively after leading blanks and comments
// are skipped the way servers write them (they log BEGIN/COMMIT verbatim).
std::string_view TrimLeading(std::string_view s) {
  while (!s.empty()) {
    if (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r') {
      s.remove_prefix(1);
    } else if (s.size() >= 2 && s[0] == '/' && s[1] == '*') {
      size_t end = s.find("*/", 2);
      if (end == std::string_view::npos) return {};
      s.remove_prefix(end + 2);
    } else {
      break;
    }
  }
  return s;
}

bool StartsWithWord(std::string_view s, std::string_view word) {
  if (s.size() < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    char c = s[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c != word[i]) return false;
  }
  if (s.size() == word.size()) return true;
  const char next = s[word.size()];
  return !((next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') || (next >= '0' && next <= '9') || next == '_');
}

// Only the whole statement counts: "COMMIT" ends a transaction, "COMMIT AND
// CHAIN" is not logged, "ROLLBACK TO SAVEPOINT x" does not end one.
bool IsExactly(std::string_view sql, std::string_view word) {
  sql = TrimLeading(sql);
  if (!StartsWithWord(sql, word)) return false;
  sql.remove_prefix(word.size());
  while (!sql.empty() && (sql.front() == ' ' || sql.front() == ';' || sql.front() == '\n')) sql.remove_prefix(1);
  return sql.empty();
}

bool IsBegin(std::string_view sql) {
  std::string_view s = TrimLeading(sql);
  return IsExactly(s, "BEGIN") || IsExactly(s, "START TRANSACTION") || StartsWithWord(s, "XA START");
}

bool IsXaPrepareStatement(std::string_view sql) { return StartsWithWord(TrimLeading(sql), "XA PREPARE"); }

}  // namespace

TransactionBuffer::TransactionBuffer(TransactionSink* sink, TransactionBufferOptions options)
    : sink_(sink), options_(options) {}

TransactionBuffer::~TransactionBuffer() = default;

bool TransactionBuffer::in_transaction() const { return state_ != State::kIdle; }

void TransactionBuffer::ResetTo(const ResumePoint& point) {
  resume_ = point;
  state_ = State::kIdle;
  txn_.piece_index = 0;
  Recycle();
  skipping_ = point.skip_until != 0;
  skip_until_ = point.skip_until;
}

std::string_view TransactionBuffer::Copy(std::string_view bytes) {
  if (bytes.empty()) return {};
  txn_bytes_ += bytes.size();
  while (chunk_index_ < chunks_.size() && chunks_[chunk_index_].size - chunks_[chunk_index_].used < bytes.size()) {
    // A big event never shares a chunk's tail; move on.
    if (chunks_[chunk_index_].used == 0 && chunks_[chunk_index_].size < bytes.size()) break;
    ++chunk_index_;
  }
  if (chunk_index_ == chunks_.size() || chunks_[chunk_index_].size - chunks_[chunk_index_].used < bytes.size()) {
    Chunk c;
    c.size = std::max(ChunkSize(), bytes.size());
    // Not zeroed: only the bytes copied in become resident.
    c.data = std::make_unique_for_overwrite<char[]>(c.size);
    if (chunk_index_ < chunks_.size()) {
      // The chunk here is too small for this event: replace it with a big one.
      chunks_[chunk_index_] = std::move(c);
    } else {
      chunks_.push_back(std::move(c));
    }
  }
  Chunk& c = chunks_[chunk_index_];
  char* dst = c.data.get() + c.used;
  std::memcpy(dst, bytes.data(), bytes.size());
  c.used += bytes.size();
  return std::string_view(dst, bytes.size());
}

TxEvent* TransactionBuffer::Append(TxEventKind kind, const binlog::Event& event, uint64_t offset, uint64_t end_offset) {
  if (skipping_ && end_offset <= skip_until_) {
    ++skipped_events_;
    return nullptr;
  }
  skipping_ = false;
  TxEvent& e = txn_.events.emplace_back();
  e = TxEvent{};
  e.kind = kind;
  e.offset = offset;
  e.end_offset = end_offset;
  e.timestamp = event.header.timestamp;
  e.server_id = event.header.server_id;
  return &e;
}

Status TransactionBuffer::OpenGroup(const binlog::Event& event, std::string_view file, uint64_t offset,
                                    std::string_view gtid, const binlog::MariaGtidEvent* maria,
                                    const binlog::GtidEvent* mysql) {
  if (skipping_ && offset != resume_.position) {
    return Status::Corruption("binlog " + std::string(file) + ": resuming inside the transaction at " +
                              std::to_string(resume_.position) + " but the stream's first transaction starts at " +
                              std::to_string(offset));
  }
  txn_.file.assign(file);
  txn_.begin_offset = offset;
  txn_.end_offset = offset;
  txn_.gtid.assign(gtid);  // (its buffer kept from one transaction to the next)
  txn_.server_id = event.header.server_id;
  txn_.timestamp = event.header.timestamp;
  txn_.piece_index = skipping_ ? 1 : 0;
  txn_.last_piece = true;
  txn_.events.clear();
  txn_bytes_ = 0;
  state_ = State::kGroupOpened;
  gtid_kind_ = GtidKind::kNone;
  if (maria != nullptr) {
    gtid_kind_ = GtidKind::kMariadb;
    gtid_domain_ = maria->domain_id;
    gtid_server_ = maria->server_id;
    gtid_seq_ = maria->seq_no;
  } else if (mysql != nullptr) {
    if (mysql->anonymous) {
      // No set describes a stream with anonymous transactions (gtid_mode below ON).
      if (gtid_state_.known()) gtid_state_.Reset();
    } else {
      gtid_kind_ = GtidKind::kMysql;
      gtid_sid_ = mysql->sid;
      gtid_tag_.assign(mysql->tag);
      gtid_gno_ = mysql->gno;
    }
  }
  // Each transaction carries the exact state before it (gtid_state.h); a group without a
  // GTID leaves the state as it is.
  SetGtidBase(gtid_state_.Base());
  return Status::OK();
}

void TransactionBuffer::SetGtidBase(const std::shared_ptr<const std::string>& base) {
  if (txn_.gtid_base != base) txn_.gtid_base = base;  // (a copy is two atomic operations)
}

Status TransactionBuffer::Deliver(bool last_piece, uint64_t end_offset) {
  txn_.end_offset = end_offset;
  txn_.last_piece = last_piece;
  Status s = sink_->OnTransaction(txn_);
  if (!s.ok()) return s.WithContext("transaction at " + txn_.file + ":" + std::to_string(txn_.begin_offset));
  ++pieces_;
  if (last_piece) {
    if (gtid_kind_ == GtidKind::kMariadb) {
      gtid_state_.Delivered(gtid_domain_, gtid_server_, gtid_seq_);
    } else if (gtid_kind_ == GtidKind::kMysql) {
      gtid_state_.DeliveredMysql(gtid_sid_, gtid_tag_, gtid_gno_);
    }
    ++transactions_;
    resume_.file = txn_.file;
    resume_.position = end_offset;
    resume_.skip_until = 0;
    resume_.gtid = txn_.gtid;
    resume_.timestamp = txn_.timestamp;
    state_ = State::kIdle;
    txn_.piece_index = 0;
  } else {
    resume_.file = txn_.file;
    resume_.position = txn_.begin_offset;
    resume_.skip_until = end_offset;
    ++txn_.piece_index;
  }
  Recycle();
  return Status::OK();
}

size_t TransactionBuffer::SharedLimit() const {
  return options_.shared_max_bytes == nullptr
             ? kNoSharedLimit
             : static_cast<size_t>(options_.shared_max_bytes->load(std::memory_order_relaxed));
}

size_t TransactionBuffer::ChunkSize() const {
  // A quarter of the shared limit (a power of two), so that chunks never hold
  // much more than the piece's bytes.
  const size_t shared = SharedLimit();
  if (shared / 4 >= kChunkSize) return kChunkSize;
  return std::clamp(std::bit_floor(shared / 4), kMinChunkSize, kChunkSize);
}

void TransactionBuffer::Recycle() {
  txn_.events.clear();
  // A compressed payload is never cut, so one piece may hold far more events
  // than max_events: give such a list back rather than keep it for good (and
  // one larger than the shared limit too).
  if (txn_.events.capacity() > 2 * options_.max_events ||
      txn_.events.capacity() * sizeof(TxEvent) > SharedLimit()) {
    txn_.events.shrink_to_fit();
  }
  txn_bytes_ = 0;
  chunk_index_ = 0;
  // Keep what a full piece needs (max_bytes, or half the shared limit, of
  // standard chunks, plus the one the cut happens in); an oversized chunk
  // made for one big value goes back at once, so a 64 MiB row costs 64 MiB
  // only while it is in the buffer (as does a chunk of a size the shared
  // limit no longer gives).
  const size_t chunk = ChunkSize();
  const size_t keep = std::min(options_.max_bytes, SharedLimit() / 2) / chunk + 1;
  std::erase_if(chunks_, [chunk](const Chunk& c) { return c.size != chunk; });
  if (chunks_.size() > keep) chunks_.resize(keep);
  for (Chunk& c : chunks_) c.used = 0;
}

size_t TransactionBuffer::retained_bytes() const {
  size_t total = txn_.events.capacity() * sizeof(TxEvent);
  for (const Chunk& c : chunks_) total += c.size;
  return total;
}

Status TransactionBuffer::MaybeCut(uint64_t next_offset) {
  if (txn_.events.empty()) return Status::OK();
  // Under a shared limit the piece's events count too, and the cut comes at
  // half of it: the chunks' last one and the list's growth take the rest.
  if (txn_.events.size() < options_.max_events && txn_bytes_ < options_.max_bytes &&
      (options_.shared_max_bytes == nullptr ||
       txn_bytes_ + txn_.events.size() * sizeof(TxEvent) < SharedLimit() / 2)) {
    return Status::OK();
  }
  const TxEvent& last = txn_.events.back();
  // Events inside one compressed payload share its offsets: never cut between them,
  // or a resume could not tell the delivered ones from the rest.
  if (next_offset == last.offset) return Status::OK();
  return Deliver(false, last.end_offset);
}

Status TransactionBuffer::Add(const binlog::Event& event, const binlog::EventDecoder& decoder, std::string_view file,
                              uint64_t offset, uint64_t end_offset) {
  // A new group while one is still open means the old one has no COMMIT in the
  // binlog (a server that crashed mid-write and did not truncate): hand over
  // what it had rather than lose it or glue it to the next.
  auto close_open_group = [&]() -> Status {
    if (state_ == State::kInTransaction && !txn_.events.empty()) {
      return Deliver(true, txn_.events.back().end_offset);
    }
    state_ = State::kIdle;
    return Status::OK();
  };

  if (const auto* g = event.As<binlog::GtidEvent>()) {
    CANAL_RETURN_IF_ERROR(close_open_group());
    return OpenGroup(event, file, offset, g->anonymous ? std::string() : g->ToString(), nullptr, g);
  }
  if (const auto* g = event.As<binlog::MariaGtidEvent>()) {
    CANAL_RETURN_IF_ERROR(close_open_group());
    char gtid[binlog::MariaGtidEvent::kTextMax];
    CANAL_RETURN_IF_ERROR(OpenGroup(event, file, offset, std::string_view(gtid, g->WriteText(gtid) - gtid), g));
    if (!g->standalone()) {
      state_ = State::kInTransaction;
      if (TxEvent* e = Append(TxEventKind::kBegin, event, offset, end_offset)) e->sql = "BEGIN";
    }
    return Status::OK();
  }
  if (const auto* q = event.As<binlog::QueryEvent>()) {
    const std::string_view sql = q->query;
    if (IsBegin(sql) && state_ != State::kInTransaction) {
      if (state_ == State::kIdle) CANAL_RETURN_IF_ERROR(OpenGroup(event, file, offset, ""));
      state_ = State::kInTransaction;
      if (TxEvent* e = Append(TxEventKind::kBegin, event, offset, end_offset)) {
        e->thread_id = q->thread_id;
        e->sql = Copy(sql);
      }
      return Status::OK();
    }
    if (state_ == State::kInTransaction) {
      const bool ends = IsExactly(sql, "COMMIT") || IsExactly(sql, "ROLLBACK") || IsXaPrepareStatement(sql);
      CANAL_RETURN_IF_ERROR(MaybeCut(offset));
      if (TxEvent* e = Append(ends ? TxEventKind::kCommit : TxEventKind::kQuery, event, offset, end_offset)) {
        e->thread_id = q->thread_id;
        e->db = Copy(q->db);
        e->sql = Copy(sql);
      }
      // MariaDB opens a transaction with its GTID event, which names no
      // thread: the BEGIN takes the thread id of the transaction's first
      // QUERY event (a statement, or the COMMIT of a non-transactional
      // change) when the server writes one.
      if (!txn_.events.empty() && txn_.events.front().kind == TxEventKind::kBegin &&
          txn_.events.front().thread_id == 0) {
        txn_.events.front().thread_id = q->thread_id;
      }
      return ends ? Deliver(true, end_offset) : Status::OK();
    }
    // The commit statement a Canal cursor may name (see the XID case below).
    if (state_ == State::kIdle && !resume_.empty() && offset == resume_.position && !skipping_ &&
        IsExactly(sql, "COMMIT")) {
      return Status::OK();
    }
    // A statement of its own (DDL, or anything logged outside BEGIN/COMMIT).
    if (state_ == State::kIdle) CANAL_RETURN_IF_ERROR(OpenGroup(event, file, offset, ""));
    if (TxEvent* e = Append(TxEventKind::kQuery, event, offset, end_offset)) {
      e->thread_id = q->thread_id;
      e->db = Copy(q->db);
      e->sql = Copy(sql);
    }
    return Deliver(true, end_offset);
  }
  if (const auto* rows = event.As<binlog::RowsEvent>()) {
    if (state_ == State::kIdle) CANAL_RETURN_IF_ERROR(OpenGroup(event, file, offset, ""));
    state_ = State::kInTransaction;
    CANAL_RETURN_IF_ERROR(MaybeCut(offset));
    if (TxEvent* e = Append(TxEventKind::kRows, event, offset, end_offset)) {
      e->rows = *rows;
      e->rows.columns_before = Copy(rows->columns_before);
      e->rows.columns_after = Copy(rows->columns_after);
      e->rows.rows = Copy(rows->rows);
      e->table = decoder.ShareTable(rows->table_id);
      if (e->table == nullptr) {
        return Status::Corruption("binlog " + std::string(file) + " at " + std::to_string(offset) +
                                  ": rows event for table id " + std::to_string(rows->table_id) +
                                  " that no TABLE_MAP announced");
      }
      e->rows.table = e->table.get();
      e->rows.source = txn_.file;
    }
    return Status::OK();
  }
  if (const auto* xid = event.As<binlog::XidEvent>()) {
    // A cursor written by Canal names the commit event of the last transaction
    // its client acked; a stream resumed there starts with that event: skip it.
    if (state_ == State::kIdle && !resume_.empty() && offset == resume_.position && !skipping_) return Status::OK();
    if (state_ != State::kInTransaction) {
      return Status::Corruption("binlog " + std::string(file) + " at " + std::to_string(offset) +
                                ": XID event outside a transaction");
    }
    CANAL_RETURN_IF_ERROR(MaybeCut(offset));
    if (TxEvent* e = Append(TxEventKind::kCommit, event, offset, end_offset)) {
      e->has_xid = true;
      e->xid = xid->xid;
    }
    return Deliver(true, end_offset);
  }
  if (event.As<binlog::XaPrepareEvent>() != nullptr) {
    if (state_ != State::kInTransaction) return Status::OK();
    CANAL_RETURN_IF_ERROR(MaybeCut(offset));
    if (TxEvent* e = Append(TxEventKind::kCommit, event, offset, end_offset)) e->sql = "XA PREPARE";
    return Deliver(true, end_offset);
  }
  if (const auto* list = event.As<binlog::MariaGtidListEvent>(); list != nullptr && state_ == State::kIdle) {
    // The state at the start of a binlog file (or the one a GTID start asked for).
    binlog::GtidSet state;
    for (const binlog::MariaGtidListEvent::Entry& g : list->gtids) {
      if (!state.AddMariadb(g.domain_id, g.server_id, g.seq_no).ok()) return Status::OK();
    }
    gtid_state_.OnGtidList(state);
    return Status::OK();
  }
  if (const auto* prev = event.As<binlog::PreviousGtidsEvent>(); prev != nullptr && state_ == State::kIdle) {
    // MySQL: every transaction executed before this binlog file.
    gtid_state_.OnGtidList(binlog::GtidSet::FromPreviousGtids(*prev));
    return Status::OK();
  }
  // TABLE_MAP, FORMAT_DESCRIPTION, ROTATE, heartbeats, annotations, INTVAR and the
  // like carry nothing a transaction's consumer needs beyond what the decoder kept.
  return Status::OK();
}

}  // namespace canal::parser
