// Connector: one client connection to a Canal server (ours or Alibaba Canal 1.1.x).
//
//   canal::client::ConnectorOptions o;
//   o.address = "127.0.0.1:11111";
//   o.destination = "example";
//   canal::client::Connector c(o);
//   CANAL_RETURN_IF_ERROR(c.Connect());
//   CANAL_RETURN_IF_ERROR(c.Subscribe());            // "" keeps the server's table filter
//   while (running) {
//     canal::client::Message m;
//     CANAL_RETURN_IF_ERROR(c.GetWithoutAck(1000, 1, canal::client::TimeUnit::kSeconds, &m));
//     if (m.batch_id() == -1) continue;              // nothing new within the wait
//     if (Process(m.entries()).ok()) c.Ack(m.batch_id()); else c.Rollback(m.batch_id());
//   }
//
// Errors are Status values; none of these calls throws. Their codes:
//   IOError          no connection (never connected, lost, or closed by us after
//                    an error that left the stream out of step), a socket error,
//                    or a reply that did not arrive in time. Reconnect.
//   Aborted          the server answered with an error Ack. Its code is the
//                    Status's subcode (ServerErrorCode(); proto::WireError:
//                    400 general, 401 destination or client id missing, 402
//                    batch id missing, 403 authentication failed, 404 no such
//                    destination, 409 an ack that was not applied
//                    (IsAckNotApplied()), 412 not subscribed, 423 subscribed by
//                    another client, 503 destination not serving). The message
//                    holds "server error <code>: <server's text>" for people;
//                    decide on the code, never the text.
//   Corruption       the server sent bytes that are not Canal's protocol (bad
//                    frame length, unparsable packet, unexpected packet type).
//   NotSupported     handshake version other than 1, or a compressed packet.
//   InvalidArgument  unusable options (address without a port, no destination).
// IOError, Corruption and NotSupported close the connection.
//
// Ack and Rollback are not answered when they succeed; a failure arrives as an
// error Ack before the reply to the NEXT request. That next call (whatever it
// is) returns the error as Aborted, saying which earlier ack or rollback it is
// about. If the error was already waiting when the call began, nothing else was
// sent and the connection stays usable. If it arrived as the answer to the
// request just sent, the request's own reply may or may not follow, so the
// connection is closed: Connect() and Subscribe() again (the server redelivers
// unacknowledged batches; Subscribe rolls back what this client still held).
//
// Reconnecting is the caller's job: after an IOError, call Connect() and
// Subscribe() again (examples/simple_client.cpp shows the loop).
//
// Threads: every public method takes one mutex for its whole exchange, so a
// Connector can be shared; calls are served one at a time, in lock order. A
// GetWithoutAck that waits on the server holds the mutex for that wait, so
// another thread's Ack waits too: size the get timeout accordingly.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "canal/client/canal_connector.h"
#include "canal/client/message.h"
#include "canal/client/packet_frame.h"
#include "canal/common/status.h"
#include "canal/proto/wire_error.h"

