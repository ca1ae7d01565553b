#include "canal/common/status.h"

namespace canal {

std::string_view CodeName(Status::Code code) {
  switch (code) {
    case Status::Code::kOk: return "OK";
    case Status::Code::kCorruption: return "Corruption";
    case Status::Code::kTruncated: return "Truncated";
    case Status::Code::kNotSupported: return "Not supported";
    case Status::Code::kInvalidArgument: return "Invalid argument";
    case Status::Code::kIOError: return "IO error";
    case Status::Code::kNotFound: return "Not found";
    case Status::Code::kAborted: return "Aborted";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string s(CodeName(code_));
  s += ": ";
  s += message();
  return s;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string m(context);
  m += ": ";
  m += message();
  Status s(code_, m);
  s.subcode_ = subcode_;
  return s;
}

}  // namespace canal
