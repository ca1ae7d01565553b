#include "canal/client/connector.h"

#include <algorithm>
#include <limits>

#include "canal/client/packet_frame.h"
#include "canal/packet.pb.h"
#include "canal/proto/password_scramble.h"
#include "client_socket.h"

namespace canal::client {

namespace proto = canal::protocol;
using Clock = std::chrono::steady_clock;

namespace {

constexpr Clock::time_point kNoDeadline = Clock::time_point::max();

Clock::time_point DeadlineAfter(std::chrono::milliseconds wait) {
  const auto now = Clock::now();
  if (wait.count() < 0 || wait >= std::chrono::duration_cast<std::chrono::milliseconds>(kNoDeadline - now)) {
    return kNoDeadline;
  }
  return now + wait;
}

std::string PacketTypeName(int type) {
  if (type != proto::PACKET_TYPE_PLACEHOLDER && proto::PacketType_IsValid(type)) {
    return proto::PacketType_Name(static_cast<proto::PacketType>(type));
  }
  return "UNKNOWN(" + std::to_string(type) + ")";
}

// Converts a get's timeout to a wait, saturating instead of overflowing.
std::chrono::milliseconds TimeoutAsMillis(int64_t timeout, TimeUnit unit) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  switch (unit) {
    case TimeUnit::kNanoseconds: return std::chrono::milliseconds((timeout + 999'999) / 1'000'000);
    case TimeUnit::kMicroseconds: return std::chrono::milliseconds((timeout + 999) / 1000);
    case TimeUnit::kMilliseconds: return std::chrono::milliseconds(timeout);
    case TimeUnit::kSeconds: return std::chrono::milliseconds(timeout > kMax / 1000 ? kMax : timeout * 1000);
    case TimeUnit::kMinutes: return std::chrono::milliseconds(timeout > kMax / 60'000 ? kMax : timeout * 60'000);
    case TimeUnit::kHours: return std::chrono::milliseconds(timeout > kMax / 3'600'000 ? kMax : timeout * 3'600'000);
    case TimeUnit::kDays: return std::chrono::milliseconds(timeout > kMax / 86'400'000 ? kMax : timeout * 86'400'000);
  }
  return std::chrono::milliseconds(timeout);
}

std::string ServerError(const proto::Ack& ack) {
  return "server error " + std::to_string(ack.error_code()) + ": " + ack.error_message();
}

// An error Ack as a Status: Aborted, its code the subcode (proto::WireError
// from our server; 400 for nearly everything from Canal's).
Status ServerRefusal(const proto::Ack& ack, std::string_view message) {
  return Status::Aborted(message).WithSubcode(ack.error_code());
}

bool ParseBody(const PacketFrame& p, google::protobuf::MessageLite* body) {
  return body->ParseFromArray(p.body.data(), static_cast<int>(p.body.size()));
}

bool IsErrorAck(const PacketFrame& p, proto::Ack* ack) {
  return p.type == proto::ACK && ParseBody(p, ack) && ack->has_error_code() && ack->error_code() != 0;
}

// Frames of up to this size keep their buffer for the next one; a larger
// buffer is given back once frames four times smaller arrive, so one huge row
// does not pin its memory.
constexpr size_t kKeptFrameBuffer = size_t{64} << 20;

// Makes `buf` at least n bytes long for a frame to be read into, reusing its
// allocation: only growth is zero-filled, and nothing is copied over.
void FitFrameBuffer(std::string* buf, size_t n) {
  if (n <= buf->size()) {
    if (buf->size() > kKeptFrameBuffer && n < buf->size() / 4) std::string(n, '\0').swap(*buf);
    return;
  }
  if (n > buf->capacity()) buf->clear();  // reallocating: the old bytes need no copy
  buf->resize(n);
}

}  // namespace

Connector::Connector(ConnectorOptions options) : options_(std::move(options)) {}

Connector::~Connector() = default;

std::string Connector::Where() const { return "canal server " + options_.address; }

bool Connector::connected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return socket_ != nullptr;
}

void Connector::Disconnect() {
  std::lock_guard<std::mutex> lock(mu_);
  socket_.reset();
  unanswered_.clear();
  prefetched_.reset();
}

Status Connector::FailConnection(Status s) {
  socket_.reset();
  unanswered_.clear();
  prefetched_.reset();
  return s;
}

Status Connector::EnsureConnected(std::string_view doing) const {
  if (socket_) return Status::OK();
  return Status::IOError(Where() + ": not connected while " + std::string(doing) +
                         ": call Connect() (and Subscribe()) first");
}

namespace {

// Appends one request's frame: the length, then a Packet of only type and
// body, as Canal's Java client writes them (magic and version stay absent,
// meaning their defaults).
void AppendFrame(int type, const std::string& body, std::string* frames) {
  proto::Packet p;
  p.set_type(static_cast<proto::PacketType>(type));
  p.set_body(body);
  const std::string bytes = p.SerializeAsString();
  const uint32_t n = static_cast<uint32_t>(bytes.size());
  frames->push_back(static_cast<char>(n >> 24));
  frames->push_back(static_cast<char>(n >> 16));
  frames->push_back(static_cast<char>(n >> 8));
  frames->push_back(static_cast<char>(n));
  *frames += bytes;
}

}  // namespace

Status Connector::SendPacket(int type, const std::string& body, std::string_view doing) {
  std::string frame;
  AppendFrame(type, body, &frame);
  return SendFrames(frame, doing);
}

Status Connector::SendFrames(const std::string& frames, std::string_view doing) {
  Status s = socket_->WriteAll(frames, DeadlineAfter(options_.read_timeout));
  if (!s.ok()) return FailConnection(s.WithContext(Where() + ": " + std::string(doing)));
  return Status::OK();
}

Status Connector::ReadPacket(std::chrono::milliseconds wait, std::string_view doing, Packet* out) {
  const auto deadline = DeadlineAfter(wait);
  const std::string context = Where() + ": " + std::string(doing);
  unsigned char len_bytes[4];
  size_t got = 0;
  Status s = socket_->ReadExact(reinterpret_cast<char*>(len_bytes), 4, deadline, &got);
  if (!s.ok()) {
    if (got > 0) s = Status::IOError(std::string(s.message()) + " inside a frame header");
    return FailConnection(s.WithContext(context));
  }
  const uint32_t len = (uint32_t{len_bytes[0]} << 24) | (uint32_t{len_bytes[1]} << 16) |
                       (uint32_t{len_bytes[2]} << 8) | uint32_t{len_bytes[3]};
  if (len == 0) return FailConnection(Status::Corruption(context + ": frame of length 0"));
  if (len > options_.max_frame_bytes) {
    return FailConnection(Status::Corruption(context + ": frame of " + std::to_string(len) +
                                             " bytes exceeds this client's limit of " +
                                             std::to_string(options_.max_frame_bytes) +
                                             " bytes; connection closed (raise ConnectorOptions::max_frame_bytes, "
                                             "canal-cli --max-frame-bytes, simple_client CANAL_MAX_FRAME_BYTES; "
                                             "fetching again gets the same batch)"));
  }
  FitFrameBuffer(&frame_buf_, len);
  s = socket_->ReadExact(frame_buf_.data(), len, deadline, &got);
  if (!s.ok()) {
    return FailConnection(Status::IOError(context + ": " + std::string(s.message()) + " after " + std::to_string(got) +
                                          " of " + std::to_string(len) + " bytes of a frame"));
  }
  // Read in place: the body stays in frame_buf_ (no copy of a batch).
  s = PacketFrame::Parse(std::string_view(frame_buf_.data(), len), out);
  if (!s.ok()) {
    return FailConnection(Status::Corruption(context + ": a frame of " + std::to_string(len) +
                                             " bytes is not a canal Packet: " + std::string(s.message())));
  }
  if (out->has_compression && out->compression != proto::NONE && out->compression != proto::COMPRESSION_PLACEHOLDER) {
    return FailConnection(Status::NotSupported(context + ": packet compressed with " +
                                               std::to_string(out->compression) +
                                               "; this client reads uncompressed packets only"));
  }
  return Status::OK();
}

Status Connector::CheckEarlierFailures(std::string_view doing) {
  // A failed ack/rollback may already be answered: take that error now, before
  // sending anything, so the stream stays in step.
  while (!unanswered_.empty() && socket_->Readable()) {
    Packet p;
    CANAL_RETURN_IF_ERROR(ReadPacket(options_.read_timeout, "reading the server's answer to the " + unanswered_.front(), &p));
    proto::Ack ack;
    if (IsErrorAck(p, &ack)) {
      const std::string what = std::move(unanswered_.front());
      unanswered_.pop_front();
      return ServerRefusal(ack, Where() + ": the earlier " + what + " failed: " + ServerError(ack) +
                             " (reported before " + std::string(doing) + ", which was therefore not sent)");
    }
    if (p.type != proto::ACK) {
      return FailConnection(Status::Corruption(Where() + ": unexpected " + PacketTypeName(p.type) +
                                               " packet while no request was outstanding"));
    }
    unanswered_.pop_front();  // an explicit success Ack: Canal sends none, tolerate it
  }
  return Status::OK();
}

// Sends an ack or rollback; the server answers only a failure, later.
Status Connector::SendFireAndForget(int type, const std::string& body, std::string what) {
  CANAL_RETURN_IF_ERROR(EnsureConnected(what));
  // (With a prefetched GET's reply due, the next bytes are that reply: an
  // earlier failure is read with it, by the next get.)
  if (!prefetched_) CANAL_RETURN_IF_ERROR(CheckEarlierFailures(what));
  CANAL_RETURN_IF_ERROR(SendPacket(type, body, "sending the " + what));
  unanswered_.push_back(std::move(what));
  return Status::OK();
}

Status Connector::ReplyIsAck(const Packet& p, std::string_view doing) {
  if (p.type != proto::ACK) {
    return FailConnection(Status::Corruption(Where() + ": " + std::string(doing) + ": expected an ACK packet, got " +
                                             PacketTypeName(p.type)));
  }
  proto::Ack ack;
  if (!ParseBody(p, &ack)) {
    return FailConnection(Status::Corruption(Where() + ": " + std::string(doing) + ": unparsable Ack body"));
  }
  if (ack.has_error_code() && ack.error_code() != 0) {
    return ServerRefusal(ack, Where() + ": " + std::string(doing) + " refused: " + ServerError(ack));
  }
  return Status::OK();
}

Status Connector::Connect() {
  std::lock_guard<std::mutex> lock(mu_);
  return ConnectLocked();
}

Status Connector::ConnectLocked() {
  socket_.reset();
  unanswered_.clear();
  prefetched_.reset();
  if (options_.destination.empty()) {
    return Status::InvalidArgument(Where() + ": no destination (ConnectorOptions::destination names the instance)");
  }
  CANAL_RETURN_IF_ERROR(Socket::Open(options_.address, options_.connect_timeout, options_.tls, &socket_));

  Packet p;
  Status read = ReadPacket(options_.read_timeout, "reading the handshake", &p);
  if (!read.ok() && read.code() == Status::Code::kIOError && !options_.tls.enabled) {
    // A TLS port waits for a TLS client and closes the connection after its login timeout.
    return Status::IOError(std::string(read.message()) +
                           " (if the server has canal.tls.enabled = true, connect with TLS: "
                           "ConnectorOptions::tls.enabled, canal-cli --tls)");
  }
  CANAL_RETURN_IF_ERROR(read);
  if (p.type != proto::HANDSHAKE) {
    return FailConnection(Status::Corruption(Where() + ": expected a HANDSHAKE packet first, got " +
                                             PacketTypeName(p.type) + "; is this a Canal server port?"));
  }
  if (p.has_version && p.version != 1) {
    return FailConnection(Status::NotSupported(Where() + ": handshake packet version " +
                                               std::to_string(p.version) + "; this client speaks version 1"));
  }
  proto::Handshake hs;
  if (!ParseBody(p, &hs)) {
    return FailConnection(Status::Corruption(Where() + ": unparsable Handshake body"));
  }

  proto::ClientAuth auth;
  auth.set_username(options_.username);
  if (!options_.password.empty()) auth.set_password(canal::proto::ScramblePassword(hs.seeds(), options_.password));
  const auto idle_ms = std::min<int64_t>(options_.idle_timeout.count(), std::numeric_limits<int32_t>::max());
  auth.set_net_read_timeout(static_cast<int32_t>(idle_ms));
  auth.set_net_write_timeout(static_cast<int32_t>(idle_ms));
  CANAL_RETURN_IF_ERROR(SendPacket(proto::CLIENTAUTHENTICATION, auth.SerializeAsString(), "sending authentication"));
  const std::string doing = "authentication as user \"" + options_.username + "\"";
  CANAL_RETURN_IF_ERROR(ReadPacket(options_.read_timeout, doing, &p));
  Status s = ReplyIsAck(p, doing);
  if (!s.ok()) {
    socket_.reset();
    if (s.code() != Status::Code::kAborted) return s;
    return Status::Aborted(std::string(s.message()) +
                           " (check username and password against canal.user and canal.passwd on the server)")
        .WithSubcode(s.subcode());
  }
  return Status::OK();
}

Status Connector::Subscribe(std::string_view filter) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string doing = "subscription of client " + options_.client_id + " to destination \"" +
                            options_.destination + "\"";
  CANAL_RETURN_IF_ERROR(EnsureConnected(doing));
  // The rollback below gives back the prefetched batch too.
  CANAL_RETURN_IF_ERROR(DropPrefetch(doing));
  proto::ClientRollback rb;
  rb.set_destination(options_.destination);
  rb.set_client_id(options_.client_id);
  rb.set_batch_id(0);
  CANAL_RETURN_IF_ERROR(SendFireAndForget(proto::CLIENTROLLBACK, rb.SerializeAsString(), "rollback of batch 0"));
  proto::Sub sub;
  sub.set_destination(options_.destination);
  sub.set_client_id(options_.client_id);
  sub.set_filter(std::string(filter));
  CANAL_RETURN_IF_ERROR(SendPacket(proto::SUBSCRIPTION, sub.SerializeAsString(), "sending the " + doing));
  Packet p;
  proto::Ack ack;
  if (unanswered_.size() == 1) {
    // Only our own rollback is unanswered. Canal refuses it for the same
    // reasons as the subscription (unknown or stopped destination), so an
    // error here is the subscription's failure; a second error may follow,
    // hence the close.
    CANAL_RETURN_IF_ERROR(ReadPacket(options_.read_timeout, "waiting for the reply to the " + doing, &p));
    unanswered_.clear();
    if (IsErrorAck(p, &ack)) {
      return FailConnection(ServerRefusal(ack, Where() + ": " + doing + " refused: " + ServerError(ack) +
                                            " (connection closed: Canal may answer the rollback that precedes a "
                                            "subscription with the same error; Connect() again to retry)"));
    }
  } else {
    CANAL_RETURN_IF_ERROR(ReadReply(options_.read_timeout, doing, &p));
  }
  return ReplyIsAck(p, doing);
}

