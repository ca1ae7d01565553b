// The dump connection's protocol client against known vectors and a fake server
// on a loopback socket: login with each auth plugin, server errors, result sets,
// the binlog stream's framing (multi-packet events, EOF, ERR, truncation,
// sequence ids, size limit), the read timeout and Shutdown() from another thread.
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "canal/parser/mysql/dump_connection.h"
#include "canal/parser/mysql/auth_plugins.h"
#include "parser/mysql_fake_server.h"

namespace canal::mysql {
namespace {

using canal::testing::FakeMysqlConn;
using canal::testing::FakeMysqlServer;
namespace fake = canal::testing::fake_mysql;

constexpr std::string_view kNonce = "abcdefghij0123456789";  // 20 bytes
constexpr std::string_view kPassword = "s3cret-pw";

std::string Hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

std::string Sha1(std::string_view s) {
  unsigned char md[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(s.data()), s.size(), md);
  return std::string(reinterpret_cast<char*>(md), sizeof md);
}

std::string Sha256(std::string_view s) {
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(s.data()), s.size(), md);
  return std::string(reinterpret_cast<char*>(md), sizeof md);
}

std::string Xor(std::string a, std::string_view b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<char>(a[i] ^ b[i % b.size()]);
  return a;
}

// What a server does with a mysql_native_password response: it stores only
// SHA1(SHA1(password)) and checks that the response unwraps to its preimage.
bool NativeResponseProvesPassword(std::string_view response, std::string_view nonce, std::string_view password) {
  const std::string stored = Sha1(Sha1(password));
  if (response.size() != 20) return false;
  const std::string candidate = Xor(std::string(response), Sha1(std::string(nonce) + stored));
  return Sha1(candidate) == stored;
}

ConnectionOptions Options(uint16_t port, std::string password = std::string(kPassword)) {
  ConnectionOptions o;
  o.host = "127.0.0.1";
  o.port = port;
  o.user = "canal";
  o.password = std::move(password);
  o.tls = TlsMode::kDisabled;
  o.connect_timeout_ms = 5'000;
  o.read_timeout_ms = 10'000;
  return o;
}

// Greeting + native login accepted; leaves the server at sequence 0 for a command.
void AcceptNativeLogin(FakeMysqlConn& c) {
  c.Send(0, fake::Greeting(kNonce, "mysql_native_password"));
  std::string p;
  if (!c.Read(&p)) return;
  c.Send(2, fake::Ok());
}

// After the login: reads the COM_BINLOG_DUMP the client sends.
bool ReadDumpCommand(FakeMysqlConn& c, std::string* cmd) {
  uint8_t seq = 0xFF;
  return c.Read(cmd, &seq) && seq == 0 && !cmd->empty() && (*cmd)[0] == 0x12;
}

// ---- scrambles and GTID sets -----------------------------------------------------

TEST(MysqlAuth, NativePasswordScrambleMatchesKnownVector) {
  // Computed independently (Python hashlib) for password "secret", nonce bytes 1..20.
  std::string nonce;
  for (char i = 1; i <= 20; ++i) nonce.push_back(i);
  EXPECT_EQ(Hex(auth::NativePasswordScramble("secret", nonce)), "b32bb3a583e1340c0a1108d58b1be49781ad8c2f");
  EXPECT_TRUE(NativeResponseProvesPassword(auth::NativePasswordScramble(kPassword, kNonce), kNonce, kPassword));
}

TEST(MysqlAuth, EmptyPasswordSendsAnEmptyScramble) {
  EXPECT_EQ(auth::NativePasswordScramble("", kNonce), "");
  EXPECT_EQ(auth::CachingSha2Scramble("", kNonce), "");
}

TEST(MysqlAuth, CachingSha2ScrambleMatchesItsDefinition) {
  // XOR(SHA256(pw), SHA256(SHA256(SHA256(pw)) || nonce)).
  const std::string expected = Xor(Sha256(kPassword), Sha256(Sha256(Sha256(kPassword)) + std::string(kNonce)));
  EXPECT_EQ(Hex(auth::CachingSha2Scramble(kPassword, kNonce)), Hex(expected));
  EXPECT_EQ(auth::CachingSha2Scramble(kPassword, kNonce).size(), 32u);
}

TEST(MysqlAuth, RsaEncryptionRejectsAKeyThatIsNotPem) {
  std::string out;
  Status s = auth::RsaEncryptPassword("pw", kNonce, "not a key", &out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("PUBLIC KEY"), std::string_view::npos) << s.ToString();
}

std::string Le64(uint64_t v) {
  std::string s;
  fake::PutInt(&s, v, 8);
  return s;
}

TEST(MysqlGtidSet, EncodesSidsAndHalfOpenIntervals) {
  std::string out;
  ASSERT_TRUE(EncodeMysqlGtidSet("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:7,"
                                 "00000000-0000-0000-0000-0000000000aa:3",
                                 &out)
                  .ok());
  std::string expected = Le64(2);
  expected += std::string("\x3e\x11\xfa\x47\x71\xca\x11\xe1\x9e\x33\xc8\x0a\xa9\x42\x95\x62", 16);
  expected += Le64(2) + Le64(1) + Le64(6) + Le64(7) + Le64(8);
  expected += std::string(15, '\0') + "\xaa";
  expected += Le64(1) + Le64(3) + Le64(4);
  EXPECT_EQ(Hex(out), Hex(expected));
}

TEST(MysqlGtidSet, EmptySetIsZeroSids) {
  std::string out;
  ASSERT_TRUE(EncodeMysqlGtidSet("", &out).ok());
  EXPECT_EQ(out, Le64(0));
  ASSERT_TRUE(EncodeMysqlGtidSet("  \n", &out).ok());
  EXPECT_EQ(out, Le64(0));
}

TEST(MysqlGtidSet, MergesRepeatedSidsAndOverlappingIntervalsAcceptsNewlines) {
  std::string a, b;
  ASSERT_TRUE(EncodeMysqlGtidSet("3e11fa4771ca11e19e33c80aa9429562:4-9,\n 3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5", &a)
                  .ok());
  ASSERT_TRUE(EncodeMysqlGtidSet("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-9", &b).ok());
  EXPECT_EQ(Hex(a), Hex(b));
}

TEST(MysqlGtidSet, RejectsMalformedSetsNamingThePart) {
  const char* bad[] = {
      "3E11FA47-71CA-11E1-9E33-C80AA9429562",          // no interval
      "3E11FA47-71CA-11E1-9E33:1-5",                   // short uuid
      "3E11FA47-71CA-11E1-9E33-C80AA942956Z:1-5",      // not hex
      "3E11FA47x71CA-11E1-9E33-C80AA9429562:1-5",      // dash misplaced
      "3E11FA47-71CA-11E1-9E33-C80AA9429562:0-5",      // GNO 0
      "3E11FA47-71CA-11E1-9E33-C80AA9429562:5-1",      // reversed
      "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-",       // missing end
      "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:",     // empty interval
      "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-99999999999999999999",  // too large
      "3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5,,",    // stray comma
      "3E11FA47-71CA-11E1-9E33-C80AA9429562:-tag:1-5",  // a tag must start with a letter or '_'
  };
  for (const char* text : bad) {
    std::string out;
    Status s = EncodeMysqlGtidSet(text, &out);
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << text;
    EXPECT_NE(s.message().find("bad GTID set element"), std::string_view::npos) << s.ToString();
  }
  // A tagged GTID (MySQL 8.4) goes in the tagged form: format byte 1 at both ends of the count.
  std::string out;
  ASSERT_TRUE(EncodeMysqlGtidSet("3E11FA47-71CA-11E1-9E33-C80AA9429562:tag:1-5", &out).ok());
  ASSERT_GE(out.size(), 8u);
  EXPECT_EQ(static_cast<uint8_t>(out[0]), 1);
  EXPECT_EQ(static_cast<uint8_t>(out[7]), 1);
}

// ---- login -------------------------------------------------------------------

TEST(DumpConnectionLogin, NativePasswordLoginSucceeds) {
  fake::HandshakeResponse seen;
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    c.Send(0, fake::Greeting(kNonce, "mysql_native_password", fake::kDefaultCaps, 77));
    std::string p;
    uint8_t seq = 0;
    if (!c.Read(&p, &seq) || seq != 1) return;
    seen = fake::ParseHandshakeResponse(p);
    c.Send(2, NativeResponseProvesPassword(seen.auth, kNonce, kPassword) ? fake::Ok()
                                                                          : fake::Err(1045, "28000", "bad scramble"));
    c.WaitForClose();
  });
  DumpConnection conn(Options(server.port()));
  Status s = conn.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(conn.connected());
  EXPECT_EQ(conn.connection_id(), 77u);
  EXPECT_EQ(conn.server_version(), "8.0.36-fake");
  EXPECT_FALSE(conn.is_mariadb());
  EXPECT_FALSE(conn.tls_active());
  EXPECT_EQ(conn.auth_plugin(), "mysql_native_password");
  EXPECT_TRUE(conn.last_server_error().empty());
  conn.Close();
  EXPECT_TRUE(seen.ok);
  EXPECT_EQ(seen.user, "canal");
  EXPECT_EQ(seen.plugin, "mysql_native_password");
  EXPECT_EQ(seen.charset, 45);                 // utf8mb4_general_ci
  EXPECT_TRUE(seen.caps & 0x00000200);         // PROTOCOL_41
  EXPECT_TRUE(seen.caps & 0x00080000);         // PLUGIN_AUTH
  EXPECT_FALSE(seen.caps & 0x00000800);        // no SSL: disabled
}

