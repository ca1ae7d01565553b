// ZkClient: a small synchronous face on ZooKeeper's C client (zookeeper_mt)
// for what the HA code needs: sessions, ephemeral and persistent nodes, data,
// children and one-shot watches.
//
// Create() starts connecting and returns at once; WaitConnected() waits.
// Session state changes reach listeners, and fired watches their callbacks,
// on the client's own event thread (one per ZkClient, one callback at a time,
// in the order ZooKeeper reported them), never on the C client's threads.
// Keep callbacks quick (the next event waits); they may call ZkClient (re-arm
// a watch, read a node) and may even destroy it. Once the destructor has
// returned no callback runs; destroying (or Close) ends the session, which
// removes its ephemeral nodes at once when connected. An expired session is
// final for that handle's ephemeral nodes and for its watches (they never
// fire: listen for kExpired); Reopen() starts a new session on the same
// object (listeners and options kept). While ZooKeeper is unreachable the
// state stays kConnecting: expiry is learnt only on reconnecting.
//
// Every data call is synchronous with a bound (operation_timeout_ms), covering
// the wait for a connection too, and returns a Status naming the path, the
// servers and the ZooKeeper error: "no node" is NotFound; not connected in
// time, connection lost, timed out, session expired or closed are IOError
// (state() tells which); a malformed path is InvalidArgument. "Node exists"
// is reported through *created / *existed outputs, never as a failure. After
// a timeout or a lost connection the call may or may not have taken effect.
// Thread-safe: calls may come from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"

namespace canal::coord {

struct ZkOptions {
  std::string servers;              // "host:port[,host:port...]" (canal.zkServers)
  int session_timeout_ms = 6'000;   // asked of the server (it may clamp it)
  int operation_timeout_ms = 5'000; // bound on one synchronous call
};

enum class ZkState : uint8_t {
  kConnecting,  // not connected (at start, or the connection was lost; the session may still live)
  kConnected,
  kExpired,     // the session is gone with its ephemeral nodes; Reopen() for a new one
  kClosed,      // Close() was called
};
const char* ZkStateName(ZkState state);

enum class ZkCreateMode : uint8_t { kPersistent, kEphemeral };

class ZkClient {
 public:
  using StateListener = std::function<void(ZkState)>;
  using Watch = std::function<void()>;  // one-shot: node created, changed, deleted, or children changed

  static Status Create(ZkOptions options, std::unique_ptr<ZkClient>* out);
  virtual ~ZkClient() = default;

  virtual Status WaitConnected(std::chrono::milliseconds limit) = 0;
  virtual ZkState state() const = 0;
  virtual int64_t session_id() const = 0;  // 0 when none
  // The session timeout the server granted (ms), once connected.
  virtual int negotiated_session_timeout_ms() const = 0;
  // Returns an id for RemoveStateListener. A listener already running when it
  // is removed finishes; it is not called again.
  virtual int AddStateListener(StateListener listener) = 0;
  virtual void RemoveStateListener(int id) = 0;
  // A new session after expiry (or any time): the old ephemeral nodes go.
  virtual Status Reopen() = 0;
  virtual void Close() = 0;

  // Creates `path` (its parents must exist unless `make_parents`, which
  // creates missing parents as persistent empty nodes). *created = false when
  // it existed already (not an error).
  virtual Status CreateNode(std::string_view path, std::string_view data, ZkCreateMode mode, bool make_parents,
                            bool* created) = 0;
  // Sets the data, creating the node (persistent, with parents) when missing.
  virtual Status SetOrCreate(std::string_view path, std::string_view data) = 0;
  // NotFound when the node does not exist.
  virtual Status Get(std::string_view path, std::string* data) = 0;
  // The data and its version (ZooKeeper's count of writes to the node since it was created).
  // NotFound when the node does not exist.
  virtual Status GetVersioned(std::string_view path, std::string* data, int32_t* version) = 0;
  // A conditional write, the fence of a writer that may have been replaced: sets the data only
  // while the node's version is still `expected` (-1: creates it, with parents, only while it
  // does not exist) and puts the new version in *version. Aborted, and nothing written, when
  // another client wrote, created or deleted it in between (the only Aborted this class returns).
  // After a timeout the write may have been made: read the node to tell.
  virtual Status SetIfVersion(std::string_view path, std::string_view data, int32_t expected, int32_t* version) = 0;
  // Reads the node if it exists (*exists; `data` may be null) and arms
  // `watch` for its next change, creation or deletion. On error no watch is armed.
  virtual Status GetAndWatch(std::string_view path, Watch watch, bool* exists, std::string* data) = 0;
  virtual Status Exists(std::string_view path, bool* exists) = 0;
  // Deleting a missing node is OK; `recursive` removes children first.
  virtual Status Delete(std::string_view path, bool recursive = false) = 0;
  // Child names, sorted. NotFound when the node does not exist.
  virtual Status Children(std::string_view path, std::vector<std::string>* names) = 0;
  // Children, and `watch` armed for the next child created or deleted (not
  // for a child's data). NotFound, with no watch, when the node does not exist.
  virtual Status ChildrenAndWatch(std::string_view path, Watch watch, std::vector<std::string>* names) = 0;

  // The options given to Create() (servers for messages, timeouts).
  virtual const ZkOptions& options() const = 0;
};

}  // namespace canal::coord
