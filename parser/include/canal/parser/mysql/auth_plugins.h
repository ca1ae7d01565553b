// The client side of the authentication plugins the dump connection speaks:
// mysql_native_password, caching_sha2_password and sha256_password.
//
// Only the cryptography lives here; the exchange (auth switch, more-data rounds,
// asking for the server's RSA key) is driven by DumpConnection.
#pragma once

#include <string>
#include <string_view>

#include "canal/common/status.h"

namespace canal::mysql::auth {

inline constexpr std::string_view kNativePassword = "mysql_native_password";
inline constexpr std::string_view kCachingSha2Password = "caching_sha2_password";
inline constexpr std::string_view kSha256Password = "sha256_password";

bool IsSupportedPlugin(std::string_view plugin);

// SHA1(password) XOR SHA1(nonce + SHA1(SHA1(password))); "" for an empty password.
std::string NativePasswordScramble(std::string_view password, std::string_view nonce);

// SHA256(password) XOR SHA256(SHA256(SHA256(password)) + nonce); "" for an empty password.
std::string CachingSha2Scramble(std::string_view password, std::string_view nonce);

// The full-authentication message without TLS: (password + '\0') XOR the nonce
// (repeated), encrypted with RSA-OAEP under the server's PEM public key.
Status RsaEncryptPassword(std::string_view password, std::string_view nonce, std::string_view pem_public_key,
                          std::string* out);

}  // namespace canal::mysql::auth