namespace canal::client {

namespace detail {
class Socket;
}

// TLS to a server whose client port has it (canal.tls.enabled; docs/client.md,
// "TLS"). Off, the default: plain TCP, as Canal's own clients speak.
struct TlsOptions {
  bool enabled = false;
  // PEM CA certificates the server's certificate must chain to; "" = the
  // system's store.
  std::string ca_file;
  // This client's certificate and key (PEM), for a server that requires
  // client certificates (canal.tls.clientCa). Both or neither.
  std::string cert_file;
  std::string key_file;
  // The name (or IP address) the server's certificate must hold, also sent
  // as SNI when it is a name; "" = the host of ConnectorOptions::address.
  std::string server_name;
  // false accepts any server certificate: encryption without knowing who
  // answers (a test setup; never across a network you do not trust).
  bool verify = true;
};

struct ConnectorOptions {
  std::string address;      // "host:port" of the Canal server (host may be a name or [IPv6])
  std::string destination;  // the Canal instance ("example")
  std::string username;     // canal.user on the server ("" when the server sets none)
  std::string password;     // sent scrambled with the handshake seed; "" sends no token
  std::string client_id = "1001";  // Canal's clients always say 1001
  // Sent as net_read_timeout/net_write_timeout: the server ends the session
  // after this long without a request (Canal's Java client sends one hour).
  std::chrono::milliseconds idle_timeout{3'600'000};
  // How long a reply may take beyond the wait the request itself asks for.
  std::chrono::milliseconds read_timeout{60'000};
  std::chrono::milliseconds connect_timeout{10'000};
  // A frame from the server declaring more bytes than this is refused before
  // anything is allocated, and the connection is closed (Corruption naming
  // the options to raise). The default is the largest frame a server sends
  // (2^31 - 1, what a Java client can read), so a row of MySQL's largest
  // size (1 GiB) arrives; lower it to bound this client's memory.
  uint32_t max_frame_bytes = 0x7fffffffu;
  // Low-latency GET: a get that waits (timeout >= 0) returns as soon as any
  // entry is there instead of waiting for a full batch (a MEMSIZE batch of a
  // trickle of changes otherwise waits out the whole timeout). Our server
  // only; Canal's ignores it (docs/client.md).
  bool low_latency_get = false;
  // Prefetch: when a get returns a batch, the next GET (same size and wait)
  // is sent at once, so the server builds and writes the next batch while the
  // caller processes this one, and the next get only reads its reply (a get
  // with other parameters is answered by it too: its batch is the next one).
  // The server then holds one more unacked batch. Acks keep their meaning
  // (oldest first); a refused ack is reported by the get after next. After a
  // Rollback the prefetched reply is read and dropped by the next call that
  // reads (its batch comes again); Subscribe and Unsubscribe read and drop it
  // first. That read waits for the server's answer to the prefetched GET:
  // up to its timeout when no entries come. Off by default (Canal's clients
  // send one request at a time); canal-cli turns it on (--no-prefetch).
  bool prefetch = false;
  // TLS (off by default). The TCP connection and the TLS handshake together
  // get connect_timeout. A refused certificate is an IOError saying why
  // ("TLS handshake with 127.0.0.1:11111 failed: server certificate:
  // certificate has expired"); bad files are InvalidArgument.
  TlsOptions tls;
};

class Connector final : public CanalConnector {
 public:
  explicit Connector(ConnectorOptions options);
  // Closes the socket (no Unsubscribe: the server keeps this client's cursor).
  ~Connector() override;
  Connector(const Connector&) = delete;
  Connector& operator=(const Connector&) = delete;

  // Opens the TCP connection (TCP_NODELAY, keep-alive; then TLS when
  // options.tls.enabled), checks the handshake
  // (packet version 1) and authenticates. A connected Connector closes its old
  // connection first, so this is also "reconnect".
  Status Connect() override;

  // Sends CLIENTROLLBACK of batch 0 (drops batches this client id left
  // unacknowledged, as Canal's Java client does) and then SUBSCRIPTION. A
  // non-empty `filter` (Canal's regex list, "schema\\.table,...") replaces the
  // destination's table filter; "" keeps it. A refusal (unknown destination,
  // another client subscribed, ...) closes the connection: Canal may answer
  // the rollback with the same error, so the stream holds an unknown number of
  // replies. Connect() again to retry.
  Status Subscribe(std::string_view filter) override;
  Status Subscribe() override { return Subscribe(""); }

  // Ends the subscription. On Canal this also forgets the client's cursor; to
  // resume later from where you stopped, just Disconnect().
  Status Unsubscribe() override;

  // Get / GetWithoutAck (canal_connector.h): the server returns what it has at
  // once (no timeout form), waits up to `timeout` for more (timeout > 0), or
  // waits until a full batch exists (timeout == 0). A unit outside TimeUnit is
  // InvalidArgument.

  // Confirms a batch: the server may drop it. Batches must be acked oldest
  // first. Not answered by the server: a failure is reported by the next call.
  Status Ack(int64_t batch_id) override;

  // Rollback() gives back every unacknowledged batch; Rollback(id) gives back
  // that one. The server sends them again on later gets. Not answered by the
  // server: a failure is reported by the next call.
  Status Rollback() override;
  Status Rollback(int64_t batch_id) override;

  // Closes the socket. Safe to call when not connected.
  void Disconnect() override;

  bool connected() const override;
  const ConnectorOptions& options() const { return options_; }

 private:
  using Socket = detail::Socket;
  // A reply's Packet, its body a view into frame_buf_ (valid until the next read).
  using Packet = PacketFrame;

  Status EnsureConnected(std::string_view doing) const;
  Status ConnectLocked();
  Status Fetch(int32_t batch_size, const Wait* wait, bool ack, Message* out) override;
  // Sends the CLIENTACK and the GET in one write.
  Status AckThenFetch(int64_t ack_batch_id, int32_t batch_size, const Wait* wait, Message* out) override;
  Status GetLocked(int32_t batch_size, const Wait* get_wait, int64_t ack_first, Message* out);
  // A GET as sent: its parameters, what it is called in errors, and how long
  // its reply may take.
  struct SentGet {
    int32_t size = 0;
    bool has_timeout = false;
    int64_t timeout = -1;
    TimeUnit unit = TimeUnit::kMilliseconds;
    std::string doing;
    std::chrono::milliseconds wait{0};
    // How many of unanswered_ were sent before this GET: an error Ack read
    // before its reply belongs to them, the later ones stay unanswered.
    size_t earlier = 0;
    // A rollback was sent after it: its reply is dropped, never returned.
    bool rolled_back = false;
  };
  SentGet DescribeGet(int32_t size, const Wait* get_wait) const;
  // Appends the GET frame of `get` to *frames.
  void AppendGet(const SentGet& get, std::string* frames) const;
  // Reads the reply to `get` into *out (the buffer `spare` becomes the next
  // frame's).
  Status ReadGetReply(const SentGet& get, std::string spare, Message* out);
  // options_.prefetch: sends the GET for the batch after `got` (none after an
  // empty batch) and keeps it as prefetched_.
  Status SendGetAhead(int32_t size, const Wait* get_wait, const Message& got);
  // Reads and drops the prefetched GET's reply, if one is due.
  Status DropPrefetch(std::string_view doing);
  Status SendFireAndForget(int type, const std::string& body, std::string what);
  Status SendPacket(int type, const std::string& body, std::string_view doing);
  Status SendFrames(const std::string& frames, std::string_view doing);
  Status ReadPacket(std::chrono::milliseconds wait, std::string_view doing, Packet* out);
  // `earlier`: how many of unanswered_ were sent before the request whose
  // reply this is (SentGet::earlier); by default all of them.
  Status ReadReply(std::chrono::milliseconds wait, std::string_view doing, Packet* out,
                   size_t earlier = static_cast<size_t>(-1));
  Status AckLocked(int64_t batch_id);
  std::string AckBody(int64_t batch_id) const;  // a serialised ClientAck
  Status CheckEarlierFailures(std::string_view doing);
  Status ReplyIsAck(const Packet& p, std::string_view doing);
  Status FailConnection(Status s);
  std::string Where() const;

  const ConnectorOptions options_;
  mutable std::mutex mu_;
  std::unique_ptr<Socket> socket_;
  // Acks and rollbacks sent since the last reply, oldest first ("ack of batch 5"):
  // an error Ack read before the next reply belongs to the first of them.
  std::deque<std::string> unanswered_;
  // The frame being read. A MESSAGES frame's buffer moves into the Message
  // and the caller's previous Message gives its buffer back here, so a caller
  // that reuses its Message reads a steady stream of large batches with no
  // fresh (page-faulting) buffer per frame.
  std::string frame_buf_;
  // options_.prefetch: the GET sent ahead whose reply is not read yet.
  std::optional<SentGet> prefetched_;
};

// The server's error code (proto::WireError) carried by a Status from this
// SDK (its subcode), or 0 when the error did not come from the server.
int ServerErrorCode(const Status& status);

// Error 409 (ours, docs/protocol.md): the server did not apply an ack (it
// stopped serving the destination, e.g. fenced after a freeze) and the batch
// will be delivered again. Reconnect (to the active server), subscribe, and
// get: treat the batch as not done.
inline constexpr int kErrorAckNotApplied = proto::Code(proto::WireError::kAckNotApplied);
bool IsAckNotApplied(const Status& status);

// Error 507 (ours): the server applied earlier acks but could not make them
// durable (its disk or ZooKeeper failed); it closes the connection. Reconnect
// and go on: the batches after the last durable cursor may come again.
inline constexpr int kErrorAcksNotDurable = proto::Code(proto::WireError::kAcksNotDurable);
bool IsAcksNotDurable(const Status& status);

}  // namespace canal::client
