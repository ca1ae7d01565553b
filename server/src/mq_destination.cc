#include "canal/server/mq_destination.h"

#include <spdlog/spdlog.h>

#include "canal/mq/kafka_producer.h"
#include "canal/mq/rabbitmq_producer.h"

namespace canal::server {

Status LoadServerMode(const CanalConfig& canal, mq::MqSettings* out) {
  PropertyResolver resolver({&canal.properties}, canal.env ? canal.env : ProcessEnvironment());
  CANAL_RETURN_IF_ERROR(mq::LoadMqSettings(resolver, canal.properties, out));
  if (out->mode == mq::ServerMode::kKafka) {
    mq::KafkaOptions kafka;
    kafka.properties = out->kafka;
    CANAL_RETURN_IF_ERROR(mq::CheckKafkaOptions(kafka).WithContext(canal.properties_file));
  }
  return Status::OK();
}

Status MqDestination::Create(const mq::MqSettings& settings, const CanalConfig& canal, const InstanceConfig& config,
                             meta::MetaManager* meta, std::shared_ptr<spdlog::logger> logger,
                             std::shared_ptr<ManagedDestination>* out, InstanceOptions instance_options) {
  Properties instance_props(config.properties_file);
  CANAL_RETURN_IF_ERROR(Properties::Parse(config.contents, config.properties_file, &instance_props));
  PropertyResolver resolver({&instance_props, &canal.properties}, canal.env ? canal.env : ProcessEnvironment());

  mq::PublisherOptions options;
  options.destination = config.destination;
  options.batch_size = settings.canal_batch_size;
  options.get_timeout = std::chrono::milliseconds(settings.canal_get_timeout_ms);
  options.max_in_flight_batches = settings.max_in_flight_batches;
  options.max_in_flight_bytes = settings.max_in_flight_bytes;
  options.transaction_max_batches = settings.transaction_max_batches;
  options.encoder = settings.encoder;
  options.logger = logger;
  std::vector<std::string> warnings;
  CANAL_RETURN_IF_ERROR(mq::LoadRoutingConfig(resolver, instance_props, settings, &options.routing, &warnings));
  for (const std::string& w : warnings) {
    if (logger) logger->warn("[{}] {}", config.destination, w);
  }
  warnings.clear();
  if (settings.mode == mq::ServerMode::kKafka) {
    mq::DestinationKafka dk;
    CANAL_RETURN_IF_ERROR(
        mq::LoadDestinationKafka(resolver, instance_props, settings, config.destination, &dk, &warnings)
            .WithContext(config.properties_file));
    for (const std::string& w : warnings) {
      if (logger) logger->warn("[{}] {}", config.destination, w);
    }
    mq::KafkaOptions kafka;
    kafka.properties = dk.properties;
    kafka.logger = logger;
    kafka.destination = config.destination;
    kafka.transactional = dk.transactional;
    kafka.transactional_id = dk.transactional_id;
    kafka.position_topic = dk.position_topic;
    if (dk.properties != settings.kafka) {
      // Its own cluster or client settings: checked now, as canal.properties' are at start-up.
      CANAL_RETURN_IF_ERROR(mq::CheckKafkaOptions(kafka).WithContext(config.properties_file));
      options.encoder.max_message_bytes = mq::KafkaPacketLimit(dk.properties);
      if (logger) {
        auto servers = dk.properties.find("bootstrap.servers");
        logger->info("[{}] publishes with its own Kafka settings (instance.properties), bootstrap.servers {}",
                     config.destination, servers != dk.properties.end() ? servers->second : "?");
      }
    }
    options.transactional = dk.transactional;
    options.producer_factory = [kafka](std::unique_ptr<mq::Producer>* p) { return mq::MakeKafkaProducer(kafka, p); };
  } else if (settings.mode == mq::ServerMode::kRabbitMq) {
    mq::RabbitMqOptions rabbit = settings.rabbitmq;
    options.producer_factory = [rabbit](std::unique_ptr<mq::Producer>* p) { return mq::MakeRabbitMqProducer(rabbit, p); };
  } else {
    return Status::InvalidArgument("MqDestination for canal.serverMode = tcp");
  }
  const std::string topic = options.routing.topic;
  std::unique_ptr<mq::Publisher> publisher;
  CANAL_RETURN_IF_ERROR(
      mq::Publisher::Create(std::move(options), meta, &publisher).WithContext(config.properties_file));
  auto instance = std::make_unique<Instance>(config, meta, logger, std::move(instance_options));
  out->reset(new MqDestination(settings.mode, topic, std::move(instance), std::move(publisher), std::move(logger)));
  return Status::OK();
}

MqDestination::MqDestination(mq::ServerMode mode, std::string topic, std::unique_ptr<Instance> instance,
                             std::unique_ptr<mq::Publisher> publisher, std::shared_ptr<spdlog::logger> logger)
    : mode_(mode),
      topic_(std::move(topic)),
      instance_(std::move(instance)),
      publisher_(std::move(publisher)),
      log_(logger ? std::move(logger) : std::make_shared<spdlog::logger>("canal-mq-destination")) {}

MqDestination::~MqDestination() { Stop(); }

Status MqDestination::Start() {
  CANAL_RETURN_IF_ERROR(publisher_->Subscribe());
  CANAL_RETURN_IF_ERROR(instance_->Start());
  // (Raw: Stop stops the publisher before the instance, so its ring outlives it.)
  publisher_->Start(instance_->store().get());
  return Status::OK();
}

void MqDestination::Stop() {
  const bool was_running = instance_->running();
  publisher_->Stop();
  if (was_running) log_->info("[{}] MQ: {}", name(), publisher_->StatusLine());
  instance_->Stop();
}

Status MqDestination::SetClientFilter(std::string_view) {
  return Status::InvalidArgument(SubscriptionRefusal());
}

std::string MqDestination::SubscriptionRefusal() const {
  return "destination " + name() + " publishes to " + (mode_ == mq::ServerMode::kKafka ? "Kafka" : "RabbitMQ") +
         " (canal.serverMode = " + mq::ServerModeName(mode_) + ", default topic " + topic_ +
         "): TCP subscriptions are refused; read the broker instead, or set canal.serverMode = tcp";
}

}  // namespace canal::server
