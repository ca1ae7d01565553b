#include "canal/coord/placement.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

namespace canal::coord {

namespace {

struct Server {
  uint32_t cap = 0;
  bool draining = false;
  const std::set<std::string>* destinations = nullptr;
  size_t count = 0;   // destinations assigned so far
  double load = 0.0;  // their weights, summed
};

struct Dest {
  double weight = 1.0;
  std::set<std::string> preferred;  // known servers only
  std::set<std::string> excluded;
  std::string pin;  // a known server, or ""
  bool pinned = false;  // placed by its pin: rebalance leaves it alone
  bool moved = false;   // rebalance moved it once already
};

// Loads are sums of doubles: compare with a little slack so that rounding
// never makes a move look like an improvement.
constexpr double kEps = 1e-9;

class Placer {
 public:
  explicit Placer(const PlacementInput& in) : in_(in) {}

  PlacementResult Run() {
    ReadServers();
    ReadDestinations();
    PlacePinned();
    KeepSticky();
    PlaceRest();
    Rebalance();
    ListMoves();
    return std::move(r_);
  }

 private:
  void ReadServers() {
    for (const PlacementServer& s : in_.servers) {
      if (s.id.empty()) {
        r_.warnings.push_back("a server without an id was ignored");
        continue;
      }
      Server server{s.cap, s.draining, &s.destinations};
      if (!servers_.emplace(s.id, server).second) {
        r_.warnings.push_back("server " + s.id + " is listed twice: the first entry was used");
      }
    }
  }

  void ReadDestinations() {
    for (const PlacementDestination& d : in_.destinations) {
      if (d.name.empty()) {
        r_.warnings.push_back("a destination without a name was ignored");
        continue;
      }
      if (dests_.count(d.name) != 0) {
        r_.warnings.push_back("destination " + d.name + " is listed twice: the first entry was used");
        continue;
      }
      Dest dest;
      // (!(w > 0) is also true for NaN.)
      if (!(d.weight > 0.0) || !std::isfinite(d.weight)) {
        r_.warnings.push_back("destination " + d.name + " has weight " + std::to_string(d.weight) +
                              ": counted as 1 (a weight must be a finite number > 0)");
      } else {
        dest.weight = d.weight;
      }
      for (const std::string& id : d.preferred) {
        if (servers_.count(id) != 0) dest.preferred.insert(id);
      }
      for (const std::string& id : d.excluded) {
        if (servers_.count(id) != 0) dest.excluded.insert(id);
      }
      if (!d.pin.empty()) {
        if (servers_.count(d.pin) != 0) {
          dest.pin = d.pin;
        } else {
          r_.warnings.push_back("destination " + d.name + " is pinned to " + d.pin +
                                ", which is not a live server: pin ignored");
        }
      }
      dests_.emplace(d.name, std::move(dest));
    }
  }

  bool Eligible(const std::string& name, const Dest& d, const std::string& id) const {
    auto it = servers_.find(id);
    if (it == servers_.end()) return false;
    const Server& s = it->second;
    return !s.draining && s.destinations->count(name) != 0 && d.excluded.count(id) == 0;
  }
  static bool UnderCap(const Server& s) { return s.cap == 0 || s.count < s.cap; }

  void Assign(const std::string& name, const std::string& id) {
    Server& s = servers_.at(id);
    s.count += 1;
    s.load += dests_.at(name).weight;
    r_.assignment[name] = id;
  }
  void Unassign(const std::string& name) {
    auto it = r_.assignment.find(name);
    Server& s = servers_.at(it->second);
    s.count -= 1;
    s.load -= dests_.at(name).weight;
    r_.assignment.erase(it);
  }

  // Least loaded first; ties by count, then id.
  static bool Lighter(const std::string& a_id, const Server& a, const std::string& b_id, const Server& b) {
    return std::tie(a.load, a.count, a_id) < std::tie(b.load, b.count, b_id);
  }

  void PlacePinned() {
    for (auto& [name, d] : dests_) {
      if (d.pin.empty()) continue;
      if (Eligible(name, d, d.pin) && UnderCap(servers_.at(d.pin))) {
        Assign(name, d.pin);
        d.pinned = true;
      } else {
        r_.warnings.push_back("destination " + name + " is pinned to " + d.pin +
                              ", which cannot take it (it does not list it, is draining, is excluded or is at its "
                              "cap): pin not honoured");
      }
    }
  }

  void KeepSticky() {
    for (auto& [name, d] : dests_) {
      if (r_.assignment.count(name) != 0) continue;
      auto prev = in_.previous.find(name);
      if (prev == in_.previous.end() || prev->second.empty()) continue;
      // A valid pin elsewhere has been honoured above; an unhonoured one does not stop it staying.
      if (Eligible(name, d, prev->second) && UnderCap(servers_.at(prev->second))) Assign(name, prev->second);
    }
  }

  // The least loaded server `name` may go to (under cap), preferring its
  // preferred servers when one qualifies; nullopt when none.
  std::optional<std::string> Target(const std::string& name, const Dest& d, bool preferred_only,
                                    const std::string& except) const {
    const std::string* best = nullptr;
    const Server* best_s = nullptr;
    for (int pass = 0; pass < 2 && best == nullptr; ++pass) {
      const bool want_preferred = pass == 0;
      if (!want_preferred && preferred_only) break;
      if (want_preferred && d.preferred.empty()) continue;
      for (const auto& [id, s] : servers_) {
        if (id == except || !Eligible(name, d, id) || !UnderCap(s)) continue;
        if (want_preferred && d.preferred.count(id) == 0) continue;
        if (best == nullptr || Lighter(id, s, *best, *best_s)) {
          best = &id;
          best_s = &s;
        }
      }
    }
    if (best == nullptr) return std::nullopt;
    return *best;
  }