TEST(DumpConnectionLogin, MariadbVersionPrefixIsStrippedAndRecognised) {
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    c.Send(0, fake::Greeting(kNonce, "mysql_native_password", fake::kDefaultCaps, 5, "5.5.5-10.11.6-MariaDB-0+deb12u1"));
    std::string p;
    if (!c.Read(&p)) return;
    c.Send(2, fake::Ok());
    c.WaitForClose();
  });
  DumpConnection conn(Options(server.port()));
  ASSERT_TRUE(conn.Connect().ok());
  EXPECT_TRUE(conn.is_mariadb());
  EXPECT_EQ(conn.server_version(), "10.11.6-MariaDB-0+deb12u1");
}

TEST(DumpConnectionLogin, WrongPasswordSurfacesError1045) {
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    c.Send(0, fake::Greeting(kNonce, "mysql_native_password"));
    std::string p;
    if (!c.Read(&p)) return;
    auto r = fake::ParseHandshakeResponse(p);
    c.Send(2, NativeResponseProvesPassword(r.auth, kNonce, kPassword)
                  ? fake::Ok()
                  : fake::Err(1045, "28000", "Access denied for user 'canal'@'127.0.0.1' (using password: YES)"));
    c.WaitForClose();
  });
  DumpConnection conn(Options(server.port(), "wrong"));
  Status s = conn.Connect();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find("ERROR 1045 (28000): Access denied for user 'canal'"), std::string_view::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("127.0.0.1:" + std::to_string(server.port())), std::string_view::npos);
  EXPECT_NE(s.message().find("dbPassword"), std::string_view::npos) << "the fix is named";
  EXPECT_EQ(conn.last_server_error().code, kErAccessDenied);
  EXPECT_EQ(conn.last_server_error().sql_state, "28000");
  EXPECT_FALSE(conn.connected());
}

