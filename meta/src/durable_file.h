// Crash-safe file replacement and the reads that go with it (POSIX).
//
// WriteFileDurably writes `<path>.tmp`, fsyncs it, renames it over `path` and
// fsyncs the directory, so after a crash at any instant `path` holds either
// its old or its new contents in full, never a mix. A leftover `.tmp` from a
// crash is overwritten by the next write. Callers serialise writes to one path.
#pragma once

#include <string>
#include <string_view>

#include "canal/common/status.h"

namespace canal::meta {

// An IOError "<what> <path>: <strerror(err)>".
Status ErrnoStatus(std::string_view what, const std::string& path, int err);

// mkdir -p; each directory it creates is made durable in its parent.
Status CreateDirectories(const std::string& path);

Status WriteFileDurably(const std::string& path, std::string_view contents);

// *exists = false (and OK) when the file is absent.
Status ReadWholeFile(const std::string& path, std::string* contents, bool* exists);

}  // namespace canal::meta
