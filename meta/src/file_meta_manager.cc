#include "canal/meta/file_meta_manager.h"

#include <utility>
#include <vector>

#include "canal/meta/meta_json.h"
#include "durable_file.h"
#include "meta_state.h"

namespace canal::meta {

namespace {
constexpr char kMetaFileName[] = "meta.dat";
}  // namespace

FileMetaManager::FileMetaManager(FileMetaOptions options) : options_(std::move(options)) {}

FileMetaManager::~FileMetaManager() { Stop().PermitUncheckedError(); }

std::string FileMetaManager::MetaFilePath(const std::string& destination) const {
  return options_.data_dir + "/" + destination + "/" + kMetaFileName;
}

Status FileMetaManager::Start() {
  std::lock_guard lifecycle(lifecycle_mu_);
  {
    std::lock_guard lock(mu_);
    if (running_) return Status::OK();
  }
  if (options_.data_dir.empty()) return Status::InvalidArgument("FileMetaManager: data_dir is empty");
  CANAL_RETURN_IF_ERROR(CreateDirectories(options_.data_dir).WithContext("FileMetaManager start"));
  {
    std::lock_guard lock(mu_);
    state_->Clear();
    files_.clear();
    flusher_stop_ = false;
    background_status_ = Status::OK();
    running_ = true;
  }
  if (options_.flush_period.count() > 0) flusher_ = std::thread([this] { FlusherLoop(); });
  return Status::OK();
}

Status FileMetaManager::Stop() {
  std::lock_guard lifecycle(lifecycle_mu_);
  {
    std::lock_guard lock(mu_);
    running_ = false;  // refuse new calls: nothing changes while we write the last time
    flusher_stop_ = true;
  }
  flusher_cv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  std::vector<std::string> dirty;
  {
    std::lock_guard lock(mu_);
    for (const auto& [destination, file] : files_) {
      if (file->loaded && file->version > file->durable_version) dirty.push_back(destination);
    }
  }
  Status first;
  for (const std::string& destination : dirty) {
    Status s = FlushDestination(destination);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

Status FileMetaManager::Subscribe(const ClientIdentity& client) {
  CANAL_RETURN_IF_ERROR(MemoryMetaManager::Subscribe(client));
  return FlushDestination(client.destination);
}

Status FileMetaManager::Unsubscribe(const ClientIdentity& client) {
  CANAL_RETURN_IF_ERROR(MemoryMetaManager::Unsubscribe(client));
  return FlushDestination(client.destination);
}

Status FileMetaManager::Flush(const std::string& destination) {
  {
    std::lock_guard lock(mu_);
    CANAL_RETURN_IF_ERROR(EnterLocked(destination, "Flush"));
  }
  return FlushDestination(destination);
}

Status FileMetaManager::background_status() const {
  std::lock_guard lock(mu_);
  return background_status_;
}

Status FileMetaManager::LoadDestinationLocked(const std::string& destination) {
  std::unique_ptr<DestinationFile>& file = files_[destination];
  if (!file) file = std::make_unique<DestinationFile>();
  if (file->loaded) return Status::OK();
  // Read under mu_: it happens once per destination, and nothing may see the
  // destination half loaded.
  const std::string path = MetaFilePath(destination);
  std::string text;
  bool exists = false;
  CANAL_RETURN_IF_ERROR(ReadWholeFile(path, &text, &exists));
  if (exists) {
    DestinationMeta meta;
    CANAL_RETURN_IF_ERROR(DecodeMetaFile(text, &meta).WithContext("meta file " + path));
    if (meta.destination != destination) {
      return Status::Corruption("meta file " + path + ": destination \"" + meta.destination + "\" is not \"" +
                                destination + "\"");
    }
    state_->Restore(meta);
  }
  file->loaded = true;
  return Status::OK();
}

void FileMetaManager::MarkDirtyLocked(const std::string& destination) { ++files_[destination]->version; }

Status FileMetaManager::FlushDestination(const std::string& destination) {
  DestinationFile* file;
  uint64_t wanted;
  {
    std::lock_guard lock(mu_);
    auto it = files_.find(destination);
    if (it == files_.end() || !it->second->loaded) return Status::OK();
    file = it->second.get();
    wanted = file->version;
    if (file->durable_version >= wanted) return Status::OK();
  }
  std::lock_guard write_lock(file->write_mu);
  std::string json;
  uint64_t snapshot_version;
  {
    std::lock_guard lock(mu_);
    // A writer that held write_mu before us may have covered our changes:
    // this is where concurrent flushes coalesce into one write.
    if (file->durable_version >= wanted) return Status::OK();
    json = EncodeMetaFile(state_->Snapshot(destination));
    snapshot_version = file->version;
  }
  const std::string context = "writing meta of destination " + destination;
  CANAL_RETURN_IF_ERROR(CreateDirectories(options_.data_dir + "/" + destination).WithContext(context));
  CANAL_RETURN_IF_ERROR(WriteFileDurably(MetaFilePath(destination), json).WithContext(context));
  file_writes_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(mu_);
  if (snapshot_version > file->durable_version) file->durable_version = snapshot_version;
  return Status::OK();
}

void FileMetaManager::FlusherLoop() {
  std::unique_lock lock(mu_);
  while (!flusher_stop_) {
    if (flusher_cv_.wait_for(lock, options_.flush_period, [this] { return flusher_stop_; })) break;
    std::vector<std::string> dirty;
    for (const auto& [destination, file] : files_) {
      if (file->loaded && file->version > file->durable_version) dirty.push_back(destination);
    }
    lock.unlock();
    Status first;
    for (const std::string& destination : dirty) {
      Status s = FlushDestination(destination);
      if (!s.ok() && first.ok()) first = s;
    }
    lock.lock();
    background_status_ = first;
  }
}

}  // namespace canal::meta