  std::string WhyUnplaced(const std::string& name, const Dest& d) const {
    bool listed = false;
    bool eligible = false;
    for (const auto& [id, s] : servers_) {
      if (s.destinations->count(name) == 0) continue;
      listed = true;
      eligible = eligible || Eligible(name, d, id);
    }
    if (!listed) {
      return "no live server lists it in its conf (add its folder to a server's conf, or start a server that has it)";
    }
    if (!eligible) {
      return "every eligible server is excluded or draining (every server that lists it is in its excluded list or "
             "draining: end a drain, or list it on another server)";
    }
    return "every server that can run it is at its cap (canal.cluster.max.destinations): raise the cap or add a "
           "server that lists it";
  }

  void PlaceRest() {
    std::vector<std::string> order;
    for (const auto& [name, d] : dests_) {
      if (r_.assignment.count(name) == 0) order.push_back(name);
    }
    // Heaviest first balances better; names (unique) make the order total.
    std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
      return dests_.at(a).weight > dests_.at(b).weight;
    });
    for (const std::string& name : order) {
      const Dest& d = dests_.at(name);
      std::optional<std::string> to = Target(name, d, false, "");
      if (to) {
        Assign(name, *to);
      } else {
        r_.unassigned[name] = WhyUnplaced(name, d);
      }
    }
  }

  void Rebalance() {
    // Each round applies the single best move; it strictly lowers the sum of
    // squared loads, and each destination moves once at most: it ends.
    for (;;) {
      const std::string* best_name = nullptr;
      std::string best_to;
      double best_gain = 0.0;
      // No target is lighter than the lightest server: prunes most candidates cheaply.
      double floor = std::numeric_limits<double>::infinity();
      for (const auto& [id, s] : servers_) {
        if (!s.draining) floor = std::min(floor, s.load);
      }
      for (const auto& [name, id] : r_.assignment) {
        const Dest& d = dests_.at(name);
        if (d.pinned || d.moved) continue;
        const Server& from = servers_.at(id);
        const double bound = from.load - floor - d.weight;
        if (bound <= kEps * std::max(1.0, d.weight)) continue;
        if (best_name != nullptr && d.weight * bound <= best_gain + kEps) continue;
        // Off a preferred server only onto another preferred one.
        const bool on_preferred = d.preferred.count(id) != 0;
        std::optional<std::string> to = Target(name, d, on_preferred, id);
        if (!to) continue;
        const double diff = from.load - servers_.at(*to).load - d.weight;
        if (diff <= kEps * std::max(1.0, d.weight)) continue;
        const double gain = d.weight * diff;
        if (best_name == nullptr || gain > best_gain + kEps) {
          best_name = &name;
          best_to = *to;
          best_gain = gain;
        }
      }
      if (best_name == nullptr) return;
      const std::string name = *best_name;  // (Unassign invalidates the pointer)
      Unassign(name);
      Assign(name, best_to);
      dests_.at(name).moved = true;
    }
  }

  void ListMoves() {
    std::set<std::string> names;
    for (const auto& [name, id] : in_.previous) {
      if (!id.empty()) names.insert(name);
    }
    for (const auto& [name, id] : r_.assignment) names.insert(name);
    for (const std::string& name : names) {
      auto p = in_.previous.find(name);
      auto a = r_.assignment.find(name);
      const std::string from = p != in_.previous.end() ? p->second : "";
      const std::string to = a != r_.assignment.end() ? a->second : "";
      if (from != to) r_.moves.push_back(PlacementMove{name, from, to});
    }
  }

  const PlacementInput& in_;
  std::map<std::string, Server> servers_;
  std::map<std::string, Dest> dests_;
  PlacementResult r_;
};

}  // namespace

PlacementResult Place(const PlacementInput& input) { return Placer(input).Run(); }

std::map<std::string, double> LoadFactors(const std::map<std::string, double>& bytes_per_second) {
  std::map<std::string, double> out;
  double sum = 0.0;
  size_t n = 0;
  for (const auto& [name, rate] : bytes_per_second) {
    if (std::isfinite(rate) && rate >= 0.0) {
      sum += rate;
      ++n;
    }
  }
  const double mean = n > 0 ? sum / static_cast<double>(n) : 0.0;
  // Only busy destinations weigh more: one is compared with the mean, but never with less than
  // kBusyBytesPerSecond, so the trickle of an idle cluster (a start's first events, heartbeats)
  // weighs nothing and moves nothing. Every other destination, idle, unmeasured (not running
  // anywhere yet) or below the mean, counts 1: it still holds a binlog connection and a ring.
  const double base = std::max(mean, kBusyBytesPerSecond);
  for (const auto& [name, rate] : bytes_per_second) {
    double factor = 1.0;
    if (n >= 2 && std::isfinite(mean) && std::isfinite(rate) && rate > base) {
      factor = std::clamp(std::exp2(std::round(std::log2(rate / base))), 1.0, 8.0);
    }
    out[name] = factor;
  }
  return out;
}

}  // namespace canal::coord