Status Connector::Unsubscribe() {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string doing = "unsubscription of client " + options_.client_id + " from destination \"" +
                            options_.destination + "\"";
  CANAL_RETURN_IF_ERROR(EnsureConnected(doing));
  CANAL_RETURN_IF_ERROR(DropPrefetch(doing));
  CANAL_RETURN_IF_ERROR(CheckEarlierFailures(doing));
  proto::Unsub unsub;
  unsub.set_destination(options_.destination);
  unsub.set_client_id(options_.client_id);
  CANAL_RETURN_IF_ERROR(SendPacket(proto::UNSUBSCRIPTION, unsub.SerializeAsString(), "sending the " + doing));
  Packet p;
  CANAL_RETURN_IF_ERROR(ReadReply(options_.read_timeout, doing, &p));
  return ReplyIsAck(p, doing);
}

// Reads the reply to a request. An error Ack while acks or rollbacks sent
// before that request are unanswered belongs to the oldest of them.
Status Connector::ReadReply(std::chrono::milliseconds wait, std::string_view doing, Packet* out, size_t earlier) {
  CANAL_RETURN_IF_ERROR(ReadPacket(wait, "waiting for the reply to the " + std::string(doing), out));
  earlier = std::min(earlier, unanswered_.size());
  proto::Ack ack;
  if (earlier > 0 && IsErrorAck(*out, &ack)) {
    const std::string what = unanswered_.front();
    return FailConnection(ServerRefusal(
        ack, Where() + ": the earlier " + what + " failed: " + ServerError(ack) +
        " (the server reports a failed ack or rollback in answer to the next request, here the " + std::string(doing) +
        "; the connection is closed because that request's own reply can no longer be told apart: Connect() and "
        "Subscribe() again)"));
  }
  // Any other reply means every ack and rollback before it succeeded.
  unanswered_.erase(unanswered_.begin(), unanswered_.begin() + static_cast<std::ptrdiff_t>(earlier));
  return Status::OK();
}

