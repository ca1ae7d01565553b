#include <filesystem>

#include "canal/parser/binlog_source.h"

namespace canal::parser {

FileSource::FileSource(std::vector<std::string> paths, std::string start_file, uint64_t start_position)
    : paths_(std::move(paths)), start_file_(std::move(start_file)), start_position_(start_position) {}

std::unique_ptr<FileSource> FileSource::FromBuffer(std::string name, std::string bytes, uint64_t start_position) {
  auto source = std::make_unique<FileSource>(std::vector<std::string>{}, "", start_position);
  source->from_buffer_ = true;
  source->buffer_name_ = std::move(name);
  source->buffer_bytes_ = std::move(bytes);
  return source;
}

Status FileSource::OpenNext(binlog::EventDecoder* decoder) {
  const bool first = reader_ == nullptr;
  if (first) {
    reader_ = std::make_unique<binlog::BinlogFileReader>(decoder);
    if (!from_buffer_ && !start_file_.empty()) {
      while (next_path_ < paths_.size() &&
             std::filesystem::path(paths_[next_path_]).filename().string() != start_file_) {
        ++next_path_;
      }
      if (next_path_ == paths_.size()) {
        return Status::NotFound("start file " + start_file_ + " is not among the " + std::to_string(paths_.size()) +
                                " binlog files given");
      }
    }
    seek_pending_ = start_position_ > 4;
  }
  if (from_buffer_) {
    if (!first) return Status::NotFound(buffer_name_ + ": end of the binlog");
    file_ = buffer_name_;
    return reader_->OpenBuffer(buffer_name_, std::move(buffer_bytes_));
  }
  if (next_path_ >= paths_.size()) {
    return Status::NotFound(paths_.empty() ? "no binlog files given" : paths_.back() + ": end of the last binlog file");
  }
  const std::string& path = paths_[next_path_++];
  file_ = std::filesystem::path(path).filename().string();
  return reader_->Open(path);
}

Status FileSource::Next(binlog::EventDecoder* decoder, SourceEvent* out) {
  if (reader_ == nullptr) CANAL_RETURN_IF_ERROR(OpenNext(decoder));
  binlog::Event& ev = out->event;
  for (;;) {
    bool eof = false;
    CANAL_RETURN_IF_ERROR(reader_->Next(&ev, &eof));
    if (!eof) break;
    CANAL_RETURN_IF_ERROR(OpenNext(decoder));
  }
  out->file = file_;
  out->in_file = true;
  if (ev.in_payload) {
    out->inner = true;
    out->offset = outer_offset_;
    out->end = outer_end_;
    out->wire_bytes = 0;
    return Status::OK();
  }
  out->inner = false;
  out->offset = outer_offset_ = ev.offset;
  out->end = outer_end_ = reader_->position();
  out->wire_bytes = out->end - out->offset;
  if (seek_pending_) {
    // As a dump from a later position: the FORMAT_DESCRIPTION first, outside
    // the file's positions, then the events from the start position on.
    seek_pending_ = false;
    out->in_file = false;
    out->offset = out->end = start_position_;
    CANAL_RETURN_IF_ERROR(reader_->Seek(start_position_));
  }
  return Status::OK();
}

}  // namespace canal::parser
