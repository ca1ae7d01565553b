#include "canal/server/cluster_placement.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "canal/coord/zk_client.h"

namespace canal::server {

Status ClusterPlacement::Create(RunningMonitor* monitor, ClusterPlacementOptions options,
                                std::unique_ptr<ClusterPlacement>* out) {
  if (monitor == nullptr) return Status::InvalidArgument("cluster placement: no running monitor");
  std::unique_ptr<ClusterPlacement> p(new ClusterPlacement(monitor, std::move(options)));
  coord::ZkOptions zk_options;
  zk_options.servers = p->options_.zk_servers;
  zk_options.session_timeout_ms = p->options_.session_timeout_ms;
  CANAL_RETURN_IF_ERROR(coord::ZkClient::Create(zk_options, &p->zk_));

  coord::PlacementCoordinatorOptions o;
  o.address = monitor->address();
  o.cap = p->options_.cap;
  o.lost_server_delay = p->options_.lost_delay;
  o.stop_timeout = p->options_.stop_timeout;
  o.logger = p->log_;
  ClusterPlacement* self = p.get();
  o.on_assignment = [self](const coord::Assignment& assignment, uint64_t generation) {
    self->OnAssignment(assignment, generation);
  };
  p->coordinator_ = std::make_unique<coord::PlacementCoordinator>(p->zk_.get(), std::move(o));
  *out = std::move(p);
  return Status::OK();
}

ClusterPlacement::ClusterPlacement(RunningMonitor* monitor, ClusterPlacementOptions options)
    : monitor_(monitor),
      options_(std::move(options)),
      log_(options_.logger ? options_.logger : std::make_shared<spdlog::logger>("canal-cluster")) {}

ClusterPlacement::~ClusterPlacement() {
  Stop();
  coordinator_.reset();
  if (zk_) zk_->Close();
}

Status ClusterPlacement::Start() {
  CANAL_RETURN_IF_ERROR(coordinator_->Start());
  if (options_.bytes_read) sampler_ = std::thread([this] { SampleLoad(); });
  log_->info("cluster: balanced placement through ZooKeeper {}: server {} (cap {}, lost-server delay {} ms)",
             options_.zk_servers, monitor_->address(),
             options_.cap == 0 ? std::string("none") : std::to_string(options_.cap), options_.lost_delay.count());
  return Status::OK();
}

void ClusterPlacement::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  cv_.notify_all();
  if (sampler_.joinable()) sampler_.join();
  // The coordinator's clean leave waits for the leader's assignment without this server, and
  // each Assign it passes on hands a destination over before it returns.
  log_->info("cluster: server {} leaves the cluster; its destinations move to the others", monitor_->address());
  coordinator_->Stop();
}

void ClusterPlacement::OnAssignment(const coord::Assignment& assignment, uint64_t generation) {
  std::vector<std::string> mine;
  const std::string& self = monitor_->address();
  for (const auto& [destination, server] : assignment.assignment) {
    if (server == self) mine.push_back(destination);
  }
  std::vector<std::string> before = monitor_->Assigned();
  monitor_->Assign(mine);
  if (before != mine) {
    std::string names;
    for (const std::string& d : mine) names += (names.empty() ? "" : ", ") + d;
    log_->info("cluster: assignment generation {} (leader {}): {} destination(s) here: [{}]; {} unassigned in the "
               "cluster",
               generation, assignment.leader, mine.size(), names, assignment.unassigned.size());
  }
  std::vector<std::pair<std::string, std::string>> nowhere;  // unassigned and joined here: (destination, why)
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [destination, why] : assignment.unassigned) {
      if (joined_.count(destination) != 0) nowhere.emplace_back(destination, why);
    }
  }
  for (const auto& [destination, why] : nowhere) {
    log_->warn("cluster: destination {} runs nowhere: {}", destination, why);
  }
}

void ClusterPlacement::Join(const std::string& destination, Handler handler) {
  std::set<std::string> names;
  std::map<std::string, coord::layout::DestinationHints> hints;
  {
    std::lock_guard<std::mutex> lock(mu_);
    joined_.insert(destination);
    names = joined_;
    if (handler.weight != 1.0 || !handler.preferred.empty() || !handler.excluded.empty()) {
      hints_[destination] = coord::layout::DestinationHints{handler.weight, handler.preferred, handler.excluded};
    } else {
      hints_.erase(destination);
    }
    hints = hints_;
  }
  monitor_->Join(destination, std::move(handler));
  coordinator_->SetHints(std::move(hints));
  coordinator_->SetDestinations(std::move(names));
}

