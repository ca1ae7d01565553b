#include "canal/meta/zk_history_store.h"

#include <nlohmann/json.hpp>

#include "canal/coord/canal_layout.h"
#include "canal/meta/zk_meta_manager.h"

namespace canal::meta {

namespace {

std::string ChunkName(uint64_t generation, uint64_t i) {
  return "g" + std::to_string(generation) + "-" + std::to_string(i);
}

}  // namespace

ZkHistoryStore::ZkHistoryStore(coord::ZkClient* zk, std::string destination,
                               std::function<Status(const std::string&)> write_fence)
    : zk_(zk), destination_(std::move(destination)), head_(HeadPath(destination_)), fence_(std::move(write_fence)) {}

std::string ZkHistoryStore::HeadPath(const std::string& destination) {
  return coord::layout::SchemaHistoryPath(destination);
}

Status ZkHistoryStore::ReadHead(bool* exists, Head* head) {
  CANAL_RETURN_IF_ERROR(zk_->Exists(head_, exists));
  if (!*exists) return Status::OK();
  std::string text;
  CANAL_RETURN_IF_ERROR(zk_->Get(head_, &text));
  if (text.empty()) {  // created as a parent, never written
    *exists = false;
    return Status::OK();
  }
  try {
    const auto j = nlohmann::json::parse(text);
    head->generation = j.at("generation").get<uint64_t>();
    head->chunks = j.at("chunks").get<uint64_t>();
    head->bytes = j.at("bytes").get<uint64_t>();
  } catch (const nlohmann::json::exception& e) {
    return Status::Corruption(head_ + ": not a schema history head: " + e.what());
  }
  return Status::OK();
}

Status ZkHistoryStore::Load(schema::HistoryLog* log) {
  bool exists = false;
  Head head;
  CANAL_RETURN_IF_ERROR(ReadHead(&exists, &head));
  if (!exists) return Status::NotFound("no schema history at " + Describe());
  std::string text;
  text.reserve(head.bytes);
  for (uint64_t i = 0; i < head.chunks; ++i) {
    std::string chunk;
    const std::string path = head_ + "/" + ChunkName(head.generation, i);
    CANAL_RETURN_IF_ERROR(zk_->Get(path, &chunk).WithContext("reading the schema history"));
    text += chunk;
  }
  if (text.size() != head.bytes) {
    return Status::Corruption(head_ + ": the chunks hold " + std::to_string(text.size()) + " bytes, the head says " +
                              std::to_string(head.bytes));
  }
  return schema::HistoryLog::FromJson(text, log).WithContext(Describe());
}

Status ZkHistoryStore::Save(const schema::HistoryLog& log) {
  if (fence_) CANAL_RETURN_IF_ERROR(fence_(destination_).WithContext("schema history write"));
  bool exists = false;
  Head old;
  CANAL_RETURN_IF_ERROR(ReadHead(&exists, &old));
  Head next;
  next.generation = exists ? old.generation + 1 : 1;
  const std::string text = log.ToJson();
  next.bytes = text.size();
  next.chunks = (text.size() + kChunkBytes - 1) / kChunkBytes;
  // SetOrCreate makes the head node (empty: "nothing stored") with the first chunk.
  for (uint64_t i = 0; i < next.chunks; ++i) {
    const std::string path = head_ + "/" + ChunkName(next.generation, i);
    CANAL_RETURN_IF_ERROR(zk_->SetOrCreate(path, std::string_view(text).substr(i * kChunkBytes, kChunkBytes))
                              .WithContext("writing the schema history"));
  }
  const nlohmann::json h = {{"generation", next.generation}, {"chunks", next.chunks}, {"bytes", next.bytes}};
  CANAL_RETURN_IF_ERROR(zk_->SetOrCreate(head_, h.dump()).WithContext("writing the schema history head"));
  // Older generations are garbage now; a failure here only leaves garbage.
  std::vector<std::string> names;
  if (zk_->Children(head_, &names).ok()) {
    const std::string keep = "g" + std::to_string(next.generation) + "-";
    for (const std::string& n : names) {
      if (n.rfind(keep, 0) != 0) zk_->Delete(head_ + "/" + n).PermitUncheckedError();
    }
  }
  return Status::OK();
}

}  // namespace canal::meta
