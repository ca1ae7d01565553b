// Destination: what a client session needs from one running instance — its
// ring of entries, its meta manager, and the table filter a subscription may
// replace — and DestinationRegistry, which finds instances by name.
//
// Instance implements Destination; the session server only ever sees this
// interface, so it can be tested with an in-memory ring and meta manager.
// Threads: any method may be called from any session thread; the store's
// consumer calls (Get/Ack/Rollback/NotifyWhen) must still be sequenced
// by the one session that owns the subscription.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "canal/common/status.h"

namespace canal::store {
class RingStore;
}
namespace canal::meta {
class MetaManager;
}

namespace canal::server {

class Destination {
 public:
  virtual ~Destination() = default;
  virtual const std::string& name() const = 0;
  // False once the instance is stopping; sessions then answer with an error.
  virtual bool running() const = 0;
  // The ring of the current run, shared: a session keeps it alive across a
  // wait even if the destination restarts meanwhile (the old ring is then
  // stopped, and freed with its last holder).
  virtual std::shared_ptr<store::RingStore> store() = 0;
  virtual meta::MetaManager* meta() = 0;
  // A subscription's filter replaces the instance's canal.instance.filter.regex
  // ("" restores it). InvalidArgument quoting a bad pattern.
  virtual Status SetClientFilter(std::string_view regex) = 0;
  // Why a TCP client may not subscribe to this destination ("" = it may):
  // in MQ mode the destination's only consumer is its publisher.
  virtual std::string SubscriptionRefusal() const { return {}; }
  // Why the destination is not streaming from its primary now ("" while it
  // is): sent with empty batches (Messages.server_warning) so that a client
  // can tell an idle primary from a failing one.
  virtual std::string Warning() const { return {}; }
};

class DestinationRegistry {
 public:
  virtual ~DestinationRegistry() = default;
  // nullptr when no such destination runs here.
  virtual std::shared_ptr<Destination> Find(std::string_view name) = 0;
  // Why `name` was last stopped or restarted here ("" when not known), for
  // the message a subscribed client gets.
  virtual std::string WhyNotServed(std::string_view /*name*/) { return ""; }
  // Whether another party (HA: ZooKeeper) decides which destinations run here.
  virtual bool Arbitrated() const { return false; }
};

}  // namespace canal::server