void ClusterPlacement::Leave(const std::string& destination) {
  std::set<std::string> names;
  std::map<std::string, coord::layout::DestinationHints> hints;
  {
    std::lock_guard<std::mutex> lock(mu_);
    joined_.erase(destination);
    names = joined_;
    hints_.erase(destination);
    hints = hints_;
  }
  coordinator_->SetHints(std::move(hints));
  coordinator_->SetDestinations(std::move(names));
  monitor_->Leave(destination);
}

bool ClusterPlacement::IsActive(std::string_view destination) const { return monitor_->IsActive(destination); }

// Bytes/s per destination over each interval. A counter that went back (the destination
// restarted here) counts from its new value; a destination that moved away drops out.
void ClusterPlacement::SampleLoad() {
  using Clock = std::chrono::steady_clock;
  std::map<std::string, uint64_t> last = options_.bytes_read();
  Clock::time_point last_at = Clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopped_) {
    cv_.wait_for(lock, options_.load_interval, [this] { return stopped_; });
    if (stopped_) break;
    lock.unlock();
    const std::map<std::string, uint64_t> now = options_.bytes_read();
    const Clock::time_point at = Clock::now();
    const double seconds = std::chrono::duration<double>(at - last_at).count();
    std::map<std::string, double> rates;
    for (const auto& [destination, bytes] : now) {
      const auto before = last.find(destination);
      const uint64_t from = before != last.end() && before->second <= bytes ? before->second : bytes;
      rates[destination] = seconds > 0 ? static_cast<double>(bytes - from) / seconds : 0.0;
    }
    coordinator_->SetLoad(std::move(rates));
    last = now;
    last_at = at;
    lock.lock();
  }
}

ClusterReport ClusterPlacement::Describe() const {
  ClusterReport s;
  s.leader = coordinator_->IsLeader();
  const coord::Assignment a = coordinator_->CurrentAssignment();
  s.generation = a.generation;
  s.leader_address = a.leader;
  s.assignment = a.assignment;
  s.unassigned = a.unassigned;
  s.assigned_here = monitor_->Assigned();
  return s;
}

Status ClusterPlacement::ViewJson(std::string* json_text) const {
  coord::ClusterView view;
  CANAL_RETURN_IF_ERROR(coord::ReadClusterView(zk_.get(), &view));
  nlohmann::json servers = nlohmann::json::object();
  for (const auto& [name, node] : view.servers) {
    size_t assigned = 0;
    for (const auto& [destination, server] : view.assignment.assignment) assigned += server == name;
    servers[name] = {{"cap", node.cap},
                     {"draining", node.draining || view.drained.count(name) != 0},
                     {"destinations", node.destinations},
                     {"assigned", assigned},
                     {"load_bytes_per_second", node.load}};
  }
  nlohmann::json j = {{"placement", "balanced"},
                      {"this_server", monitor_->address()},
                      {"leader", view.leader},
                      {"generation", view.assignment.generation},
                      {"servers", std::move(servers)},
                      {"assignment", view.assignment.assignment},
                      {"unassigned", view.assignment.unassigned},
                      {"drained", view.drained},
                      {"pins", view.pins},
                      {"weights", view.weights},
                      {"unreadable", view.unreadable}};
  // Names and reasons come from ZooKeeper: a bad byte must not make the answer unreadable.
  *json_text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  return Status::OK();
}

namespace {

std::string ServerList(const coord::ClusterView& view) {
  std::string names;
  for (const auto& [name, node] : view.servers) names += (names.empty() ? "" : ", ") + name;
  return names.empty() ? std::string("none") : names;
}

}  // namespace

Status ClusterPlacement::Drain(std::string_view address, bool draining) {
  coord::ClusterView view;
  CANAL_RETURN_IF_ERROR(coord::ReadClusterView(zk_.get(), &view));
  // Ending a drain is allowed for any server (it may be down for its restart).
  if (draining && view.servers.count(std::string(address)) == 0) {
    return Status::NotFound("no server " + std::string(address) + " in the cluster (its servers: " + ServerList(view) +
                            ")");
  }
  return coord::SetDrain(zk_.get(), address, draining);
}

Status ClusterPlacement::Move(std::string_view destination, std::string_view address) {
  if (!address.empty()) {
    coord::ClusterView view;
    CANAL_RETURN_IF_ERROR(coord::ReadClusterView(zk_.get(), &view));
    const auto it = view.servers.find(std::string(address));
    if (it == view.servers.end()) {
      return Status::NotFound("no server " + std::string(address) + " in the cluster (its servers: " +
                              ServerList(view) + ")");
    }
    if (it->second.destinations.count(std::string(destination)) == 0) {
      return Status::InvalidArgument("server " + std::string(address) + " cannot run " + std::string(destination) +
                                     ": its conf folder does not list it (add " + std::string(destination) +
                                     "/instance.properties there first)");
    }
  }
  return coord::SetPin(zk_.get(), destination, address);
}

}  // namespace canal::server
