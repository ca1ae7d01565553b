// ClusterConnector (library canal_client_cluster, which adds ZooKeeper to
// canal_client): a CanalConnector (canal_connector.h) that finds the active Canal server and fails
// over to the next one by itself, with Canal's client-side election of one
// active client per client id.
//
//   canal::client::ClusterConnectorOptions o;
//   o.zk_servers = "127.0.0.1:2181";      // or: o.addresses = {"10.0.0.1:11111", "10.0.0.2:11111"};
//   o.destination = "example";
//   canal::client::ClusterConnector c(o);
//   CANAL_RETURN_IF_ERROR(c.Connect());   // with client HA: waits to be the active client
//   CANAL_RETURN_IF_ERROR(c.Subscribe());
//   ... the same loop as with Connector (connector.h) ...
//
// Where it connects. With zk_servers it reads /otter/canal/destinations/{dest}/running
// ({"active":true,"address":"ip:port"}), connects there and keeps a watch on
// the node. With `addresses` it starts at the first and moves to the next on
// failure, wrapping around.
//
// Failover. When a call fails because the server went away (IOError: refused,
// closed, timed out; Corruption) or answered that it does not serve the
// destination ("not active", "does not exist", "is not running", "should
// subscribe first", "already subscribed"), the connector closes that
// connection and, up to RetryPolicy's bounds, finds the server again (re-reads
// the running node, or takes the next address), connects, subscribes again
// with the same filter and rolls back, so every unacked batch comes again.
// Then it retries the call if that is safe:
//   GetWithoutAck, Get's get, Subscribe, Unsubscribe   retried on the new server.
//   Rollback                                           not resent: the reconnect
//                                                      rolled back everything. OK.
//   Ack                                                never resent. The batch was
//     handed out by the old connection, which is gone: the new server delivers it
//     again. Ack returns NotFound ("will be delivered again"): treat the batch as
//     not done and carry on getting. Ack of a batch received before a failover
//     (even one that succeeded) returns the same NotFound without sending.
// An ack sent successfully may still be lost if the server dies before it
// applies it: as in Canal, the batch is then delivered once more. A server
// that refuses an ack it can no longer apply says so with error 409
// (IsAckNotApplied; e.g. a fenced server resumed after a freeze): the call
// that reads it fails over, rolls back and goes on (a get gets again), so the
// caller sees no error, only the batch once more (acks_not_applied() counts). Consumers
// must tolerate a batch seen twice (at-least-once).
// Other errors (authentication refused, a bad filter, NotSupported,
// InvalidArgument) are returned at once. When the budget runs out the call
// returns IOError listing each address tried and why it failed. A changed
// running node also moves the connector to the new server before the next get.
//
// Client HA (ClusterConnectorOptions::client_ha, on by default with
// zk_servers). Connect() first creates the ephemeral node
// /otter/canal/destinations/{dest}/{clientId}/running with
// {"active":true,"address":"<hostname>:<pid>","clientId":1001}. If another
// client holds it, Connect() watches the node and waits (election_wait) until
// it goes, then takes it. Only the holder connects and consumes; it keeps the
// node for its ZooKeeper session. When that session expires (or stays
// disconnected longer than the session timeout, or the node is deleted), the
// connector stops: its connection is closed and every call returns Aborted
// for which IsNotActiveClient() is true, until Connect() wins the election
// again. This is checked as each call starts (a get already waiting on the
// server is not cut short: keep get timeouts below the session timeout).
// Disconnect() closes the session, which frees the node at once.
//
// Threads: public methods hold one mutex for their whole exchange, as in
// Connector. Disconnect() from another thread also ends a Connect() waiting
// for the election or a failover's backoff.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "canal/client/canal_connector.h"
#include "canal/client/connector.h"
#include "canal/client/message.h"
#include "canal/common/status.h"

namespace canal::coord {
class ZkClient;
}