Status Connector::Fetch(int32_t batch_size, const Wait* wait, bool ack, Message* out) {
  std::lock_guard<std::mutex> lock(mu_);
  CANAL_RETURN_IF_ERROR(GetLocked(batch_size, wait, -1, out));
  return ack ? AckLocked(out->batch_id()) : Status::OK();
}

Status Connector::AckThenFetch(int64_t ack_batch_id, int32_t batch_size, const Wait* wait, Message* out) {
  std::lock_guard<std::mutex> lock(mu_);
  return GetLocked(batch_size, wait, ack_batch_id, out);
}

// With ack_first != -1, the CLIENTACK of that batch goes in the same write as
// the GET: one send and one wake-up of the server per batch instead of two.
// With options_.prefetch, the GET was sent when the last batch arrived: this
// call sends the ack alone, reads that GET's reply, then sends the next GET.
Status Connector::GetLocked(int32_t batch_size, const Wait* get_wait, int64_t ack_first, Message* out) {
  // The caller's last batch is done with: its buffer takes the next frame
  // after this one (frame_buf_ and the Message's buffer alternate).
  std::string spare = out->TakeBuffer();
  if (get_wait != nullptr && (static_cast<int32_t>(get_wait->unit) < 0 || static_cast<int32_t>(get_wait->unit) > 6)) {
    return Status::InvalidArgument(Where() + ": get with time unit " +
                                   std::to_string(static_cast<int32_t>(get_wait->unit)) + " (use a TimeUnit value)");
  }
  const int32_t size = batch_size <= 0 ? 1000 : batch_size;
  const auto get_what = [](int32_t n) { return "get of up to " + std::to_string(n) + " entries"; };
  std::string frames;
  std::string ack_what;
  if (ack_first != -1) {
    AppendFrame(proto::CLIENTACK, AckBody(ack_first), &frames);
    ack_what = "ack of batch " + std::to_string(ack_first);
  }
  // A GET sent ahead before a rollback answers nobody: read and drop it.
  if (prefetched_ && prefetched_->rolled_back) CANAL_RETURN_IF_ERROR(DropPrefetch(get_what(size)));
  if (prefetched_) {
    // Answered by the GET sent ahead, whatever this call's parameters (its
    // batch is the next one: reading anything else would skip it). The ack
    // goes first, so the server applies it as soon as it has answered that
    // GET, while this client reads the reply.
    const SentGet ahead = std::move(*prefetched_);
    prefetched_.reset();
    if (ack_first != -1) {
      CANAL_RETURN_IF_ERROR(SendFrames(frames, "sending the " + ack_what));
      // Answered only when it fails, before the reply to the next get.
      unanswered_.push_back(std::move(ack_what));
    }
    CANAL_RETURN_IF_ERROR(ReadGetReply(ahead, std::move(spare), out));
    return SendGetAhead(size, get_wait, *out);
  }
  SentGet get = DescribeGet(size, get_wait);
  CANAL_RETURN_IF_ERROR(EnsureConnected(get.doing));
  CANAL_RETURN_IF_ERROR(CheckEarlierFailures(get.doing));
  AppendGet(get, &frames);
  CANAL_RETURN_IF_ERROR(SendFrames(frames, ack_first != -1 ? "sending the " + ack_what + " and the " + get.doing
                                                           : "sending the " + get.doing));
  // Answered only when it fails, before the get's reply (ReadReply).
  if (ack_first != -1) unanswered_.push_back(std::move(ack_what));
  get.earlier = unanswered_.size();
  CANAL_RETURN_IF_ERROR(ReadGetReply(get, std::move(spare), out));
  return SendGetAhead(size, get_wait, *out);
}

