// Status: the outcome of a fallible operation.
//
// A Status is either OK (cheap: no allocation) or carries a code and a message
// that names what failed and where (binlog file and offset, client and request).
// Decode and protocol paths return Status instead of throwing; exceptions are
// reserved for start-up and configuration boundaries.
//
// Besides its code, an error may carry a subcode: the kind a caller branches
// on, as a number from the domain that made it (the MySQL server's error number
// for a refusal from the primary, proto::WireError for an error Ack from a
// canal server, ...). Decisions read the subcode, never the message, so that a
// reworded message changes no decision. 0 means none. WithContext keeps it.
//
// Status is a value type; copying an error copies its message. Not thread-safe
// to mutate concurrently, like any value.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace canal {

class [[nodiscard]] Status {
 public:
  enum class Code : unsigned char {
    kOk = 0,
    kCorruption,       // input bytes are malformed (bad checksum, bad length, ...)
    kTruncated,        // input ended before a complete unit (event, row, value)
    kNotSupported,     // well-formed input of a kind we do not handle
    kInvalidArgument,  // caller passed something unusable
    kIOError,          // the operating system said no
    kNotFound,
    kAborted,
  };

  Status() noexcept = default;
  Status(const Status& other)
      : code_(other.code_),
        subcode_(other.subcode_),
        msg_(other.msg_ ? std::make_unique<std::string>(*other.msg_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) {
      code_ = other.code_;
      subcode_ = other.subcode_;
      msg_ = other.msg_ ? std::make_unique<std::string>(*other.msg_) : nullptr;
    }
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status OK() { return Status(); }
  static Status Corruption(std::string_view msg) { return Status(Code::kCorruption, msg); }
  static Status Truncated(std::string_view msg) { return Status(Code::kTruncated, msg); }
  static Status NotSupported(std::string_view msg) { return Status(Code::kNotSupported, msg); }
  static Status InvalidArgument(std::string_view msg) { return Status(Code::kInvalidArgument, msg); }
  static Status IOError(std::string_view msg) { return Status(Code::kIOError, msg); }
  static Status NotFound(std::string_view msg) { return Status(Code::kNotFound, msg); }
  static Status Aborted(std::string_view msg) { return Status(Code::kAborted, msg); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  int32_t subcode() const { return subcode_; }
  // This error with `subcode`; OK stays OK (an OK Status has no kind).
  Status WithSubcode(int32_t subcode) const& {
    Status s(*this);
    if (!s.ok()) s.subcode_ = subcode;
    return s;
  }
  Status WithSubcode(int32_t subcode) && {
    if (!ok()) subcode_ = subcode;
    return std::move(*this);
  }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsTruncated() const { return code_ == Code::kTruncated; }
  bool IsNotSupported() const { return code_ == Code::kNotSupported; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }

  // The message alone ("" when OK).
  std::string_view message() const { return msg_ ? std::string_view(*msg_) : std::string_view(); }

  // "Corruption: <message>", or "OK".
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>"; OK stays OK.
  Status WithContext(std::string_view context) const;

  // Marks a deliberately ignored status, so that it can be searched for.
  void PermitUncheckedError() const {}

 private:
  Status(Code code, std::string_view msg) : code_(code), msg_(std::make_unique<std::string>(msg)) {}

  Code code_ = Code::kOk;
  int32_t subcode_ = 0;  // fits beside code_: a Status stays two words
  std::unique_ptr<std::string> msg_;
};

std::string_view CodeName(Status::Code code);

}  // namespace canal

// Returns early from the enclosing function when `expr` yields an error Status.
#define CANAL_RETURN_IF_ERROR(expr)        \
  do {                                     \
    ::canal::Status _canal_s = (expr);     \
    if (!_canal_s.ok()) return _canal_s;   \
  } while (0)
