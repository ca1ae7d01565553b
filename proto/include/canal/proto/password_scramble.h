// The password exchange of Canal's handshake.
//
// The server sends 8 random seed bytes; the client answers with the lowercase
// hex of SHA1(pw) XOR SHA1(seed || SHA1(SHA1(pw))). The server keeps only
// SHA1(SHA1(pw)) (hex, the form of `canal.passwd`) and checks
// SHA1(token XOR SHA1(seed || stored)) == stored. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace canal::proto {

// The client's token: 40 lowercase hex characters.
std::string ScramblePassword(std::string_view seed, std::string_view password);

// SHA1(SHA1(password)) as 40 lowercase hex characters (the stored form).
std::string StoredPasswordForm(std::string_view password);

// Whether `token_hex` (from the client) proves knowledge of the password whose
// stored form is `stored_hex`, for this seed. Malformed hex is simply false.
bool VerifyScrambledPassword(std::string_view seed, std::string_view token_hex, std::string_view stored_hex);

}  // namespace canal::proto