Status Connector::SendGetAhead(int32_t size, const Wait* get_wait, const Message& got) {
  // (After an empty batch nothing is flowing: the next get asks itself.)
  if (!options_.prefetch || got.batch_id() == -1) return Status::OK();
  SentGet next = DescribeGet(size, get_wait);
  next.earlier = unanswered_.size();
  std::string frame;
  AppendGet(next, &frame);
  CANAL_RETURN_IF_ERROR(SendFrames(frame, "sending the next get"));
  prefetched_ = std::move(next);
  return Status::OK();
}

Connector::SentGet Connector::DescribeGet(int32_t size, const Wait* get_wait) const {
  SentGet get;
  get.size = size;
  get.has_timeout = get_wait != nullptr;
  get.timeout = get.has_timeout ? get_wait->timeout : -1;
  get.unit = get.has_timeout ? get_wait->unit : TimeUnit::kMilliseconds;
  get.doing = "get of up to " + std::to_string(size) + " entries from destination \"" + options_.destination + "\"";
  // The server may wait `timeout` before answering; timeout 0 waits for a full
  // batch, however long that takes.
  get.wait = options_.read_timeout;
  if (get.has_timeout && get.timeout == 0) {
    get.wait = std::chrono::milliseconds(-1);
  } else if (get.has_timeout && get.timeout > 0) {
    const auto server_wait = TimeoutAsMillis(get.timeout, get.unit);
    get.wait = server_wait.count() > std::numeric_limits<int64_t>::max() - options_.read_timeout.count()
                   ? std::chrono::milliseconds(-1)
                   : server_wait + options_.read_timeout;
  }
  return get;
}

