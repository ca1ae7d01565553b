// CanalConnector: what every connector of this SDK does, as Canal's Java
// CanalConnector interface. Code written against it takes either a plain
// Connector (connector.h, library canal_client: one server, no ZooKeeper) or a
// ClusterConnector (cluster_connector.h, library canal_client_cluster: finds
// the active server and fails over).
//
//   Status Consume(canal::client::CanalConnector& c) {
//     CANAL_RETURN_IF_ERROR(c.Connect());
//     CANAL_RETURN_IF_ERROR(c.Subscribe());
//     canal::client::Message m;
//     CANAL_RETURN_IF_ERROR(c.GetWithoutAck(1000, 1, canal::client::TimeUnit::kSeconds, &m));
//     ...
//   }
//
// The get overloads live here once; an implementation supplies Fetch, which
// serves all four under its own lock (so Get's ack follows its get with no
// other call of the same connector in between). Each implementation's header
// says what its errors mean.
#pragma once

#include <cstdint>
#include <string_view>

#include "canal/client/message.h"
#include "canal/common/status.h"

namespace canal::client {

// The unit of a get's timeout, numbered as on the wire (java.util.concurrent.TimeUnit).
enum class TimeUnit : int32_t {
  kNanoseconds = 0,
  kMicroseconds = 1,
  kMilliseconds = 2,
  kSeconds = 3,
  kMinutes = 4,
  kHours = 5,
  kDays = 6,
};

class CanalConnector {
 public:
  virtual ~CanalConnector() = default;

  // Connects (a connected connector reconnects).
  virtual Status Connect() = 0;
  // Subscribe() sends the connector's own filter (a plain Connector has none:
  // "" keeps the destination's); Subscribe(filter) sends `filter`.
  virtual Status Subscribe() = 0;
  virtual Status Subscribe(std::string_view filter) = 0;
  virtual Status Unsubscribe() = 0;

  // Fetches up to `batch_size` entries (<= 0 means 1000) without acknowledging
  // them. Without a timeout the server answers with what it has at once; with
  // one it waits up to `timeout` for more (timeout == 0: until a full batch).
  // *out is an empty batch (id -1) when there was nothing.
  Status GetWithoutAck(int32_t batch_size, Message* out) { return Fetch(batch_size, nullptr, false, out); }
  Status GetWithoutAck(int32_t batch_size, int64_t timeout, TimeUnit unit, Message* out) {
    const Wait wait{timeout, unit};
    return Fetch(batch_size, &wait, false, out);
  }
  // GetWithoutAck followed by Ack of the batch (none for an empty batch).
  Status Get(int32_t batch_size, Message* out) { return Fetch(batch_size, nullptr, true, out); }
  Status Get(int32_t batch_size, int64_t timeout, TimeUnit unit, Message* out) {
    const Wait wait{timeout, unit};
    return Fetch(batch_size, &wait, true, out);
  }

  // Ack(ack_batch_id) (nothing for -1) and then GetWithoutAck, in one call: a
  // consumer loop that acks each batch before fetching the next. The plain
  // Connector sends both requests in one write (one send, one wake-up of the
  // server per batch); other connectors make the two calls. Errors are those
  // of the two calls; a refused ack is reported as the get's error ("the
  // earlier ack of batch N failed").
  Status AckAndGetWithoutAck(int64_t ack_batch_id, int32_t batch_size, int64_t timeout, TimeUnit unit,
                             Message* out) {
    const Wait wait{timeout, unit};
    return AckThenFetch(ack_batch_id, batch_size, &wait, out);
  }

  // Batches are acked oldest first; Rollback() gives back every unacked batch.
  virtual Status Ack(int64_t batch_id) = 0;
  virtual Status Rollback() = 0;
  virtual Status Rollback(int64_t batch_id) = 0;

  // Closes the connection. Safe to call when not connected.
  virtual void Disconnect() = 0;
  virtual bool connected() const = 0;

 protected:
  // A get's wait on the server, as sent (Canal's GET carries the two fields).
  struct Wait {
    int64_t timeout;
    TimeUnit unit;
  };
  // One get of up to `batch_size` entries, waiting as `wait` says (nullptr: no
  // timeout field is sent); with `ack`, the batch is acked before returning.
  virtual Status Fetch(int32_t batch_size, const Wait* wait, bool ack, Message* out) = 0;
  // Ack, then a get; a connector may send them together.
  virtual Status AckThenFetch(int64_t ack_batch_id, int32_t batch_size, const Wait* wait, Message* out) {
    if (ack_batch_id != -1) {
      if (Status s = Ack(ack_batch_id); !s.ok()) {
        *out = Message();
        return s;
      }
    }
    return Fetch(batch_size, wait, false, out);
  }
};

}  // namespace canal::client
