// The OpenSSL pieces of the client's TLS (client_socket.cc uses them):
// the context built from TlsOptions, a BIO over the socket that never raises
// SIGPIPE, and error texts that say what went wrong in words a user can act
// on. Internal to canal_client.
#pragma once

#include <string>

#include "canal/client/connector.h"
#include "canal/common/status.h"

struct bio_st;
struct ssl_st;
struct ssl_ctx_st;

namespace canal::client::detail {

// What the socket BIO reads and writes: the descriptor, and whether the
// server closed its side (OpenSSL asks, to tell a close from an error).
struct SocketBioState {
  int fd = -1;
  bool eof = false;
};

// A BIO over state->fd: send with MSG_NOSIGNAL (a closed connection is an
// error, never a signal that kills the caller's process), recv; would-block
// is a retry. `state` must outlive it.
bio_st* NewSocketBio(SocketBioState* state);

// A client context for `tls`: TLSv1.2 or later, the CA store (tls.ca_file or
// the system's), this client's certificate and key. InvalidArgument naming
// the option and the file when one cannot be used.
Status MakeClientTlsContext(const TlsOptions& tls, ssl_ctx_st** out);

// Sets what the server's certificate must name (`name`: a host name, also
// sent as SNI, or an IP address). False when OpenSSL refuses it.
bool SetPeerName(ssl_st* ssl, const std::string& name);

// Why a TLS call failed (`err`: SSL_get_error's answer), from OpenSSL's
// error queue, the certificate check and the alert the server sent, with a
// hint when one is likely right. Clears the error queue.
std::string TlsFailure(ssl_st* ssl, int err, bool handshake);

}  // namespace canal::client::detail
