// The error codes a canal server puts in an error Ack (Ack.error_code), one
// list for the server that sends them and the client SDK that branches on
// them (header-only, in canal_wire). Canal's own Java server sends 400 for
// every refusal, and Canal's clients only test the code for non-zero, so
// codes of our own reach them as errors like any other; our SDK reads the
// code (Status::subcode() of the call that was refused) instead of the text.
#pragma once

#include <cstdint>
#include <string_view>

namespace canal::proto {

enum class WireError : int32_t {
  kNone = 0,
  kBadRequest = 400,           // everything else: unparsable packet, bad filter, a refused request
  kIdentityMissing = 401,      // "destination or clientId is null" (Canal's text)
  kBatchIdMissing = 402,       // "batchId should assign value" (Canal's text)
  kAuthFailed = 403,           // "auth failed for user:..." (Canal's text)
  kNoSuchDestination = 404,    // the destination is not configured on this server
  kAckNotApplied = 409,        // an ack this server can no longer apply (it stopped serving the destination)
  kNotSubscribed = 412,        // get/ack/rollback before subscribe ("... should subscribe first")
  kSubscribedByAnother = 423,  // another client holds the destination's subscription
  kNotServing = 503,           // the destination is configured here but not running or active (now)
  kAcksNotDurable = 507,       // acks before this reply were applied but could not be made durable
                               // (disk or ZooKeeper): after a reconnect their batches may come again
};

constexpr int32_t Code(WireError e) { return static_cast<int32_t>(e); }

// "not served here": another server (the active one of a pair) may serve
// the destination, or this one may after a restart; the cluster connector
// fails over on these.
constexpr bool MeansNotServedHere(int32_t code) {
  switch (static_cast<WireError>(code)) {
    case WireError::kNoSuchDestination:
    case WireError::kNotSubscribed:
    case WireError::kSubscribedByAnother:
    case WireError::kNotServing:
      return true;
    default:
      return false;
  }
}

constexpr std::string_view WireErrorName(int32_t code) {
  switch (static_cast<WireError>(code)) {
    case WireError::kNone: return "none";
    case WireError::kBadRequest: return "bad request";
    case WireError::kIdentityMissing: return "identity missing";
    case WireError::kBatchIdMissing: return "batch id missing";
    case WireError::kAuthFailed: return "authentication failed";
    case WireError::kNoSuchDestination: return "no such destination";
    case WireError::kAckNotApplied: return "ack not applied";
    case WireError::kNotSubscribed: return "not subscribed";
    case WireError::kSubscribedByAnother: return "subscribed by another client";
    case WireError::kNotServing: return "destination not serving";
    case WireError::kAcksNotDurable: return "acks not durable";
  }
  return "unknown";
}

}  // namespace canal::proto