TEST(DumpConnectionLogin, ErrorInsteadOfGreetingIsReported) {
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    std::string e = "\xff";
    fake::PutInt(&e, 1040, 2);
    e += "Too many connections";  // pre-handshake errors carry no SQLSTATE
    c.Send(0, e);
  });
  DumpConnection conn(Options(server.port()));
  Status s = conn.Connect();
  EXPECT_NE(s.message().find("Too many connections"), std::string_view::npos) << s.ToString();
  EXPECT_EQ(conn.last_server_error().code, 1040);
}

TEST(DumpConnectionLogin, CachingSha2FastAuthSucceeds) {
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    c.Send(0, fake::Greeting(kNonce, "caching_sha2_password"));
    std::string p;
    if (!c.Read(&p)) return;
    auto r = fake::ParseHandshakeResponse(p);
    if (r.plugin != "caching_sha2_password" || r.auth != auth::CachingSha2Scramble(kPassword, kNonce)) {
      c.Send(2, fake::Err(1045, "28000", "bad scramble"));
      return;
    }
    c.Send(2, std::string("\x01\x03", 2));
    c.Send(3, fake::Ok());
    c.WaitForClose();
  });
  DumpConnection conn(Options(server.port()));
  Status s = conn.Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(conn.auth_plugin(), "caching_sha2_password");
}

