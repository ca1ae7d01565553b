// The operator's side of the placement (placement_coordinator.h): drain, pin,
// weight, and a read of the whole cluster, for canal-admin.
#include <charconv>
#include <cmath>

#include "canal/coord/placement_coordinator.h"
#include "canal/coord/zk_client.h"

namespace canal::coord {

namespace {

Status NoClient() { return Status::InvalidArgument("placement: no ZooKeeper client"); }

// Children of `path`; none when it does not exist.
Status ChildrenOrNone(ZkClient* zk, const std::string& path, std::vector<std::string>* names) {
  Status s = zk->Children(path, names);
  if (s.IsNotFound()) {
    names->clear();
    return Status::OK();
  }
  return s;
}

// Reads each child of `folder` and hands it to `take`; a child deleted
// meanwhile is skipped.
template <typename Take>
Status ForEachChild(ZkClient* zk, const std::string& folder, Take&& take) {
  std::vector<std::string> names;
  CANAL_RETURN_IF_ERROR(ChildrenOrNone(zk, folder, &names));
  for (const std::string& name : names) {
    const std::string path = folder + "/" + name;
    std::string body;
    Status s = zk->Get(path, &body);
    if (s.IsNotFound()) continue;
    CANAL_RETURN_IF_ERROR(s);
    take(name, path, body);
  }
  return Status::OK();
}

}  // namespace

Status SetDrain(ZkClient* zk, std::string_view address, bool draining) {
  if (zk == nullptr) return NoClient();
  if (!layout::ValidAddress(address)) {
    return Status::InvalidArgument("placement drain: '" + std::string(address) + "' is not a server's ip:port");
  }
  const std::string path = layout::PlacementDrainPath(address);
  if (!draining) return zk->Delete(path);
  bool created = false;
  return zk->CreateNode(path, "", ZkCreateMode::kPersistent, true, &created);
}

Status SetPin(ZkClient* zk, std::string_view destination, std::string_view address) {
  if (zk == nullptr) return NoClient();
  if (!layout::ValidNodeName(destination)) {
    return Status::InvalidArgument("placement pin: '" + std::string(destination) + "' is not a destination name");
  }
  const std::string path = layout::PlacementPinPath(destination);
  if (address.empty()) return zk->Delete(path);
  if (!layout::ValidAddress(address)) {
    return Status::InvalidArgument("placement pin: '" + std::string(address) + "' is not a server's ip:port");
  }
  return zk->SetOrCreate(path, address);
}

Status SetWeight(ZkClient* zk, std::string_view destination, double weight) {
  if (zk == nullptr) return NoClient();
  if (!layout::ValidNodeName(destination)) {
    return Status::InvalidArgument("placement weight: '" + std::string(destination) + "' is not a destination name");
  }
  const std::string path = layout::PlacementWeightPath(destination);
  if (weight == 0.0) return zk->Delete(path);
  if (!std::isfinite(weight) || weight < 0.0 || weight > 1e6) {
    return Status::InvalidArgument("placement weight: " + std::to_string(weight) +
                                   " is not a number > 0 and at most 1000000 (0 removes the weight)");
  }
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), weight);
  if (ec != std::errc()) return Status::InvalidArgument("placement weight: cannot write " + std::to_string(weight));
  return zk->SetOrCreate(path, std::string_view(buf, static_cast<size_t>(end - buf)));
}

Status ReadClusterView(ZkClient* zk, ClusterView* view) {
  if (zk == nullptr) return NoClient();
  ClusterView v;
  CANAL_RETURN_IF_ERROR(ForEachChild(zk, layout::PlacementServersPath(), [&](const std::string& name,
                                                                              const std::string& path,
                                                                              const std::string& body) {
    layout::ServerNode node;
    if (Status s = layout::ParseServerNode(path, body, &node); s.ok()) {
      v.servers.emplace(name, std::move(node));
    } else {
      v.unreadable[path] = std::string(s.message());
    }
  }));
  const std::string leader_path = layout::PlacementLeaderPath();
  std::string body;
  if (Status s = zk->Get(leader_path, &body); s.ok()) {
    if (Status p = layout::ParseLeader(leader_path, body, &v.leader); !p.ok()) {
      v.unreadable[leader_path] = std::string(p.message());
    }
  } else if (!s.IsNotFound()) {
    return s;
  }
  const std::string assignment_path = layout::PlacementAssignmentPath();
  if (Status s = zk->Get(assignment_path, &body); s.ok()) {
    Status p = layout::ParseAssignment(assignment_path, body, &v.assignment);
    v.has_assignment = p.ok();
    if (!p.ok()) v.unreadable[assignment_path] = std::string(p.message());
  } else if (!s.IsNotFound()) {
    return s;
  }
  std::vector<std::string> drained;
  CANAL_RETURN_IF_ERROR(ChildrenOrNone(zk, layout::PlacementDrainsPath(), &drained));
  v.drained.insert(drained.begin(), drained.end());
  CANAL_RETURN_IF_ERROR(ForEachChild(zk, layout::PlacementPinsPath(), [&](const std::string& name,
                                                                           const std::string& path,
                                                                           const std::string& pin) {
    std::string address;
    if (Status s = layout::ParsePin(path, pin, &address); s.ok()) {
      v.pins[name] = address;
    } else {
      v.unreadable[path] = std::string(s.message());
    }
  }));
  CANAL_RETURN_IF_ERROR(ForEachChild(zk, layout::PlacementWeightsPath(), [&](const std::string& name,
                                                                              const std::string& path,
                                                                              const std::string& text) {
    double w = 1.0;
    if (Status s = layout::ParseWeight(path, text, &w); s.ok()) {
      v.weights[name] = w;
    } else {
      v.unreadable[path] = std::string(s.message());
    }
  }));
  *view = std::move(v);
  return Status::OK();
}

}  // namespace canal::coord
