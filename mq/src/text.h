// Small text helpers shared by the mq sources.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "canal/common/ascii_case.h"

namespace canal::mq {

// "db.table at file:offset", how errors name a change.
inline std::string DescribeChange(std::string_view db, std::string_view table, std::string_view file, int64_t offset) {
  std::string s(db);
  s += '.';
  s += table;
  s += " at ";
  s += file;
  s += ':';
  s += std::to_string(offset);
  return s;
}

}  // namespace canal::mq