struct RsaKey {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key{EVP_RSA_gen(2048), &EVP_PKEY_free};
  std::string PublicPem() const {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
    PEM_write_bio_PUBKEY(bio.get(), key.get());
    char* data = nullptr;
    long n = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<size_t>(n));
  }
  std::string Decrypt(std::string_view cipher) const {
    std::unique_ptr<EVP_PKEY_CTX, decltype(&EVP_PKEY_CTX_free)> ctx(EVP_PKEY_CTX_new(key.get(), nullptr),
                                                                    &EVP_PKEY_CTX_free);
    size_t len = 0;
    if (EVP_PKEY_decrypt_init(ctx.get()) <= 0 || EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_PKCS1_OAEP_PADDING) <= 0 ||
        EVP_PKEY_decrypt(ctx.get(), nullptr, &len, reinterpret_cast<const unsigned char*>(cipher.data()),
                         cipher.size()) <= 0) {
      return "<decrypt failed>";
    }
    std::string out(len, '\0');
    if (EVP_PKEY_decrypt(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &len,
                         reinterpret_cast<const unsigned char*>(cipher.data()), cipher.size()) <= 0) {
      return "<decrypt failed>";
    }
    out.resize(len);
    return out;
  }
};

TEST(DumpConnectionLogin, AuthSwitchToCachingSha2WithFullAuthOverRsa) {
  RsaKey rsa;
  ASSERT_NE(rsa.key, nullptr);
  constexpr std::string_view kSwitchNonce = "ZYXWVUTSRQponmlkjihg";
  std::string failure = "server script did not finish";
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    c.Send(0, fake::Greeting(kNonce, "mysql_native_password"));
    std::string p;
    uint8_t seq = 0;
    if (!c.Read(&p, &seq)) return;
    // The account uses caching_sha2_password: switch, with a fresh nonce.
    c.Send(2, std::string("\xfe") + "caching_sha2_password" + '\0' + std::string(kSwitchNonce) + '\0');
    if (!c.Read(&p, &seq) || seq != 3) return void(failure = "no switch response");
    if (p != auth::CachingSha2Scramble(kPassword, kSwitchNonce)) return void(failure = "bad sha2 scramble");
    c.Send(4, std::string("\x01\x04", 2));  // no cached hash: full authentication
    if (!c.Read(&p, &seq) || seq != 5 || p != "\x02") return void(failure = "public key not requested");
    c.Send(6, "\x01" + rsa.PublicPem());
    if (!c.Read(&p, &seq) || seq != 7) return void(failure = "no encrypted password");
    std::string plain = Xor(rsa.Decrypt(p), kSwitchNonce);
    if (plain != std::string(kPassword) + '\0') return void(failure = "decrypted password mismatch: " + plain);
    c.Send(8, fake::Ok());
    failure.clear();
    c.WaitForClose();
  });
  DumpConnection conn(Options(server.port()));
  Status s = conn.Connect();
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(conn.auth_plugin(), "caching_sha2_password");
  conn.Close();
  server.Join();
  EXPECT_EQ(failure, "");
}

// A self-signed certificate for the fake server's side of TLS.
struct TlsServerContext {
  RsaKey rsa;
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx{SSL_CTX_new(TLS_server_method()), &SSL_CTX_free};
  bool Init() {
    std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), &X509_free);
    ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
    X509_set_pubkey(cert.get(), rsa.key.get());
    X509_NAME* name = X509_get_subject_name(cert.get());
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("fake"), -1, -1, 0);
    X509_set_issuer_name(cert.get(), name);
    return X509_sign(cert.get(), rsa.key.get(), EVP_sha256()) > 0 &&
           SSL_CTX_use_certificate(ctx.get(), cert.get()) == 1 && SSL_CTX_use_PrivateKey(ctx.get(), rsa.key.get()) == 1;
  }
};

