#include "canal/proto/password_scramble.h"

#include <openssl/evp.h>
#include <openssl/sha.h>

#include <array>
#include <cstdint>

namespace canal::proto {

namespace {

using Digest = std::array<uint8_t, SHA_DIGEST_LENGTH>;

Digest Sha1(std::string_view a, std::string_view b = {}) {
  Digest d{};
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  unsigned int len = 0;
  if (ctx != nullptr && EVP_DigestInit_ex(ctx, EVP_sha1(), nullptr) == 1 &&
      EVP_DigestUpdate(ctx, a.data(), a.size()) == 1 && (b.empty() || EVP_DigestUpdate(ctx, b.data(), b.size()) == 1)) {
    EVP_DigestFinal_ex(ctx, d.data(), &len);
  }
  EVP_MD_CTX_free(ctx);
  return d;
}

std::string_view View(const Digest& d) { return {reinterpret_cast<const char*>(d.data()), d.size()}; }

std::string Hex(const Digest& d) {
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(d.size() * 2);
  for (uint8_t b : d) {
    s.push_back(kHex[b >> 4]);
    s.push_back(kHex[b & 15]);
  }
  return s;
}

bool FromHex(std::string_view hex, Digest* out) {
  if (hex.size() != out->size() * 2) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < out->size(); ++i) {
    int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    (*out)[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

}  // namespace

std::string ScramblePassword(std::string_view seed, std::string_view password) {
  const Digest stage1 = Sha1(password);
  const Digest stage2 = Sha1(View(stage1));
  const Digest mix = Sha1(seed, View(stage2));
  Digest token;
  for (size_t i = 0; i < token.size(); ++i) token[i] = stage1[i] ^ mix[i];
  return Hex(token);
}

std::string StoredPasswordForm(std::string_view password) { return Hex(Sha1(View(Sha1(password)))); }

bool VerifyScrambledPassword(std::string_view seed, std::string_view token_hex, std::string_view stored_hex) {
  Digest token, stored;
  if (!FromHex(token_hex, &token) || !FromHex(stored_hex, &stored)) return false;
  const Digest mix = Sha1(seed, View(stored));
  Digest stage1;
  for (size_t i = 0; i < stage1.size(); ++i) stage1[i] = token[i] ^ mix[i];
  return Sha1(View(stage1)) == stored;
}

}  // namespace canal::proto
