#include "canal/meta/slowest_cursor.h"

#include <vector>

namespace canal::meta {

Status SlowestCursor(MetaManager* meta, const std::string& destination, std::optional<LogPosition>* out) {
  out->reset();
  const std::string what = "finding the slowest cursor of destination " + destination;
  std::vector<ClientIdentity> clients;
  CANAL_RETURN_IF_ERROR(meta->ListClients(destination, &clients).WithContext(what));
  for (const ClientIdentity& client : clients) {
    std::optional<LogPosition> cursor;
    Status s = meta->GetCursor(client, &cursor);
    if (s.IsNotFound()) continue;  // unsubscribed since ListClients: it no longer holds anything back
    CANAL_RETURN_IF_ERROR(s.WithContext(what));
    if (cursor && (!*out || *cursor < **out)) *out = std::move(cursor);
  }
  return Status::OK();
}

}  // namespace canal::meta
