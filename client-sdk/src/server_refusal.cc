#include "canal/client/server_refusal.h"

#include "canal/proto/wire_error.h"

namespace canal::client {

bool CanalJavaServerSaysNotServedHere(std::string_view message) {
  // Canal's CanalServerWithEmbedded: checkStart ("destination:%s should start
  // first") and checkSubscribe ("clientId:%s should subscribe first"). Not its
  // "... is not exist , please check", which it also says of an unknown batch.
  for (std::string_view phrase : {"should start first", "should subscribe first"}) {
    if (message.find(phrase) != std::string_view::npos) return true;
  }
  return false;
}

bool NotServedHere(const Status& refusal) {
  if (refusal.code() != Status::Code::kAborted) return false;
  if (proto::MeansNotServedHere(refusal.subcode())) return true;
  return refusal.subcode() == proto::Code(proto::WireError::kBadRequest) &&
         CanalJavaServerSaysNotServedHere(refusal.message());
}

}  // namespace canal::client
