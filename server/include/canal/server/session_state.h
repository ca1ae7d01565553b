// SessionState: where a client connection is in its life, as one value.
//
//   kAwaitingLogin --login--> kServing
//   kAwaitingLogin, kServing --error Ack queued--> kEnding --Ack written--> kDraining
//   kAwaitingLogin, kServing --the client closed its side--> kInputClosed
//   any but kClosed --socket closed (stop, timeout, error, end)--> kClosed
//
// kEnding: an error Ack is the reply being written; after it the session
// ends (Canal closes after an error, which keeps replies and requests
// paired). kDraining: that Ack is out and our side shut; input is discarded
// while the client has a moment to read the Ack instead of a reset.
// kInputClosed: EOF or a read error; the requests already received are still
// applied (an ack in the inbox must not be lost) but nothing is written, and
// a failure there closes at once (nobody is left to read its Ack).
// kClosed is final. Transitions() lists the allowed moves; any other is a bug
// and is refused (logged by the session), the state staying as it was.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace canal::server {

enum class SessionPhase : uint8_t { kAwaitingLogin, kServing, kEnding, kDraining, kInputClosed, kClosed };
const char* SessionPhaseName(SessionPhase phase);

class SessionState {
 public:
  // Every allowed (from, to); staying in a phase is always allowed.
  static const std::vector<std::pair<SessionPhase, SessionPhase>>& Transitions();
  static bool Allowed(SessionPhase from, SessionPhase to);

  SessionPhase phase() const { return phase_; }
  // Moves to `next` when allowed; false (and no change) otherwise.
  [[nodiscard]] bool To(SessionPhase next);

  // The login was accepted: kAwaitingLogin moves to kServing; in another
  // phase (the input closed behind the login) only the fact is kept.
  void LogIn();
  bool logged_in() const { return logged_in_; }
  // The socket is closed: nothing more is read or written.
  bool closed() const { return phase_ == SessionPhase::kClosed; }
  // No more requests will arrive (the client closed, or we did).
  bool input_over() const { return phase_ == SessionPhase::kInputClosed || closed(); }
  // Input is thrown away: lingering after an error Ack.
  bool discarding_input() const { return phase_ == SessionPhase::kDraining; }
  // An error Ack is queued or written: the session ends after it.
  bool ending() const { return phase_ == SessionPhase::kEnding || phase_ == SessionPhase::kDraining; }

 private:
  SessionPhase phase_ = SessionPhase::kAwaitingLogin;
  // Whether the login was accepted: what the session allows and logs, and
  // the frame limit, depend on it whatever the phase is now.
  bool logged_in_ = false;
};

}  // namespace canal::server
