#include "canal/meta/file_meta_manager.h"

#include <utility>

#include "canal/meta/meta_json.h"
#include "durable_file.h"
#include "meta_state.h"

namespace canal::meta {

namespace {
constexpr char kMetaFileName[] = "meta.dat";
}  // namespace

FileMetaManager::FileMetaManager(FileMetaOptions options)
    : PersistentMetaManager(options.flush_period), options_(std::move(options)) {}

FileMetaManager::~FileMetaManager() { Stop().PermitUncheckedError(); }

std::string FileMetaManager::MetaFilePath(const std::string& destination) const {
  return options_.data_dir + "/" + destination + "/" + kMetaFileName;
}

Status FileMetaManager::CheckBeforeStart() {
  if (options_.data_dir.empty()) return Status::InvalidArgument("FileMetaManager: data_dir is empty");
  return CreateDirectories(options_.data_dir).WithContext("FileMetaManager start");
}

Status FileMetaManager::LoadFromStoreLocked(const std::string& destination) {
  const std::string path = MetaFilePath(destination);
  std::string text;
  bool exists = false;
  CANAL_RETURN_IF_ERROR(ReadWholeFile(path, &text, &exists));
  if (!exists) return Status::OK();  // an empty destination
  DestinationMeta meta;
  CANAL_RETURN_IF_ERROR(DecodeMetaFile(text, &meta).WithContext("meta file " + path));
  if (meta.destination != destination) {
    return Status::Corruption("meta file " + path + ": destination \"" + meta.destination + "\" is not \"" +
                              destination + "\"");
  }
  state_->Restore(meta);
  return Status::OK();
}

FileMetaManager::PendingWrite FileMetaManager::PrepareWriteLocked(const std::string& destination) {
  return [this, destination, json = EncodeMetaFile(state_->Snapshot(destination))] {
    const std::string context = "writing meta of destination " + destination;
    CANAL_RETURN_IF_ERROR(CreateDirectories(options_.data_dir + "/" + destination).WithContext(context));
    CANAL_RETURN_IF_ERROR(WriteFileDurably(MetaFilePath(destination), json).WithContext(context));
    file_writes_.fetch_add(1, std::memory_order_relaxed);
    return Status::OK();
  };
}

}  // namespace canal::meta