void Connector::AppendGet(const SentGet& sent, std::string* frames) const {
  proto::Get get;
  get.set_destination(options_.destination);
  get.set_client_id(options_.client_id);
  get.set_fetch_size(sent.size);
  get.set_timeout(sent.timeout);
  get.set_unit(static_cast<int32_t>(sent.unit));
  get.set_auto_ack(false);
  if (options_.low_latency_get) get.set_low_latency(true);
  AppendFrame(proto::GET, get.SerializeAsString(), frames);
}

Status Connector::ReadGetReply(const SentGet& get, std::string spare, Message* out) {
  Packet p;
  CANAL_RETURN_IF_ERROR(ReadReply(get.wait, get.doing, &p, get.earlier));
  if (p.type == proto::ACK) {
    CANAL_RETURN_IF_ERROR(ReplyIsAck(p, get.doing));
    return FailConnection(Status::Corruption(Where() + ": " + get.doing + ": answered by a success Ack, not MESSAGES"));
  }
  if (p.type != proto::MESSAGES) {
    return FailConnection(Status::Corruption(Where() + ": " + get.doing + ": expected a MESSAGES packet, got " +
                                             PacketTypeName(p.type)));
  }
  // The frame's buffer becomes the Message's: the entries are read where the
  // socket put them (no copy of the batch, no string per entry).
  const size_t body_offset = static_cast<size_t>(p.body.data() - frame_buf_.data());
  const size_t body_size = p.body.size();
  Status s = Message::FromMessagesBody(std::move(frame_buf_), body_offset, body_size, out);
  frame_buf_ = std::move(spare);
  if (!s.ok()) {
    return FailConnection(Status::Corruption(Where() + ": " + get.doing + ": " + std::string(s.message())));
  }
  return Status::OK();
}

