// One text line per row change ("db.table INSERT after: id=1 name=x"), the
// same from every source, so that what the live replica, the file decoder and
// a Canal client received can be compared line for line.
//
// Values are Canal's Column.value strings (render::AppendCanalValue with the
// default options); a NULL is "NULL", a column absent from the row image is
// left out. An INSERT has only "after:", a DELETE only "before:", an UPDATE
// both.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "canal/common/status.h"
#include "canal/parser/binlog/rows_event.h"

namespace canal::testing {

// Appends a line for every row change of a decoded rows event to *out.
Status RenderRows(const binlog::RowsEvent& rows, std::vector<std::string>* out);

// Decodes the binlog files of `binlog_dir` from `first_file` at offset `from`
// on (later files whole) and renders their row events. Read errors are test
// failures (EXPECT), and end the reading of that file.
std::vector<std::string> DecodeFiles(const std::string& binlog_dir, const std::string& first_file, uint64_t from);

}  // namespace canal::testing