TEST(DumpConnectionLogin, CachingSha2FullAuthOverTlsSendsThePasswordInsideTls) {
  TlsServerContext tls;
  ASSERT_TRUE(tls.Init());
  std::string failure = "server script did not finish";
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    c.Send(0, fake::Greeting(kNonce, "caching_sha2_password", fake::kDefaultCaps | 0x800));
    std::string p;
    uint8_t seq = 0;
    if (!c.Read(&p, &seq) || seq != 1 || p.size() != 32 || !(static_cast<uint8_t>(p[1]) & 0x08)) {
      return void(failure = "no SSLRequest");
    }
    if (!c.AcceptTls(tls.ctx.get())) return void(failure = "TLS accept failed");
    if (!c.Read(&p, &seq) || seq != 2) return void(failure = "no handshake response inside TLS");
    auto r = fake::ParseHandshakeResponse(p);
    if (r.auth != auth::CachingSha2Scramble(kPassword, kNonce)) return void(failure = "bad scramble");
    c.Send(3, std::string("\x01\x04", 2));
    if (!c.Read(&p, &seq) || seq != 4) return void(failure = "no full-auth password");
    if (p != std::string(kPassword) + '\0') return void(failure = "expected the cleartext password, got " + Hex(p));
    c.Send(5, fake::Ok());
    failure.clear();
    c.WaitForClose();
  });
  ConnectionOptions o = Options(server.port());
  o.tls = TlsMode::kRequired;
  DumpConnection conn(o);
  Status s = conn.Connect();
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(conn.tls_active());
  conn.Close();
  server.Join();
  EXPECT_EQ(failure, "");
}

TEST(DumpConnectionLogin, UnsupportedPluginFailsNamingItAndTheFix) {
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    c.Send(0, fake::Greeting(kNonce, "client_ed25519"));
    std::string p;
    if (!c.Read(&p)) return;
    auto r = fake::ParseHandshakeResponse(p);
    if (r.plugin != "mysql_native_password") return;  // we answer with a plugin we speak
    c.Send(2, std::string("\xfe") + "client_ed25519" + '\0' + std::string(kNonce));
    c.WaitForClose();
  });
  DumpConnection conn(Options(server.port()));
  Status s = conn.Connect();
  EXPECT_EQ(s.code(), Status::Code::kNotSupported) << s.ToString();
  EXPECT_NE(s.message().find("'client_ed25519'"), std::string_view::npos) << s.ToString();
  EXPECT_NE(s.message().find("use mysql_native_password for the replication user"), std::string_view::npos);
}

TEST(DumpConnectionLogin, TlsRequiredButNotOfferedFails) {
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    c.Send(0, fake::Greeting(kNonce, "mysql_native_password"));
    c.WaitForClose();
  });
  ConnectionOptions o = Options(server.port());
  o.tls = TlsMode::kRequired;
  DumpConnection conn(o);
  Status s = conn.Connect();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("TLS is required"), std::string_view::npos) << s.ToString();
}

TEST(DumpConnectionLogin, RefusedConnectionNamesTheAddress) {
  uint16_t port;
  {
    FakeMysqlServer server([](FakeMysqlConn&) {});
    port = server.port();
    DumpConnection poke(Options(port));  // let the server thread finish
    poke.Connect().PermitUncheckedError();
  }
  DumpConnection conn(Options(port));
  Status s = conn.Connect();
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find("127.0.0.1:" + std::to_string(port) + ": cannot connect"), std::string_view::npos)
      << s.ToString();
}

TEST(DumpConnectionLogin, UnknownCharsetIsRejectedWithTheFix) {
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    c.Send(0, fake::Greeting(kNonce, "mysql_native_password"));
    c.WaitForClose();
  });
  ConnectionOptions o = Options(server.port());
  o.charset = "klingon";
  DumpConnection conn(o);
  Status s = conn.Connect();
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("connectionCharset"), std::string_view::npos) << s.ToString();
}

// ---- statements ----------------------------------------------------------------

