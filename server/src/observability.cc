#include "canal/server/observability.h"

#include <spdlog/spdlog.h>

namespace canal::server {

Observability::Observability(const CanalConfig& config, std::shared_ptr<spdlog::logger> logger)
    : log_(logger ? std::move(logger) : spdlog::default_logger()), client_stats_(std::make_shared<ClientStatsBook>()) {
  enabled_ = config.metrics_port != 0;
  options_.ip = config.metrics_ip;
  options_.port = config.metrics_port;
  options_.max_connections = static_cast<size_t>(config.metrics_max_connections);
}

Observability::~Observability() { Stop(); }

void Observability::SetAdmin(AdminConfig config, std::string mode) {
  admin_config_ = std::move(config);
  mode_ = std::move(mode);
}

Status Observability::Start(InstanceRegistry* registry, const DestinationArbiter* arbiter, std::string server_address) {
  if (!enabled_) {
    log_->info("metrics endpoint off (canal.metrics.pull.port = 0)");
    return Status::OK();
  }
  StatusSources sources;
  sources.destinations = [registry] { return registry->Destinations(); };
  sources.arbiter = arbiter;
  sources.ha_events = &ha_events_;
  sources.clients = client_stats_.get();
  sources.server_address = std::move(server_address);
  if (ClusterPlacement* cluster = cluster_) sources.cluster = [cluster] { return cluster->Describe(); };
  collector_ = std::make_unique<StatusCollector>(std::move(sources));
  AdminHooks hooks;
  StatusCollector* collector = collector_.get();
  hooks.report = [collector] { return collector->Collect(); };
  hooks.control = [registry](std::string_view name, OperatorAction action, std::string* done) {
    return registry->Control(name, action, done);
  };
  hooks.held = [registry](std::string_view name) { return registry->Held(name); };
  hooks.mode = mode_;
  hooks.operations = operations_;
  if (ClusterPlacement* cluster = cluster_) {
    hooks.cluster_view = [cluster](std::string* text) { return cluster->ViewJson(text); };
    hooks.cluster_drain = [cluster](std::string_view server, bool drain) { return cluster->Drain(server, drain); };
    hooks.cluster_move = [cluster](std::string_view destination, std::string_view server) {
      return cluster->Move(destination, server);
    };
  }
  admin_ = std::make_unique<AdminApi>(admin_config_, std::move(hooks), log_);
  options_.admin = admin_.get();
  if (admin_config_.token.empty()) {
    log_->info("admin API: read-only (no canal.admin.token or canal.admin.tokenFile: every change is refused)");
  } else {
    log_->info("admin API: changes need the token of {}; reads {}", admin_config_.token_origin,
               admin_config_.read_requires_token ? "need it too" : "are open");
  }
  Status s = HttpEndpoint::Create(options_, collector_.get(), log_, &endpoint_);
  if (!s.ok()) {
    log_->error("{}; serving clients without metrics and status", s.ToString());
    return s;
  }
  endpoint_->Start();
  return Status::OK();
}

void Observability::Stop() {
  if (endpoint_) endpoint_->Stop();
}

uint16_t Observability::port() const { return endpoint_ ? endpoint_->port() : 0; }

}  // namespace canal::server
