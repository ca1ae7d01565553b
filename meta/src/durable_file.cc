#include "durable_file.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace canal::meta {

Status ErrnoStatus(std::string_view what, const std::string& path, int err) {
  std::string m(what);
  m += " ";
  m += path;
  m += ": ";
  m += std::strerror(err);
  return Status::IOError(m);
}

namespace {

Status Errno(std::string_view what, const std::string& path, int err) { return ErrnoStatus(what, path, err); }

std::string Parent(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// A new or renamed entry is durable only once its directory is synced.
Status SyncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("open directory", dir, errno);
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) return Errno("fsync directory", dir, err);
  return Status::OK();
}

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("write", path, errno);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::OK();
}

}  // namespace

Status CreateDirectories(const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("CreateDirectories: empty path");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::OK();
    return Status::IOError(path + " exists and is not a directory");
  }
  std::string parent = Parent(path);
  if (parent != path) CANAL_RETURN_IF_ERROR(CreateDirectories(parent));
  if (::mkdir(path.c_str(), 0755) != 0) {
    if (errno == EEXIST && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return Status::OK();
    return Errno("mkdir", path, errno);
  }
  return SyncDirectory(parent);
}

Status WriteFileDurably(const std::string& path, std::string_view contents) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("open", tmp, errno);
  Status s = WriteAll(fd, contents, tmp);
  if (s.ok() && ::fsync(fd) != 0) s = Errno("fsync", tmp, errno);
  if (::close(fd) != 0 && s.ok()) s = Errno("close", tmp, errno);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return Errno("rename " + tmp + " to", path, err);
  }
  return SyncDirectory(Parent(path));
}

Status ReadWholeFile(const std::string& path, std::string* contents, bool* exists) {
  contents->clear();
  *exists = false;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::OK();
    return Errno("open", path, errno);
  }
  *exists = true;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return Errno("read", path, err);
    }
    if (n == 0) break;
    contents->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return Status::OK();
}

}  // namespace canal::meta
