// MQ mode in the server (canal.serverMode = kafka | rabbitMQ, docs/mq.md):
// each destination is an Instance whose ring is drained by an mq::Publisher
// instead of a TCP client. The publisher acks as Canal's MQ client (id 1001),
// so the instance resumes where the broker last confirmed. The TCP port stays
// open, but a subscription to such a destination is refused with a message
// naming the mode and the topic.
//
// Life cycle: Start() subscribes the publisher's client, starts the instance
// (which then resumes from that client's cursor), then the publisher; Stop()
// stops the publisher first (abandoning unconfirmed messages: the cursor did
// not move for them), then the instance. A restart by the registry (an edit
// of instance.properties) is Stop() + Start().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "canal/common/status.h"
#include "canal/mq/mq_config.h"
#include "canal/mq/publisher.h"
#include "canal/server/config.h"
#include "canal/server/instance.h"  // also declares spdlog::logger and meta::MetaManager

namespace canal::server {

// canal.serverMode and the server-wide MQ keys of canal.properties
// (mq_config.h). InvalidArgument naming the key for a refused value.
Status LoadServerMode(const CanalConfig& canal, mq::MqSettings* out);

class MqDestination final : public ManagedDestination {
 public:
  // The destination `config` publishing as `settings` say (mode kafka or
  // rabbitMQ); its routing keys are read from config.contents over
  // canal.properties. InvalidArgument naming the key for a refused value.
  static Status Create(const mq::MqSettings& settings, const CanalConfig& canal, const InstanceConfig& config,
                       meta::MetaManager* meta, std::shared_ptr<spdlog::logger> logger,
                       std::shared_ptr<ManagedDestination>* out, InstanceOptions instance_options = {});
  ~MqDestination() override;  // Stop()s

  Status Start() override;
  void Stop() override;

  // Destination
  const std::string& name() const override { return instance_->name(); }
  bool running() const override { return instance_->running(); }
  std::shared_ptr<store::RingStore> store() override { return instance_->store(); }
  meta::MetaManager* meta() override { return instance_->meta(); }
  Status SetClientFilter(std::string_view regex) override;
  std::string SubscriptionRefusal() const override;

  mq::PublisherStats publisher_stats() const { return publisher_->stats(); }
  // The instance's parser, ring and cursors, for /status and the metrics (as in TCP mode).
  bool Report(InstanceStatus* out) const override { return instance_->Report(out); }

 private:
  MqDestination(mq::ServerMode mode, std::string topic, std::unique_ptr<Instance> instance,
                std::unique_ptr<mq::Publisher> publisher, std::shared_ptr<spdlog::logger> logger);

  const mq::ServerMode mode_;
  const std::string topic_;
  std::unique_ptr<Instance> instance_;
  std::unique_ptr<mq::Publisher> publisher_;
  std::shared_ptr<spdlog::logger> log_;
};

}  // namespace canal::server