TEST(DumpConnectionQuery, TextResultSetWithNullsIsReturned) {
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    AcceptNativeLogin(c);
    std::string p;
    if (!c.Read(&p) || p != "\x03SELECT a, b") return;
    c.Send(1, "\x02");
    for (uint8_t i = 0; i < 2; ++i) {
      std::string def;
      for (const char* f : {"def", "db", "t", "t", i == 0 ? "a" : "b", "orig"}) fake::PutLenencString(&def, f);
      def += std::string("\x0c\x2d\x00\x10\x00\x00\x00\xfd\x00\x00\x00\x00\x00", 13);
      c.Send(static_cast<uint8_t>(2 + i), def);
    }
    c.Send(4, fake::Eof());
    std::string row1, row2;
    fake::PutLenencString(&row1, "x");
    row1.push_back('\xfb');  // NULL
    fake::PutLenencString(&row2, "");
    fake::PutLenencString(&row2, "2");
    c.Send(5, row1);
    c.Send(6, row2);
    c.Send(7, fake::Eof());
    // Then a statement that fails.
    if (!c.Read(&p)) return;
    c.Send(1, fake::Err(1193, "HY000", "Unknown system variable 'nope'"));
    if (!c.Read(&p)) return;
    c.Send(1, fake::Ok());
    c.WaitForClose();
  });
  DumpConnection conn(Options(server.port()));
  ASSERT_TRUE(conn.Connect().ok());
  ResultSet rs;
  Status s = conn.Query("SELECT a, b", &rs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(rs.column_names, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(rs.rows.size(), 2u);
  EXPECT_EQ(rs.rows[0][0], "x");
  EXPECT_EQ(rs.rows[0][1], std::nullopt);
  EXPECT_EQ(rs.rows[1][0], "");
  EXPECT_EQ(rs.rows[1][1], "2");

  s = conn.Execute("SET @@nope = 1");
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find("SET @@nope = 1"), std::string_view::npos) << s.ToString();
  EXPECT_EQ(conn.last_server_error().code, kErUnknownSystemVariable);
  // The connection stays usable after a statement error.
  EXPECT_TRUE(conn.Execute("SET @x = 1").ok());
}

// ---- the binlog stream ----------------------------------------------------------

std::string PatternBytes(size_t n, int salt) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7 + salt) % 251);
  return s;
}

TEST(DumpConnectionStream, EventsOverMaxPacketSizeAreJoinedAndSmallOnesAreViews) {
  const std::string big = PatternBytes((16u << 20) + 100, 1);  // 1 + size > 0xFFFFFF: two packets
  const std::string exact = PatternBytes(0xFFFFFF - 1, 2);     // 1 + size == 0xFFFFFF: plus an empty packet
  const std::string small = PatternBytes(300, 3);
  std::string cmd_seen;
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    AcceptNativeLogin(c);
    if (!ReadDumpCommand(c, &cmd_seen)) return;
    uint8_t seq = 1;
    c.SendMessage(&seq, std::string(1, '\0') + big);
    c.SendMessage(&seq, std::string(1, '\0') + small);
    c.SendMessage(&seq, std::string(1, '\0') + exact);
    c.SendMessage(&seq, std::string(1, '\0') + small);
    c.Send(seq++, fake::Eof());
    c.WaitForClose();
  });
  DumpConnection conn(Options(server.port()));
  ASSERT_TRUE(conn.Connect().ok());
  ASSERT_TRUE(conn.DumpFromPosition("mysql-bin.000003", 4, 1234).ok());
  std::string_view ev;
  Status s = conn.ReadEvent(&ev);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(ev.size(), big.size());
  EXPECT_TRUE(ev == big);
  ASSERT_TRUE(conn.ReadEvent(&ev).ok());
  EXPECT_TRUE(ev == small);
  s = conn.ReadEvent(&ev);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(ev.size(), exact.size());
  EXPECT_TRUE(ev == exact);
  ASSERT_TRUE(conn.ReadEvent(&ev).ok());
  EXPECT_TRUE(ev == small);
  s = conn.ReadEvent(&ev);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.message().find("end of binlog stream"), std::string_view::npos);
  EXPECT_EQ(conn.bytes_received(), big.size() + exact.size() + 2 * small.size());

  // COM_BINLOG_DUMP: position, flags 0 (blocking), server id, file name.
  std::string expected_cmd = "\x12";
  fake::PutInt(&expected_cmd, 4, 4);
  fake::PutInt(&expected_cmd, 0, 2);
  fake::PutInt(&expected_cmd, 1234, 4);
  expected_cmd += "mysql-bin.000003";
  EXPECT_EQ(Hex(cmd_seen), Hex(expected_cmd));
}

