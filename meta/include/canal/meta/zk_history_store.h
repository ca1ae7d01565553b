// ZkHistoryStore: a destination's schema history in ZooKeeper, so that the
// standby of a failover pair decodes MINIMAL-metadata binlogs exactly from
// wherever the active server's clients stopped.
//
//   /otter/canal/destinations/<dest>/schema_history          head: {"generation":N,"chunks":K,"bytes":B}
//   /otter/canal/destinations/<dest>/schema_history/gN-I     chunk I of generation N (<= 512 KiB each)
//
// ZooKeeper refuses nodes over 1 MiB, so the JSON document is cut into chunks.
// Save writes generation N+1's chunks first, then the head (the one write that
// switches readers over), then deletes older chunks: a reader, or a server
// that dies halfway, sees a whole old or a whole new history. The write fence
// (HA: "am I still active?") is asked before each Save.
#pragma once

#include <functional>
#include <string>

#include "canal/coord/zk_client.h"
#include "canal/schema/history_store.h"

namespace canal::meta {

class ZkHistoryStore final : public schema::HistoryStore {
 public:
  static constexpr size_t kChunkBytes = 512 * 1024;

  // `zk` must outlive the store. `write_fence` may be null.
  ZkHistoryStore(coord::ZkClient* zk, std::string destination,
                 std::function<Status(const std::string& destination)> write_fence = nullptr);

  Status Load(schema::HistoryLog* log) override;
  Status Save(const schema::HistoryLog& log) override;
  std::string Describe() const override { return "ZooKeeper " + head_; }

  static std::string HeadPath(const std::string& destination);

 private:
  struct Head {
    uint64_t generation = 0, chunks = 0, bytes = 0;
  };
  Status ReadHead(bool* exists, Head* head);

  coord::ZkClient* zk_;
  std::string destination_, head_;
  std::function<Status(const std::string&)> fence_;
};

}  // namespace canal::meta
