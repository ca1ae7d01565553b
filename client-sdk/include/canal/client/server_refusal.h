// What a canal server's refusal means for a client: the decisions the SDK
// takes on an error Ack (fail over, retry, give up), made from the Ack's code
// (Status::subcode(), proto::WireError), never from its text, with one
// exception in one place: Canal's own Java server, which sends 400 for every
// refusal, says "not here" only in words.
#pragma once

#include <string_view>

#include "canal/common/status.h"

namespace canal::client {

// The server does not serve the destination (now): another server (the active
// one of a pair) may, or this one may again later. Our server: codes 404, 412,
// 423 and 503. Canal's Java server: code 400 with one of its phrases
// (CanalJavaServerSaysNotServedHere).
bool NotServedHere(const Status& refusal);

// The fallback for Canal's Java server: whether a 400's text is one of the
// phrases it uses when a destination is not (yet) served by it
// ("destination:%s should start first", "clientId:%s should subscribe first").
bool CanalJavaServerSaysNotServedHere(std::string_view message);

}  // namespace canal::client
