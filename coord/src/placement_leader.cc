// The leader's side of PlacementCoordinator (placement_internal.h): what it
// reads (ReadSnapshot) and what it decides from that (LeaderState), with the
// destinations of vanished servers held for lost_server_delay.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "canal/coord/zk_client.h"
#include "placement_internal.h"

namespace canal::coord::internal {

namespace {

int64_t Ms(Clock::duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); }

// Lists a folder, making it again when someone deleted it (a missing folder
// cannot be watched for children).
Status ListFolder(ZkClient* zk, WatchedReads* reads, const std::string& folder, std::vector<std::string>* names) {
  Status s = reads->CachedChildren(folder, names);
  if (!s.IsNotFound()) return s;
  bool created = false;
  CANAL_RETURN_IF_ERROR(zk->CreateNode(folder, "", ZkCreateMode::kPersistent, true, &created));
  return reads->CachedChildren(folder, names);
}

// Reads a folder of `name -> body` nodes; `parse` keeps the good ones, the
// others are logged (once) and left out.
template <typename Parse>
Status ReadFolder(ZkClient* zk, WatchedReads* reads, LeaderState* leader, const std::string& folder,
                  Parse&& parse) {
  std::vector<std::string> names;
  CANAL_RETURN_IF_ERROR(ListFolder(zk, reads, folder, &names));
  for (const std::string& name : names) {
    const std::string path = folder + "/" + name;
    std::optional<std::string> body;
    CANAL_RETURN_IF_ERROR(reads->CachedGet(path, &body));
    if (!body) continue;  // deleted since the listing: its watch brings another round
    if (Status p = parse(name, path, *body); !p.ok()) leader->WarnOnce(std::string(p.message()));
  }
  return Status::OK();
}

}  // namespace

std::string MovesText(const std::vector<PlacementMove>& moves) {
  std::string out;
  size_t shown = 0;
  for (const PlacementMove& m : moves) {
    if (shown == 8) {
      out += ", ... (" + std::to_string(moves.size() - shown) + " more)";
      break;
    }
    if (!out.empty()) out += ", ";
    out += m.destination + ": " + (m.from.empty() ? "-" : m.from) + " -> " + (m.to.empty() ? "-" : m.to);
    ++shown;
  }
  return out;
}

Status ReadSnapshot(ZkClient* zk, WatchedReads* reads, LeaderState* leader, ClusterSnapshot* out) {
  ClusterSnapshot s;
  CANAL_RETURN_IF_ERROR(ReadFolder(zk, reads, leader, layout::PlacementServersPath(),
                                   [&](const std::string& name, const std::string& path, const std::string& body) {
                                     layout::ServerNode node;
                                     CANAL_RETURN_IF_ERROR(layout::ParseServerNode(path, body, &node));
                                     s.servers.emplace(name, std::move(node));
                                     return Status::OK();
                                   }));
  std::vector<std::string> drained;
  CANAL_RETURN_IF_ERROR(ListFolder(zk, reads, layout::PlacementDrainsPath(), &drained));
  s.drained.insert(drained.begin(), drained.end());
  CANAL_RETURN_IF_ERROR(ReadFolder(zk, reads, leader, layout::PlacementPinsPath(),
                                   [&](const std::string& name, const std::string& path, const std::string& body) {
                                     std::string address;
                                     CANAL_RETURN_IF_ERROR(layout::ParsePin(path, body, &address));
                                     s.pins[name] = address;
                                     return Status::OK();
                                   }));
  CANAL_RETURN_IF_ERROR(ReadFolder(zk, reads, leader, layout::PlacementWeightsPath(),
                                   [&](const std::string& name, const std::string& path, const std::string& body) {
                                     double w = 1.0;
                                     CANAL_RETURN_IF_ERROR(layout::ParseWeight(path, body, &w));
                                     s.weights[name] = w;
                                     return Status::OK();
                                   }));
  // Always read afresh, not from a cache: the next generation must follow the newest.
  const std::string path = layout::PlacementAssignmentPath();
  std::string body;
  Status st = zk->Get(path, &body);
  if (st.ok()) {
    Status p = layout::ParseAssignment(path, body, &s.base);
    s.has_base = p.ok();
    if (!p.ok()) leader->WarnOnce(std::string(p.message()) + "; the leader rewrites it");
  } else if (!st.IsNotFound()) {
    return st;
  }
  *out = std::move(s);
  return Status::OK();
}

LeaderState::LeaderState(std::string address, std::chrono::milliseconds lost_server_delay,
                         std::shared_ptr<spdlog::logger> log)
    : address_(std::move(address)), delay_(lost_server_delay), log_(std::move(log)) {}

void LeaderState::Reset(Clock::time_point elected) {
  elected_ = elected;
  live_.clear();
  last_bodies_.clear();
  ghosts_.clear();
  gone_.clear();
  warned_.clear();
}

void LeaderState::WarnOnce(const std::string& what) {
  // (Bounded: a writer garbling a node on and on must not grow it for ever.)
  if (warned_.size() >= 1000) warned_.clear();
  if (warned_.insert(what).second) log_->warn("{}", what);
}