Status Connector::DropPrefetch(std::string_view doing) {
  if (!prefetched_) return Status::OK();
  const SentGet ahead = std::move(*prefetched_);
  prefetched_.reset();
  Message dropped;
  if (Status s = ReadGetReply(ahead, std::string(), &dropped); !s.ok()) {
    return s.WithContext("before the " + std::string(doing) + ", reading the reply to the get sent ahead");
  }
  frame_buf_ = dropped.TakeBuffer();  // (keeps the buffer for the next frame)
  return Status::OK();
}

Status Connector::Ack(int64_t batch_id) {
  std::lock_guard<std::mutex> lock(mu_);
  return AckLocked(batch_id);
}

std::string Connector::AckBody(int64_t batch_id) const {
  proto::ClientAck ack;
  ack.set_destination(options_.destination);
  ack.set_client_id(options_.client_id);
  ack.set_batch_id(batch_id);
  return ack.SerializeAsString();
}

Status Connector::AckLocked(int64_t batch_id) {
  if (batch_id == -1) return Status::OK();  // an empty batch: the server would ignore it anyway
  return SendFireAndForget(proto::CLIENTACK, AckBody(batch_id), "ack of batch " + std::to_string(batch_id));
}

Status Connector::Rollback() { return Rollback(0); }

Status Connector::Rollback(int64_t batch_id) {
  std::lock_guard<std::mutex> lock(mu_);
  // The prefetched batch is given back with this one (a rollback also gives
  // back every later batch), so its reply must answer no later get. It is
  // read and dropped by the next call that reads, not here: the server answers
  // that GET first, which may take its whole wait when no entries come, and a
  // caller that rolls back and disconnects should not wait for it.
  if (prefetched_) prefetched_->rolled_back = true;
  proto::ClientRollback rb;
  rb.set_destination(options_.destination);
  rb.set_client_id(options_.client_id);
  rb.set_batch_id(batch_id);
  return SendFireAndForget(proto::CLIENTROLLBACK, rb.SerializeAsString(),
                           batch_id == 0 ? "rollback of every unacked batch" : "rollback of batch " + std::to_string(batch_id));
}

bool IsAckNotApplied(const Status& status) {
  return status.code() == Status::Code::kAborted && ServerErrorCode(status) == kErrorAckNotApplied;
}

bool IsAcksNotDurable(const Status& status) {
  return status.code() == Status::Code::kAborted && ServerErrorCode(status) == kErrorAcksNotDurable;
}

int ServerErrorCode(const Status& status) {
  return status.code() == Status::Code::kAborted && status.subcode() > 0 ? status.subcode() : 0;
}

}  // namespace canal::client
