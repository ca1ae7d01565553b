#include "meta_file_writer.h"

#include <cerrno>
#include <cstring>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "durable_file.h"

namespace canal::meta {

MetaFileWriter::MetaFileWriter(std::string dir, std::string path) : dir_(std::move(dir)), path_(std::move(path)) {}

MetaFileWriter::~MetaFileWriter() { CloseLocked(); }

void MetaFileWriter::CloseLocked() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void MetaFileWriter::Adopt(const MetaFileContents& contents) {
  std::lock_guard lock(mu_);
  CloseLocked();
  form_ = contents.form;
  if (contents.form == MetaFileForm::kSlots) sequence_ = contents.sequence;
  newest_slot_ = contents.slot;
  slot_size_ = contents.slot_size;
  last_json_ = contents.json;
}

Status MetaFileWriter::Write(std::string_view json) {
  std::lock_guard lock(mu_);
  if (form_ == MetaFileForm::kSlots && MetaSlotBytes(json.size()) <= slot_size_) return WriteSlotLocked(json);
  return WriteWholeLocked(json);
}

Status MetaFileWriter::WriteWholeLocked(std::string_view json) {
  const uint64_t sequence = ++sequence_;
  const size_t slot_size = MetaSlotSizeFor(json.size());
  EncodeMetaSlot(sequence, json, &buffer_);
  // Slot 1 stays zero ("never written") until the first in-place write.
  std::string file(2 * slot_size, '\0');
  file.replace(0, buffer_.size(), buffer_);
  CANAL_RETURN_IF_ERROR(CreateDirectories(dir_));
  CANAL_RETURN_IF_ERROR(WriteFileDurably(path_, file));
  CloseLocked();  // an fd of the file the rename replaced
  form_ = MetaFileForm::kSlots;
  newest_slot_ = 0;
  slot_size_ = slot_size;
  last_json_.assign(json);
  ++whole_writes_;
  return Status::OK();
}

Status MetaFileWriter::WriteSlotLocked(std::string_view json) {
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) {
      // Removed by hand while we ran: a whole new file, as before slots.
      if (errno == ENOENT) return WriteWholeLocked(json);
      return ErrnoStatus("open", path_, errno);
    }
  }
  // Removed by hand while we ran (the file or its folder): writes into the
  // unlinked file would be lost, so make a new one, as a rename would have.
  struct stat st;
  if (::fstat(fd_, &st) != 0) return ErrnoStatus("fstat", path_, errno);
  if (st.st_nlink == 0) return WriteWholeLocked(json);
  const int target = newest_slot_ == 0 ? 1 : 0;
  // A failed write may leave the target slot torn: the seq still moves on and
  // the next write goes to the same slot, never to the one holding the newest state.
  EncodeMetaSlot(++sequence_, json, &buffer_);
  std::string_view rest = buffer_;
  off_t offset = static_cast<off_t>(target) * static_cast<off_t>(slot_size_);
  while (!rest.empty()) {
    const ssize_t n = ::pwrite(fd_, rest.data(), rest.size(), offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write", path_, errno);
    }
    rest.remove_prefix(static_cast<size_t>(n));
    offset += n;
  }
  // The file's size and blocks never change after it was made: fdatasync
  // flushes the slot without a journal commit for metadata.
  if (::fdatasync(fd_) != 0) return ErrnoStatus("fdatasync", path_, errno);
  newest_slot_ = target;
  last_json_.assign(json);
  ++slot_writes_;
  return Status::OK();
}

Status MetaFileWriter::WritePlain() {
  std::lock_guard lock(mu_);
  if (form_ != MetaFileForm::kSlots) return Status::OK();
  CANAL_RETURN_IF_ERROR(WriteFileDurably(path_, last_json_));
  CloseLocked();
  form_ = MetaFileForm::kPlainJson;
  return Status::OK();
}

uint64_t MetaFileWriter::whole_writes() const {
  std::lock_guard lock(mu_);
  return whole_writes_;
}

uint64_t MetaFileWriter::slot_writes() const {
  std::lock_guard lock(mu_);
  return slot_writes_;
}

}  // namespace canal::meta