TEST(DumpConnectionStream, ServerErrorEndsTheStreamWithItsText) {
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    AcceptNativeLogin(c);
    std::string cmd;
    if (!ReadDumpCommand(c, &cmd)) return;
    c.Send(1, fake::Err(1236, "HY000", "Could not find first log file name in binary log index file"));
    c.WaitForClose();
  });
  DumpConnection conn(Options(server.port()));
  ASSERT_TRUE(conn.Connect().ok());
  ASSERT_TRUE(conn.DumpFromPosition("nope.000001", 4, 7).ok());
  std::string_view ev;
  Status s = conn.ReadEvent(&ev);
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find("ERROR 1236 (HY000): Could not find first log file"), std::string_view::npos)
      << s.ToString();
  EXPECT_EQ(conn.last_server_error().code, kErMasterFatalReadingBinlog);
}

TEST(DumpConnectionStream, TruncatedPacketIsAnIOErrorWithoutServerError) {
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    AcceptNativeLogin(c);
    std::string cmd;
    if (!ReadDumpCommand(c, &cmd)) return;
    c.SendRaw(std::string("\x64\x00\x00\x01\x00shortbody", 13));  // says 100 bytes, sends 10, hangs up
  });
  DumpConnection conn(Options(server.port()));
  ASSERT_TRUE(conn.Connect().ok());
  ASSERT_TRUE(conn.DumpFromPosition("f", 4, 7).ok());
  std::string_view ev;
  Status s = conn.ReadEvent(&ev);
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find("closed the connection"), std::string_view::npos) << s.ToString();
  EXPECT_TRUE(conn.last_server_error().empty());
  EXPECT_FALSE(conn.connected());
}

TEST(DumpConnectionStream, EventOverTheSizeLimitIsRejectedBeforeAllocation) {
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    AcceptNativeLogin(c);
    std::string cmd;
    if (!ReadDumpCommand(c, &cmd)) return;
    c.SendRaw(std::string("\xff\xff\xff\x01\x00", 5));  // a 16 MiB packet announced; never sent
    c.WaitForClose();
  });
  DumpConnection conn(Options(server.port()));
  conn.set_max_event_bytes(1 << 20);
  ASSERT_TRUE(conn.Connect().ok());
  ASSERT_TRUE(conn.DumpFromPosition("f", 4, 7).ok());
  std::string_view ev;
  Status s = conn.ReadEvent(&ev);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("exceeds the limit"), std::string_view::npos) << s.ToString();
}

TEST(DumpConnectionStream, OutOfOrderSequenceIdIsCorruption) {
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    AcceptNativeLogin(c);
    std::string cmd;
    if (!ReadDumpCommand(c, &cmd)) return;
    c.Send(1, std::string("\0event1", 7));
    c.Send(3, std::string("\0event2", 7));  // 2 skipped
    c.WaitForClose();
  });
  DumpConnection conn(Options(server.port()));
  ASSERT_TRUE(conn.Connect().ok());
  ASSERT_TRUE(conn.DumpFromPosition("f", 4, 7).ok());
  std::string_view ev;
  ASSERT_TRUE(conn.ReadEvent(&ev).ok());
  EXPECT_EQ(ev, "event1");
  Status s = conn.ReadEvent(&ev);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("sequence 3 where 2 was expected"), std::string_view::npos) << s.ToString();
}

TEST(DumpConnectionStream, UnknownLeadingByteIsCorruption) {
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    AcceptNativeLogin(c);
    std::string cmd;
    if (!ReadDumpCommand(c, &cmd)) return;
    c.Send(1, "\x07garbage");
    c.WaitForClose();
  });
  DumpConnection conn(Options(server.port()));
  ASSERT_TRUE(conn.Connect().ok());
  ASSERT_TRUE(conn.DumpFromPosition("f", 4, 7).ok());
  std::string_view ev;
  EXPECT_TRUE(conn.ReadEvent(&ev).IsCorruption());
}

