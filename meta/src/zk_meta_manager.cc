#include "canal/meta/zk_meta_manager.h"

#include <algorithm>
#include <charconv>
#include <utility>
#include <vector>

#include "canal/coord/canal_layout.h"
#include "canal/meta/meta_json.h"
#include "meta_state.h"

namespace canal::meta {

namespace {


// Client nodes are named by the decimal client id (a Java short in Canal);
// siblings such as "cluster" and "running" are not clients.
std::optional<int16_t> ParseClientId(const std::string& name) {
  int16_t id = 0;
  const char* end = name.data() + name.size();
  auto [ptr, ec] = std::from_chars(name.data(), end, id);
  if (name.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  if (std::to_string(id) != name) return std::nullopt;  // "007", "+1": not what Canal writes
  return id;
}

ClientIdentity ClientOf(const std::string& destination, int16_t id) {
  ClientIdentity c;
  c.destination = destination;
  c.client_id = id;
  return c;
}

}  // namespace

std::string ZkMetaManager::DestinationPath(const std::string& destination) {
  return coord::layout::DestinationPath(destination);
}
std::string ZkMetaManager::ClientPath(const ClientIdentity& client) {
  return coord::layout::ClientPath(client.destination, std::to_string(client.client_id));
}
std::string ZkMetaManager::FilterPath(const ClientIdentity& client) {
  return coord::layout::ClientFilterPath(client.destination, std::to_string(client.client_id));
}
std::string ZkMetaManager::CursorPath(const ClientIdentity& client) {
  return coord::layout::ClientCursorPath(client.destination, std::to_string(client.client_id));
}

// One ZooKeeper change a flush makes.
struct ZkMetaManager::Write {
  enum class Kind { kSubscription, kCursor, kDelete } kind;
  int16_t client_id;
  std::string filter;  // kSubscription
  std::string body;    // kCursor
};

ZkMetaManager::ZkMetaManager(ZkMetaOptions options)
    : PersistentMetaManager(options.flush_period), options_(std::move(options)) {}

ZkMetaManager::~ZkMetaManager() { Stop().PermitUncheckedError(); }

Status ZkMetaManager::CheckBeforeStart() {
  if (options_.zk == nullptr) {
    return Status::InvalidArgument("ZkMetaManager: no ZooKeeper client given (ZkMetaOptions::zk)");
  }
  return Status::OK();
}

Status ZkMetaManager::Reload(const std::string& destination) { return Unload(destination, "Reload"); }

void ZkMetaManager::ForgetLocked(const std::string& destination) { written_[destination].clear(); }

void ZkMetaManager::ForgetAllLocked() { written_.clear(); }

Status ZkMetaManager::LoadFromStoreLocked(const std::string& destination) {
  coord::ZkClient* zk = options_.zk;
  const std::string context = "loading meta of destination " + destination + " from ZooKeeper";
  std::vector<std::string> names;
  Status s = zk->Children(DestinationPath(destination), &names);
  if (!s.ok() && !s.IsNotFound()) return s.WithContext(context);

  std::vector<int16_t> ids;
  for (const std::string& name : names) {
    if (auto id = ParseClientId(name)) ids.push_back(*id);
  }
  std::sort(ids.begin(), ids.end());

  DestinationMeta meta;
  meta.destination = destination;
  WrittenClients written;
  for (int16_t id : ids) {
    ClientMeta client;
    client.client = ClientOf(destination, id);
    std::string filter;
    s = zk->Get(FilterPath(client.client), &filter);
    if (!s.ok() && !s.IsNotFound()) return s.WithContext(context);
    client.client.filter = s.ok() ? filter : "";
    std::string body;
    int32_t version = -1;
    s = zk->GetVersioned(CursorPath(client.client), &body, &version);
    if (!s.ok() && !s.IsNotFound()) return s.WithContext(context);
    WrittenClient w;
    w.filter = client.client.filter;
    if (s.ok()) {
      w.cursor_version = version;
      LogPosition position;
      LogIdentity identity;
      Status d = DecodeCursor(body, &position, &identity);
      if (!d.ok()) return d.WithContext("cursor node " + CursorPath(client.client));
      client.cursor = position;
      client.cursor_identity = identity;
      // Our own encoding: an untouched cursor is not rewritten by the next flush.
      w.cursor_json = EncodeCursor(position, identity);
    }
    written.emplace(id, std::move(w));
    meta.clients.push_back(std::move(client));
  }
  state_->Restore(meta);
  written_[destination] = std::move(written);
  return Status::OK();
}

ZkMetaManager::PendingWrite ZkMetaManager::PrepareWriteLocked(const std::string& destination) {
  // Compare memory with what ZooKeeper holds: the writes to make.
  WrittenClients* written = &written_[destination];
  std::vector<Write> writes;
  const DestinationMeta meta = state_->Snapshot(destination);
  std::map<int16_t, bool> present;
  for (const ClientMeta& c : meta.clients) {
    present[c.client.client_id] = true;
    auto w = written->find(c.client.client_id);
    if (w == written->end() || w->second.filter != c.client.filter) {
      writes.push_back(Write{Write::Kind::kSubscription, c.client.client_id, c.client.filter, ""});
    }
    if (c.cursor) {
      std::string body = EncodeCursor(*c.cursor, c.cursor_identity);
      if (w == written->end() || w->second.cursor_json != body) {
        writes.push_back(Write{Write::Kind::kCursor, c.client.client_id, "", std::move(body)});
      }
    }
  }
  for (const auto& [id, w] : *written) {
    if (!present.count(id)) writes.push_back(Write{Write::Kind::kDelete, id, "", ""});
  }
  if (writes.empty()) return nullptr;
  return [this, destination, writes = std::move(writes), written] {
    return WriteNodes(destination, writes, written);
  };
}

Status ZkMetaManager::WriteNodes(const std::string& destination, const std::vector<Write>& writes,
                                 WrittenClients* written) {
  if (options_.write_fence) {
    CANAL_RETURN_IF_ERROR(
        options_.write_fence(destination).WithContext("writing meta of destination " + destination + " to ZooKeeper"));
  }
  coord::ZkClient* zk = options_.zk;
  for (const Write& w : writes) {
    const ClientIdentity client = ClientOf(destination, w.client_id);
    const std::string context = "writing meta of " + client.ToString() + " to ZooKeeper";
    switch (w.kind) {
      case Write::Kind::kSubscription: {
        bool created = false;
        CANAL_RETURN_IF_ERROR(
            zk->CreateNode(ClientPath(client), "", coord::ZkCreateMode::kPersistent, true, &created)
                .WithContext(context));
        // Canal writes a filter node only for a non-empty filter.
        if (w.filter.empty()) {
          CANAL_RETURN_IF_ERROR(zk->Delete(FilterPath(client)).WithContext(context));
        } else {
          CANAL_RETURN_IF_ERROR(zk->SetOrCreate(FilterPath(client), w.filter).WithContext(context));
        }
        zk_writes_.fetch_add(2, std::memory_order_relaxed);
        std::lock_guard lock(mu_);
        (*written)[w.client_id].filter = w.filter;
        break;
      }
      case Write::Kind::kCursor: {
        const std::string path = CursorPath(client);
        int32_t expected = -1, version = -1;
        std::string sent_before;
        {
          std::lock_guard lock(mu_);
          WrittenClient& known = (*written)[w.client_id];
          expected = known.cursor_version;
          sent_before = std::move(known.cursor_sent);
          known.cursor_sent = w.body;
        }
        Status s = zk->SetIfVersion(path, w.body, expected, &version);
        if (s.code() == Status::Code::kAborted && !sent_before.empty()) {
          // Our own last write may have landed without an answer (a timeout): then the node
          // holds exactly what we sent, and its version is ours to go on from.
          std::string now;
          int32_t now_version = -1;
          if (zk->GetVersioned(path, &now, &now_version).ok() && now == sent_before) {
            s = zk->SetIfVersion(path, w.body, now_version, &version);
          }
        }
        if (s.code() == Status::Code::kAborted) {
          return Status::Aborted("cursor of " + client.ToString() + " not written: " + std::string(s.message()) +
                                 "; another server has written it since this one read it, so this server no longer "
                                 "runs destination " + destination + " and keeps none of its cursors (fenced)");
        }
        CANAL_RETURN_IF_ERROR(s.WithContext(context));
        zk_writes_.fetch_add(1, std::memory_order_relaxed);
        std::lock_guard lock(mu_);
        WrittenClient& known = (*written)[w.client_id];
        known.cursor_json = w.body;
        known.cursor_version = version;
        break;
      }
      case Write::Kind::kDelete: {
        CANAL_RETURN_IF_ERROR(zk->Delete(ClientPath(client), true).WithContext(context));
        zk_writes_.fetch_add(1, std::memory_order_relaxed);
        std::lock_guard lock(mu_);
        written->erase(w.client_id);
        break;
      }
    }
  }
  return Status::OK();
}

}  // namespace canal::meta
