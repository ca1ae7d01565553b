#include "canal/meta/file_meta_manager.h"

#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "canal/meta/meta_file.h"
#include "canal/meta/meta_json.h"
#include "durable_file.h"
#include "meta_file_writer.h"
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

MetaFileWriter* FileMetaManager::WriterFor(const std::string& destination) {
  std::lock_guard lock(writers_mu_);
  std::unique_ptr<MetaFileWriter>& writer = writers_[destination];
  if (!writer) {
    writer = std::make_unique<MetaFileWriter>(options_.data_dir + "/" + destination, MetaFilePath(destination));
  }
  return writer.get();
}

Status FileMetaManager::CheckBeforeStart() {
  if (options_.data_dir.empty()) return Status::InvalidArgument("FileMetaManager: data_dir is empty");
  return CreateDirectories(options_.data_dir).WithContext("FileMetaManager start");
}

Status FileMetaManager::Stop() {
  Status first = PersistentMetaManager::Stop();
  std::vector<std::pair<std::string, MetaFileWriter*>> writers;
  {
    std::lock_guard lock(writers_mu_);
    for (const auto& [destination, writer] : writers_) writers.emplace_back(destination, writer.get());
  }
  for (const auto& [destination, writer] : writers) {
    Status s = writer->WritePlain().WithContext("writing meta of destination " + destination + " as plain JSON");
    if (!s.ok() && first.ok()) first = std::move(s);
  }
  return first;
}

Status FileMetaManager::LoadFromStoreLocked(const std::string& destination) {
  const std::string path = MetaFilePath(destination);
  MetaFileContents contents;
  CANAL_RETURN_IF_ERROR(ReadMetaFile(path, &contents));
  MetaFileWriter* writer = WriterFor(destination);
  if (contents.form == MetaFileForm::kAbsent) {
    writer->Adopt(contents);
    return Status::OK();  // an empty destination
  }
  DestinationMeta meta;
  CANAL_RETURN_IF_ERROR(DecodeMetaFile(contents.json, &meta).WithContext("meta file " + path));
  if (meta.destination != destination) {
    return Status::Corruption("meta file " + path + ": destination \"" + meta.destination + "\" is not \"" +
                              destination + "\"");
  }
  if (contents.form == MetaFileForm::kPlainJson) {
    spdlog::info("meta file {}: read Canal's plain JSON ({} clients); while running, the server keeps it as two "
                 "checksummed slots, and writes plain JSON again at a clean stop",
                 path, meta.clients.size());
  } else {
    // Slots at load: the last run did not stop cleanly (or is being reloaded).
    spdlog::info("meta file {}: read slot {} (seq {}, {} clients) of the two-slot form", path, contents.slot,
                 contents.sequence, meta.clients.size());
    if (!contents.other_slot.empty()) {
      spdlog::warn("meta file {}: {}; a write cut short by a crash leaves this, and the next write replaces it",
                   path, contents.other_slot);
    }
  }
  writer->Adopt(contents);
  state_->Restore(meta);
  return Status::OK();
}

FileMetaManager::PendingWrite FileMetaManager::PrepareWriteLocked(const std::string& destination) {
  return [this, destination, writer = WriterFor(destination), json = EncodeMetaFile(state_->Snapshot(destination))] {
    const uint64_t slots_before = writer->slot_writes();
    CANAL_RETURN_IF_ERROR(writer->Write(json).WithContext("writing meta of destination " + destination));
    file_writes_.fetch_add(1, std::memory_order_relaxed);
    slot_writes_.fetch_add(writer->slot_writes() - slots_before, std::memory_order_relaxed);
    return Status::OK();
  };
}

}  // namespace canal::meta
