// AdminOperations: instance.properties read and written, the log tail and the
// snapshot request (the cursor reset is in cursor_reset.cc).
#include "canal/server/admin_operations.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "canal/server/instance.h"
#include "canal/server/instance_registry.h"
#include "file_text.h"

namespace canal::server {

namespace {

namespace fs = std::filesystem;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// Writes `text` to `path` so that a reader sees the old file or the new one,
// never a part: a temporary file beside it, flushed, renamed over it.
Status WriteAtomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".admin-tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError(Errno("cannot create " + tmp.string()));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const Status s = Status::IOError(Errno("cannot write " + tmp.string()));
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const Status s = Status::IOError(Errno("cannot sync " + tmp.string()));
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const Status s = Status::IOError(Errno("cannot rename " + tmp.string() + " to " + path.string()));
    ::unlink(tmp.c_str());
    return s;
  }
  const int dir = ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return Status::OK();
}

}  // namespace

AdminOperations::AdminOperations(const CanalConfig& canal, InstanceRegistry* registry, meta::MetaManager* meta,
                                 std::string logs_dir, std::shared_ptr<spdlog::logger> logger)
    : canal_(canal),
      registry_(registry),
      meta_(meta),
      logs_dir_(std::move(logs_dir)),
      log_(logger ? std::move(logger) : spdlog::default_logger()) {}

Status AdminOperations::ReadConfig(std::string_view destination, std::string* path, std::string* text) {
  const std::string name(destination);
  if (!registry_->Knows(name)) return Status::NotFound("no destination '" + name + "' on this server");
  *path = InstancePropertiesPath(canal_, name);
  std::optional<std::string> read = ReadFileText(*path, kMaxConfigBytes);
  if (!read) {
    return Status::IOError("cannot read " + *path + " (missing, unreadable, or larger than " +
                           std::to_string(kMaxConfigBytes) + " bytes)");
  }
  *text = std::move(*read);
  return Status::OK();
}

Status AdminOperations::WriteConfig(std::string_view destination, const std::string& text, bool dry_run,
                                    std::string* result) {
  const std::string name(destination);
  std::string path, old_text;
  CANAL_RETURN_IF_ERROR(ReadConfig(destination, &path, &old_text));
  if (text.size() > kMaxConfigBytes) {
    return Status::InvalidArgument("the new instance.properties is larger than " + std::to_string(kMaxConfigBytes) +
                                   " bytes");
  }
  // The parser the server starts with: what it refuses here it would refuse at a start.
  InstanceConfig parsed;
  CANAL_RETURN_IF_ERROR(ParseInstanceConfig(canal_, name, path, text, &parsed));
  if (dry_run) {
    *result = "valid; nothing written (dry run)";
    return Status::OK();
  }
  if (text == old_text) {
    *result = "unchanged; nothing written";
    return Status::OK();
  }
  CANAL_RETURN_IF_ERROR(WriteAtomically(path, text));
  log_->info("admin: {} rewritten ({} -> {} bytes)", path, old_text.size(), text.size());
  if (registry_->Held(name).stopped_by_operator) {
    *result = "written; the destination is held stopped, so the new settings apply at its next start";
    return Status::OK();
  }
  std::string done;
  Status s = registry_->Control(name, OperatorAction::kRestart, &done);
  if (!s.ok()) {
    return s.WithContext("written to " + path + ", but the destination did not start with it (the file stays; fix "
                         "it and post again)");
  }
  *result = "written and applied: " + done;
  return Status::OK();
}

Status AdminOperations::TailLog(std::string_view destination, size_t lines, std::string* text, bool* truncated) {
  const std::string name(destination);
  // Only a known name reaches the file system: a name is never a path.
  if (!registry_->Knows(name)) return Status::NotFound("no destination '" + name + "' on this server");
  lines = std::min(std::max<size_t>(lines, 1), kMaxTailLines);
  const fs::path file = fs::path(logs_dir_) / name / (name + ".log");
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) return Status::NotFound("no log yet at " + file.string());
  const std::streamoff size = in.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - static_cast<std::streamoff>(kMaxTailBytes));
  in.seekg(from);
  std::string buf(static_cast<size_t>(size - from), '\0');
  in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
  buf.resize(static_cast<size_t>(in.gcount()));
  // Back from the end over `lines` newlines (a last line without one counts).
  size_t start = buf.size();
  size_t seen = 0;
  if (start > 0 && buf[start - 1] == '\n') --start;
  while (start > 0) {
    if (buf[start - 1] == '\n' && ++seen == lines) break;
    --start;
  }
  *truncated = start > 0 || from > 0;
  if (start == 0 && from > 0) {
    // The window began mid-line: drop that part line.
    const size_t nl = buf.find('\n');
    start = nl == std::string::npos ? buf.size() : nl + 1;
  }
  *text = buf.substr(start);
  return Status::OK();
}

Status AdminOperations::Snapshot(std::string_view destination, const std::vector<std::string>& tables,
                                 const std::string& where, std::string* id) {
  const std::string name(destination);
  for (const auto& [n, instance] : registry_->Destinations()) {
    if (n != name) continue;
    auto* running = dynamic_cast<Instance*>(instance.get());
    if (running == nullptr || !running->running()) {
      return Status::InvalidArgument("destination " + name + " is not running here; start it first");
    }
    return running->RequestSnapshot(tables, where, id);
  }
  return Status::NotFound("no destination '" + name + "' on this server");
}

}  // namespace canal::server
