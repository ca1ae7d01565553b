#include "canal/server/session_state.h"

#include <algorithm>

namespace canal::server {

const char* SessionPhaseName(SessionPhase phase) {
  switch (phase) {
    case SessionPhase::kAwaitingLogin: return "awaiting login";
    case SessionPhase::kServing: return "serving";
    case SessionPhase::kEnding: return "ending";
    case SessionPhase::kDraining: return "draining";
    case SessionPhase::kInputClosed: return "input closed";
    case SessionPhase::kClosed: return "closed";
  }
  return "unknown";
}

const std::vector<std::pair<SessionPhase, SessionPhase>>& SessionState::Transitions() {
  using P = SessionPhase;
  static const std::vector<std::pair<P, P>> kTransitions = {
      {P::kAwaitingLogin, P::kServing},     {P::kAwaitingLogin, P::kEnding}, {P::kAwaitingLogin, P::kInputClosed},
      {P::kAwaitingLogin, P::kClosed},      {P::kServing, P::kEnding},       {P::kServing, P::kInputClosed},
      {P::kServing, P::kClosed},            {P::kEnding, P::kDraining},      {P::kEnding, P::kClosed},
      {P::kDraining, P::kClosed},           {P::kInputClosed, P::kClosed},
  };
  return kTransitions;
}

bool SessionState::Allowed(SessionPhase from, SessionPhase to) {
  if (from == to) return true;
  const auto& t = Transitions();
  return std::find(t.begin(), t.end(), std::make_pair(from, to)) != t.end();
}

bool SessionState::To(SessionPhase next) {
  if (!Allowed(phase_, next)) return false;
  if (next == SessionPhase::kServing && !logged_in_) return false;  // only LogIn() serves
  phase_ = next;
  return true;
}

void SessionState::LogIn() {
  logged_in_ = true;
  if (phase_ == SessionPhase::kAwaitingLogin) phase_ = SessionPhase::kServing;
}

}  // namespace canal::server
