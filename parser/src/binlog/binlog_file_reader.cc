#include "canal/parser/binlog/binlog_file_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace canal::binlog {

namespace {

constexpr uint8_t kMagic[4] = {0xFE, 'b', 'i', 'n'};
constexpr uint64_t kMaxFileSize = uint64_t{4} << 30;

Status ReadPlainFile(const std::string& path, std::string* out) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Status::IOError(path + ": cannot open: " + std::strerror(errno));
  out->clear();
  // One allocation of the file's size, then reads straight into it.
  std::error_code ec;
  const uint64_t expect = std::filesystem::file_size(path, ec);
  if (!ec && expect > kMaxFileSize) {
    std::fclose(f);
    return Status::InvalidArgument(path + ": larger than 4 GiB, not a binlog file");
  }
  if (!ec) out->resize(expect);
  size_t got = 0, n;
  while (true) {
    if (got == out->size()) out->resize(out->size() + (1 << 16));  // file grew while reading
    n = std::fread(out->data() + got, 1, out->size() - got, f);
    if (n == 0) break;
    got += n;
    if (got > kMaxFileSize) {
      std::fclose(f);
      return Status::InvalidArgument(path + ": larger than 4 GiB, not a binlog file");
    }
  }
  out->resize(got);
  bool err = std::ferror(f);
  std::fclose(f);
  if (err) return Status::IOError(path + ": read failed");
  return Status::OK();
}

Status ReadGzipFile(const std::string& path, std::string* out) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return Status::IOError(path + ": cannot open: " + std::strerror(errno));
  out->clear();
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) {
    out->append(buf, static_cast<size_t>(n));
    if (out->size() > kMaxFileSize) {
      gzclose(f);
      return Status::InvalidArgument(path + ": inflates past 4 GiB, not a binlog file");
    }
  }
  int errnum = Z_OK;
  const char* msg = gzerror(f, &errnum);
  std::string why = msg ? msg : "";
  gzclose(f);
  if (n < 0 || (errnum != Z_OK && errnum != Z_STREAM_END)) return Status::Corruption(path + ": gzip: " + why);
  return Status::OK();
}

bool LooksLikeBinlogName(const std::string& name) {
  // name.NNNNNN (the server's numbered files); also *.binlog / *.bin used by fixtures.
  size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot + 1 >= name.size()) return false;
  std::string ext = name.substr(dot + 1);
  if (std::all_of(ext.begin(), ext.end(), [](char c) { return c >= '0' && c <= '9'; })) return true;
  return ext == "binlog" || ext == "bin";
}

}  // namespace

BinlogFileReader::BinlogFileReader(EventDecoder* decoder) : decoder_(decoder) {}
BinlogFileReader::~BinlogFileReader() { Close(); }

void BinlogFileReader::Close() {
  if (map_ != nullptr) munmap(map_, map_length_);
  map_ = nullptr;
  map_length_ = 0;
  data_.clear();
  base_ = nullptr;
  size_ = 0;
  pos_ = 0;
}

Status BinlogFileReader::Open(const std::string& path) {
  std::string bytes;
  Status s;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Status::IOError(path + ": cannot open: " + std::strerror(errno));
  unsigned char head[2] = {0, 0};
  size_t got = std::fread(head, 1, 2, f);
  std::fclose(f);
  if (got == 2 && head[0] == 0x1f && head[1] == 0x8b) {
    s = ReadGzipFile(path, &bytes);
    if (!s.ok()) return s;
    return OpenBuffer(path, std::move(bytes));
  }
  // Map the file: no copy through a read buffer, pages come in as decoded.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      static_cast<uint64_t>(st.st_size) <= kMaxFileSize) {
    void* m = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (m != MAP_FAILED) {
      ::madvise(m, static_cast<size_t>(st.st_size), MADV_SEQUENTIAL);
      Close();
      map_ = m;
      map_length_ = static_cast<size_t>(st.st_size);
      return Start(path, static_cast<const char*>(m), map_length_);
    }
  } else if (fd >= 0) {
    ::close(fd);
  }
  s = ReadPlainFile(path, &bytes);
  if (!s.ok()) return s;
  return OpenBuffer(path, std::move(bytes));
}

Status BinlogFileReader::OpenBuffer(std::string name, std::string bytes) {
  Close();
  data_ = std::move(bytes);
  return Start(std::move(name), data_.data(), data_.size());
}

Status BinlogFileReader::Start(std::string name, const char* base, size_t size) {
  name_ = std::move(name);
  base_ = base;
  size_ = size;
  pos_ = 0;
  decoder_->ResetForNewSource();
  decoder_->set_source_name(name_);
  if (size_ < 4 || std::memcmp(base_, kMagic, 4) != 0) {
    char got[32] = "";
    if (size_ >= 4) {
      std::snprintf(got, sizeof got, " (found %02X %02X %02X %02X)", static_cast<uint8_t>(base_[0]),
                    static_cast<uint8_t>(base_[1]), static_cast<uint8_t>(base_[2]), static_cast<uint8_t>(base_[3]));
    }
    return Status::Corruption(name_ + ": offset 0: not a binlog file: missing magic FE 62 69 6E" + got);
  }
  pos_ = 4;
  return Status::OK();
}

Status BinlogFileReader::Next(Event* event, bool* eof) {
  *eof = false;
  if (decoder_->has_pending_inner()) {
    bool done = false;
    CANAL_RETURN_IF_ERROR(decoder_->NextInner(event, &done));
    if (!done) return Status::OK();
  }
  if (pos_ >= size_) {
    *eof = true;
    return Status::OK();
  }
  const uint8_t* p = reinterpret_cast<const uint8_t*>(base_) + pos_;
  const size_t avail = size_ - pos_;
  uint32_t size = 0;
  CANAL_RETURN_IF_ERROR(decoder_->PeekEventSize(p, avail, pos_, &size));
  if (size > avail) {
    return Status::Truncated(name_ + ": offset " + std::to_string(pos_) + ": file ends inside a " +
                             EventTypeLabel(p[4]) + " event of " + std::to_string(size) + " bytes (" +
                             std::to_string(avail) + " present)");
  }
  const uint64_t at = pos_;
  pos_ += size;
  return decoder_->Decode(p, size, at, event);
}

Status BinlogFileReader::Seek(uint64_t position) {
  if (decoder_->has_pending_inner() || position < pos_ || position > size_) {
    return Status::InvalidArgument(name_ + ": cannot start at offset " + std::to_string(position) + " (the file has " +
                                   std::to_string(size_) + " bytes, reading is at " + std::to_string(pos_) + ")");
  }
  pos_ = position;
  return Status::OK();
}

Status ExpandBinlogPaths(const std::vector<std::string>& args, std::vector<std::string>* files) {
  namespace fs = std::filesystem;
  files->clear();
  for (const auto& a : args) {
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::directory_iterator(a, ec)) {
        if (e.is_regular_file(ec) && LooksLikeBinlogName(e.path().filename().string())) {
          found.push_back(e.path().string());
        }
      }
      if (ec) return Status::IOError(a + ": cannot list directory: " + ec.message());
      std::sort(found.begin(), found.end());
      if (found.empty()) return Status::NotFound(a + ": no binlog files (name.NNNNNN) in this directory");
      files->insert(files->end(), found.begin(), found.end());
    } else if (fs::exists(a, ec)) {
      files->push_back(a);
    } else {
      return Status::NotFound(a + ": no such file or directory");
    }
  }
  return Status::OK();
}

}  // namespace canal::binlog
