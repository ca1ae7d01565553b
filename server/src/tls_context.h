// TLS on the client port: the server's OpenSSL context, built once from
// canal.tls.* (ServerTlsOptions) and shared by every session. Loading checks
// what an operator gets wrong (a missing or unreadable file, a file that holds
// no PEM certificate or key, a key that is not the certificate's, a key
// without a certificate) and names the key and the file in the error, so the
// server refuses to start instead of failing each client's handshake.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "canal/common/status.h"
#include "canal/server/session_server.h"

namespace boost::asio::ssl {
class context;
}

namespace canal::server {

// A TLS server context for `options` (which must be enabled). Errors are
// InvalidArgument naming the key and the file ("canal.tls.key = /x/k.pem:
// ..."). *warnings gets what is worth a WARN line at start (a certificate
// that has expired or is not valid yet: clients will refuse it).
Status MakeServerTlsContext(const ServerTlsOptions& options, std::shared_ptr<boost::asio::ssl::context>* out,
                            std::vector<std::string>* warnings);

// The same checks without keeping the context (configuration load).
Status CheckServerTls(const ServerTlsOptions& options);

}  // namespace canal::server