namespace canal::client {

// Bounds of one failover (finding a server and connecting to it again).
struct RetryPolicy {
  int max_attempts = 6;                          // connection attempts, each to one address
  std::chrono::milliseconds initial_backoff{200};  // pause after the first failed attempt
  std::chrono::milliseconds max_backoff{5'000};    // the pause doubles up to this
  std::chrono::milliseconds give_up_after{60'000}; // total time of the attempts of one call
};

struct ClusterConnectorOptions {
  // Exactly one of these two says where the servers are.
  std::string zk_servers;               // "host:port[,host:port...]" (canal.zkServers)
  std::vector<std::string> addresses;   // fixed "host:port" list, tried in order

  std::string destination;
  std::string username;
  std::string password;
  std::string client_id = "1001";
  std::string filter;                   // what Subscribe() (no argument) sends; "" keeps the server's

  RetryPolicy retry;

  // Client HA (zk_servers only): one active client per client id.
  bool client_ha = true;
  // How long Connect() waits for another client's node to go; < 0 waits until
  // it goes or Disconnect() is called. When it runs out Connect() returns
  // Aborted with IsNotActiveClient() true (call it again to keep waiting).
  std::chrono::milliseconds election_wait{-1};
  // The "address" written in the client running node; "" = <hostname>:<pid>.
  std::string client_address;
  int zk_session_timeout_ms = 6'000;

  // Per-connection settings, as in ConnectorOptions.
  std::chrono::milliseconds connect_timeout{10'000};  // also bounds reaching ZooKeeper
  std::chrono::milliseconds read_timeout{60'000};
  std::chrono::milliseconds idle_timeout{3'600'000};
  bool low_latency_get = false;  // ConnectorOptions::low_latency_get
  // ConnectorOptions::tls, for every server; an empty server_name checks
  // each server's certificate against the host it is reached at.
  TlsOptions tls;
};

class ClusterConnector final : public CanalConnector {
 public:
  explicit ClusterConnector(ClusterConnectorOptions options);
  // Disconnect(): closes the connection and the ZooKeeper session.
  ~ClusterConnector() override;
  ClusterConnector(const ClusterConnector&) = delete;
  ClusterConnector& operator=(const ClusterConnector&) = delete;

  // With client HA, waits to become the active client; then finds the server
  // and connects (within the retry policy). Forgets an earlier subscription:
  // call Subscribe() next. InvalidArgument for unusable options.
  Status Connect() override;

  // Subscribe() sends options().filter; Subscribe(filter) sends `filter` and
  // keeps it for every later resubscription.
  Status Subscribe() override;
  Status Subscribe(std::string_view filter) override;
  Status Unsubscribe() override;

  // Get / GetWithoutAck (canal_connector.h). If Get's ack fails, *out still
  // holds the batch and the status is the ack's (NotFound: it will be
  // delivered again).

  Status Ack(int64_t batch_id) override;
  Status Rollback() override;
  Status Rollback(int64_t batch_id) override;

  // Closes the connection and the ZooKeeper session (releasing the client
  // running node). Safe to call at any time, from any thread.
  void Disconnect() override;

  bool connected() const override;
  // The server of the current connection ("" when none).
  std::string current_address() const;
  // Whether this connector holds the client running node (false without client HA).
  bool is_active_client() const;
  // Reconnections after a failure or a moved running node, since construction.
  int64_t reconnects() const;
  // Acks the server reported as not applied (error 409) since construction;
  // each was handled by a failover, so the batch came again (see Ack).
  int64_t acks_not_applied() const;
  const ClusterConnectorOptions& options() const { return options_; }

 private:
  struct Signals;

  // A watch's flags in Signals: `armed` while a watch is set; `changed`
  // (optional) set when it fires.
  struct Watch {
    bool Signals::*armed;
    bool Signals::*changed;
  };
  enum class WatchMode {
    kOnce,           // set a watch only when none is armed (ZooKeeper fires each once)
    kOnceAndReset,   // kOnce, and clear `changed`: this read sees the change
    kRearm,          // set a watch even when one is armed
    kRearmAndReset,  // kRearm, and clear `changed`
  };

  Status ValidateOptions() const;
  Status EnsureZk(std::chrono::steady_clock::time_point deadline);
  void CloseZk();
  Status Elect();
  Status CheckActive();
  Status LoseActive(std::string_view why);
  // Closes the connection; the batches it handed out become stale. Returns
  // the server it was to ("" when none).
  std::string DropConnection();
  // Reads `path` (*exists false when absent) and sets a watch on it as
  // `mode` says. A failed read of a kOnce mode leaves no watch armed.
  Status ReadAndWatch(const std::string& path, Watch watch, WatchMode mode, bool* exists, std::string* data);
  Status ReadRunningAddress(std::string* address);
  Status NextAddress(std::string* address);
  Status ConnectTo(const std::string& address);
  Status ConnectWithRetries(std::string_view why, std::chrono::steady_clock::time_point deadline);
  Status Failover(const Status& cause, std::string_view doing, std::chrono::steady_clock::time_point deadline);
  Status EnsureConnection(std::string_view doing, std::chrono::steady_clock::time_point deadline);
  Status FollowMovedServer(std::chrono::steady_clock::time_point deadline);
  // Runs `op` on the connection, failing over and running it again (within
  // the retry policy) when it fails in a way another connection may not.
  Status WithFailover(std::string_view doing, std::chrono::steady_clock::time_point deadline,
                      const std::function<Status()>& op);
  Status Fetch(int32_t batch_size, const Wait* wait, bool ack, Message* out) override;
  Status GetLocked(int32_t batch_size, const Wait* wait, Message* out);
  Status AckLocked(int64_t batch_id);
  // Waits until a ZooKeeper event after `seen` (Signals::events), `until`, or
  // Disconnect(); false for Disconnect().
  bool WaitForEvent(uint64_t seen, std::chrono::steady_clock::time_point until);
  std::chrono::steady_clock::time_point CallDeadline() const;
  std::string RunningPath() const;
  std::string ClientRunningPath() const;
  std::string Where() const;

  const ClusterConnectorOptions options_;
  std::shared_ptr<Signals> signals_;  // shared with ZooKeeper callbacks, which may outlive a call
  mutable std::mutex mu_;
  std::unique_ptr<coord::ZkClient> zk_;
  std::unique_ptr<Connector> conn_;
  std::string current_address_;
  size_t next_address_ = 0;  // fixed list: where the next attempt goes
  bool connect_called_ = false;
  bool subscribed_ = false;
  std::string filter_;
  std::atomic<bool> active_{false};  // holds the client running node (read without mu_)
  bool lost_active_ = false;        // had it and lost it: calls fail until Connect()
  std::string lost_reason_;
  bool running_watch_armed_ = false;
  std::atomic<int64_t> reconnects_{0};
  std::atomic<int64_t> acks_not_applied_{0};
  // Batch ids handed out by the current connection, and by earlier ones
  // (which the next server delivers again): see Ack.
  std::set<int64_t> held_batches_;
  std::map<int64_t, std::string> stale_batches_;  // id -> the server that handed it out
};

// True for the Aborted status of a ClusterConnector that is not (or no longer)
// the active client of its client id: Connect() again to wait for the election.
// The subcode of that refusal: negative, as the SDK's own kinds are (a
// server's codes are positive, ServerErrorCode()).
inline constexpr int32_t kErrorNotActiveClient = -1;
bool IsNotActiveClient(const Status& status);

// ZooKeeper paths of Canal's layout: canal/coord/canal_layout.h.

}  // namespace canal::client