TEST(DumpConnectionStream, SilenceLongerThanTheReadTimeoutIsAnIOError) {
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    AcceptNativeLogin(c);
    std::string cmd;
    if (!ReadDumpCommand(c, &cmd)) return;
    c.WaitForClose();  // and say nothing
  });
  ConnectionOptions o = Options(server.port());
  o.read_timeout_ms = 300;
  DumpConnection conn(o);
  ASSERT_TRUE(conn.Connect().ok());
  ASSERT_TRUE(conn.DumpFromPosition("f", 4, 7).ok());
  std::string_view ev;
  auto start = std::chrono::steady_clock::now();
  Status s = conn.ReadEvent(&ev);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find("read timeout"), std::string_view::npos) << s.ToString();
  EXPECT_TRUE(conn.last_server_error().empty());
  EXPECT_GE(elapsed, std::chrono::milliseconds(250));
  EXPECT_LT(elapsed, std::chrono::seconds(3));
}

TEST(DumpConnectionStream, ShutdownFromAnotherThreadUnblocksARead) {
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    AcceptNativeLogin(c);
    std::string cmd;
    if (!ReadDumpCommand(c, &cmd)) return;
    c.WaitForClose();
  });
  ConnectionOptions o = Options(server.port());
  o.read_timeout_ms = 30'000;
  DumpConnection conn(o);
  ASSERT_TRUE(conn.Connect().ok());
  ASSERT_TRUE(conn.DumpFromPosition("f", 4, 7).ok());
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    conn.Shutdown();
  });
  std::string_view ev;
  auto start = std::chrono::steady_clock::now();
  Status s = conn.ReadEvent(&ev);
  auto elapsed = std::chrono::steady_clock::now() - start;
  stopper.join();
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find("shut down"), std::string_view::npos) << s.ToString();
  EXPECT_LT(elapsed, std::chrono::seconds(5));
  // Later calls fail fast too.
  EXPECT_FALSE(conn.ReadEvent(&ev).ok());
}

TEST(DumpConnectionStream, RegisterSlaveSendsServerIdAndReportedAddress) {
  std::string seen;
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    AcceptNativeLogin(c);
    if (!c.Read(&seen)) return;
    c.Send(1, fake::Ok());
    c.WaitForClose();
  });
  DumpConnection conn(Options(server.port()));
  ASSERT_TRUE(conn.Connect().ok());
  ASSERT_TRUE(conn.RegisterSlave(99, "canal-host", 11111).ok());
  conn.Close();
  std::string expected = "\x15";
  fake::PutInt(&expected, 99, 4);
  expected += "\x0a" "canal-host";
  expected += std::string(2, '\0');  // user, password
  fake::PutInt(&expected, 11111, 2);
  expected += std::string(8, '\0');
  server.Join();  // the script wrote `seen`
  EXPECT_EQ(Hex(seen), Hex(expected));
}

TEST(DumpConnectionStream, AccessDeniedAfterLoginPointsAtTheGrantNotThePassword) {
  FakeMysqlServer server([&](FakeMysqlConn& c) {
    AcceptNativeLogin(c);
    std::string p;
    if (!c.Read(&p)) return;
    c.Send(1, fake::Err(1045, "28000", "Access denied for user 'canal'@'127.0.0.1' (using password: YES)"));
    c.WaitForClose();
  });
  DumpConnection conn(Options(server.port()));
  ASSERT_TRUE(conn.Connect().ok());
  Status s = conn.RegisterSlave(99);
  EXPECT_EQ(conn.last_server_error().code, kErAccessDenied);
  EXPECT_NE(s.message().find("COM_REGISTER_SLAVE"), std::string_view::npos) << s.ToString();
  EXPECT_NE(s.message().find("GRANT REPLICATION SLAVE"), std::string_view::npos) << s.ToString();
  EXPECT_EQ(s.message().find("dbPassword"), std::string_view::npos) << s.ToString();
}

TEST(DumpConnectionStream, ReadEventBeforeDumpIsAnError) {
  DumpConnection conn(Options(1));
  std::string_view ev;
  EXPECT_EQ(conn.ReadEvent(&ev).code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(conn.Execute("SELECT 1").code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace canal::mysql