void LeaderState::TrackLostServers(const ClusterSnapshot& s, Clock::time_point now) {
  for (const std::string& id : live_) {
    if (s.servers.count(id) != 0) continue;
    // Said it was draining (Stop, or an operator's drain) before it went: nothing to wait for.
    auto last = last_bodies_.find(id);
    const bool clean = (last != last_bodies_.end() && last->second.draining) || s.drained.count(id) != 0;
    if (clean || delay_.count() <= 0) {
      gone_.insert(id);
      log_->info("placement: server {} left{}; its destinations move now", id, clean ? " cleanly" : "");
    } else {
      ghosts_[id] = now + delay_;
      log_->warn("placement: server {} vanished; its destinations stay for {} ms (lost_server_delay)", id,
                 delay_.count());
    }
  }
  for (const auto& [id, node] : s.servers) {
    if (ghosts_.erase(id) != 0) log_->info("placement: server {} is back within lost_server_delay", id);
    gone_.erase(id);
  }
  // Holders this leader never saw (it was elected since): the delay counts from its election.
  for (const auto& [d, id] : s.base.assignment) {
    if (s.servers.count(id) != 0 || ghosts_.count(id) != 0 || gone_.count(id) != 0) continue;
    const Clock::time_point until = elected_ + delay_;
    if (now < until) {
      ghosts_[id] = until;
      log_->warn("placement: server {} holds destinations but is not registered; they stay for {} ms", id,
                 Ms(until - now));
    } else {
      gone_.insert(id);
    }
  }
  for (auto it = ghosts_.begin(); it != ghosts_.end();) {
    if (now < it->second) {
      ++it;
      continue;
    }
    log_->warn("placement: server {} did not come back within lost_server_delay; its destinations move", it->first);
    gone_.insert(it->first);
    it = ghosts_.erase(it);
  }
  live_.clear();
  last_bodies_.clear();
  for (const auto& [id, node] : s.servers) {
    live_.insert(id);
    last_bodies_[id] = node;
  }
}

LeaderDecision LeaderState::Decide(const ClusterSnapshot& s, Clock::time_point now) {
  TrackLostServers(s, now);
  PlacementInput in;
  std::set<std::string> universe;  // what some registered server's conf lists
  // A destination's rate: as its current server reports it, else the highest any server reports.
  std::map<std::string, double> rates, runner_rates;
  for (const auto& [id, node] : s.servers) {
    in.servers.push_back(PlacementServer{id, node.cap, node.draining || s.drained.count(id) != 0, node.destinations});
    universe.insert(node.destinations.begin(), node.destinations.end());
    for (const auto& [d, rate] : node.load) {
      auto holder = s.base.assignment.find(d);
      if (holder != s.base.assignment.end() && holder->second == id) {
        runner_rates[d] = rate;
      } else {
        rates[d] = std::max(rates[d], rate);
      }
    }
  }
  for (const auto& [d, rate] : runner_rates) rates[d] = rate;
  // Destinations of vanished servers within their delay stay out of the placement, and where they are.
  std::map<std::string, std::string> held;
  for (const auto& [d, id] : s.base.assignment) {
    if (ghosts_.count(id) != 0) held[d] = id;
  }
  const std::map<std::string, double> factors = LoadFactors(rates);
  for (const std::string& d : universe) {
    if (held.count(d) != 0) continue;
    PlacementDestination pd;
    pd.name = d;
    auto w = s.weights.find(d);
    auto f = factors.find(d);
    pd.weight = (w != s.weights.end() ? w->second : 1.0) * (f != factors.end() ? f->second : 1.0);
    if (auto p = s.pins.find(d); p != s.pins.end()) pd.pin = p->second;
    // The conf's hints: from the first server (by address) announcing some for it.
    for (const auto& [id, node] : s.servers) {
      const auto h = node.hints.find(d);
      if (h == node.hints.end()) continue;
      pd.weight *= h->second.weight;
      pd.preferred = h->second.preferred;
      pd.excluded = h->second.excluded;
      break;
    }
    in.destinations.push_back(std::move(pd));
  }
  for (const auto& [d, id] : s.base.assignment) {
    if (held.count(d) == 0) in.previous[d] = id;
  }
  PlacementResult r = Place(in);
  for (const std::string& w : r.warnings) WarnOnce("placement: " + w);

  LeaderDecision out;
  out.next.leader = address_;
  out.next.assignment = std::move(r.assignment);
  out.next.assignment.insert(held.begin(), held.end());
  out.next.unassigned = std::move(r.unassigned);
  out.moves = std::move(r.moves);
  out.changed = !s.has_base || out.next.assignment != s.base.assignment || out.next.unassigned != s.base.unassigned;
  for (const auto& [id, until] : ghosts_) {
    if (!out.recheck_at || until < *out.recheck_at) out.recheck_at = until;
  }
  return out;
}

}  // namespace canal::coord::internal
