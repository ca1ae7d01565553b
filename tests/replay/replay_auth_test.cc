// The replay primary's login, checked first with a client we did not write
// (MariaDB Connector/C), then with our replica connection: mysql_native_password,
// caching_sha2_password's fast path, and its full authentication over TLS and
// over RSA key exchange (key from the server, or from a file).
#include <mysql.h>

#include <gtest/gtest.h>

#include "canal/parser/mysql/dump_connection.h"
#include "replay_test_util.h"
#include "support/fixtures.h"

namespace canal::testing {
namespace {

ReplayPrimaryOptions Options(std::string plugin) {
  ReplayPrimaryOptions o;
  o.binlog_files = {FixturePath("rust_mysql_common/mysql_type_bit.000001")};
  o.account_plugin = std::move(plugin);
  o.server_id = 77;
  return o;
}

// Connector/C: log in, run one query, return its single value ("" and a test
// failure otherwise).
struct ConnectorC {
  bool tls = false;
  std::string ca_file, public_key_file;

  std::string QueryValue(const ReplayPrimary& p, const ReplayPrimaryOptions& o, const char* sql,
                         std::string* error = nullptr) {
    MYSQL* m = mysql_init(nullptr);
    const unsigned int protocol = MYSQL_PROTOCOL_TCP, timeout = 10;
    mysql_options(m, MYSQL_OPT_PROTOCOL, &protocol);
    mysql_options(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
    mysql_options(m, MYSQL_OPT_READ_TIMEOUT, &timeout);
    if (tls) {
      mysql_ssl_set(m, nullptr, nullptr, ca_file.c_str(), nullptr, nullptr);
      const my_bool on = 1;
      mysql_options(m, MYSQL_OPT_SSL_ENFORCE, &on);
      mysql_options(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &on);
    }
    if (!public_key_file.empty()) mysql_options(m, MYSQL_SERVER_PUBLIC_KEY, public_key_file.c_str());
    std::string value;
    if (mysql_real_connect(m, "127.0.0.1", o.user.c_str(), o.password.c_str(), nullptr, p.port(), nullptr, 0) ==
        nullptr) {
      if (error != nullptr) {
        *error = mysql_error(m);
      } else {
        ADD_FAILURE() << "mysql_real_connect: " << mysql_error(m);
      }
    } else if (tls && mysql_get_ssl_cipher(m) == nullptr) {
      ADD_FAILURE() << "Connector/C logged in without TLS";
    } else if (mysql_query(m, sql) != 0) {
      ADD_FAILURE() << sql << ": " << mysql_error(m);
    } else if (MYSQL_RES* res = mysql_store_result(m); res == nullptr) {
      ADD_FAILURE() << sql << ": no result: " << mysql_error(m);
    } else {
      MYSQL_ROW row = mysql_fetch_row(res);
      if (row != nullptr && row[0] != nullptr) value = row[0];
      mysql_free_result(res);
    }
    mysql_close(m);
    return value;
  }
};

class ReplayAuth : public ::testing::Test {
 protected:
  void SetUp() override { CANAL_REQUIRE_FIXTURES(); }

  // A primary whose account uses `plugin`; sets o and p.
  bool Start(std::string plugin, bool cached = false, std::string default_plugin = "") {
    o = Options(std::move(plugin));
    o.sha2_cached = cached;
    o.default_plugin = std::move(default_plugin);
    p = StartPrimary(o);
    return p != nullptr;
  }

  ReplayPrimaryOptions o;
  std::unique_ptr<ReplayPrimary> p;
};

TEST_F(ReplayAuth, ConnectorCNativePassword) {
  ASSERT_TRUE(Start("mysql_native_password"));
  EXPECT_EQ(ConnectorC{}.QueryValue(*p, o, "SELECT @@server_id"), "77");
  EXPECT_EQ(p->stats().native_auths, 1u);
  EXPECT_EQ(p->stats().logins, 1u);
}

TEST_F(ReplayAuth, ConnectorCCachingSha2FullOverRsaThenFastPath) {
  ASSERT_TRUE(Start("caching_sha2_password"));
  // Not cached: full authentication, the client fetching the server's key.
  EXPECT_EQ(ConnectorC{}.QueryValue(*p, o, "SELECT VERSION()"), o.server_version);
  EXPECT_EQ(p->stats().full_auths_rsa, 1u);
  EXPECT_EQ(p->stats().public_key_requests, 1u);
  // Now cached: the scramble alone.
  EXPECT_EQ(ConnectorC{}.QueryValue(*p, o, "SELECT @@gtid_mode"), "ON");
  EXPECT_EQ(p->stats().fast_auths, 1u);
  // The key from a file: no request.
  p->FlushAuthCache();
  ConnectorC with_key;
  with_key.public_key_file = p->public_key_file();
  EXPECT_EQ(with_key.QueryValue(*p, o, "SELECT @@binlog_checksum"), "CRC32");
  EXPECT_EQ(p->stats().full_auths_rsa, 2u);
  EXPECT_EQ(p->stats().public_key_requests, 1u);
}

TEST_F(ReplayAuth, ConnectorCCachingSha2FullOverTls) {
  ASSERT_TRUE(Start("caching_sha2_password"));
  ConnectorC c;
  c.tls = true;
  c.ca_file = p->certificate_file();  // verified, so the certificate is a real one
  EXPECT_EQ(c.QueryValue(*p, o, "SELECT @@server_uuid"), o.server_uuid);
  EXPECT_EQ(p->stats().full_auths_tls, 1u);
}

TEST_F(ReplayAuth, ConnectorCWrongPasswordIsRefused) {
  ASSERT_TRUE(Start("caching_sha2_password", true));
  ReplayPrimaryOptions wrong = o;
  wrong.password = "not-it";
  std::string error;
  ConnectorC{}.QueryValue(*p, wrong, "SELECT 1", &error);
  EXPECT_NE(error.find("Access denied"), std::string::npos) << error;
  EXPECT_EQ(p->stats().auth_failures, 1u);
}

// ---- our replica connection ----

void ExpectLogin(mysql::DumpConnection* c, const std::string& plugin, bool tls) {
  Status s = c->Connect();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(c->auth_plugin(), plugin);
  EXPECT_EQ(c->tls_active(), tls);
  EXPECT_EQ(c->server_version(), "8.0.36-replay");
  mysql::ResultSet rs;
  s = c->Query("SELECT @@server_id, @@binlog_checksum", &rs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(rs.rows.size(), 1u);
  EXPECT_EQ(rs.rows[0][0].value_or(""), "77");
  EXPECT_EQ(rs.rows[0][1].value_or(""), "CRC32");
}

TEST_F(ReplayAuth, DumpConnectionNativePassword) {
  // As MySQL 8: the greeting names caching_sha2, the account is switched to native.
  ASSERT_TRUE(Start("mysql_native_password", false, "caching_sha2_password"));
  mysql::DumpConnection c(ReplicaOptions(*p, o));
  ExpectLogin(&c, "mysql_native_password", false);
  EXPECT_EQ(p->stats().native_auths, 1u);
}

TEST_F(ReplayAuth, DumpConnectionCachingSha2FastPath) {
  ASSERT_TRUE(Start("caching_sha2_password", true));
  mysql::DumpConnection c(ReplicaOptions(*p, o));
  ExpectLogin(&c, "caching_sha2_password", false);
  EXPECT_EQ(p->stats().fast_auths, 1u);
  EXPECT_EQ(p->stats().full_auths_rsa + p->stats().full_auths_tls, 0u);
}

TEST_F(ReplayAuth, DumpConnectionCachingSha2FullOverTls) {
  ASSERT_TRUE(Start("caching_sha2_password"));
  mysql::ConnectionOptions co = ReplicaOptions(*p, o);
  co.tls = mysql::TlsMode::kRequired;
  co.tls_ca_file = p->certificate_file();
  mysql::DumpConnection c(co);
  ExpectLogin(&c, "caching_sha2_password", true);
  EXPECT_EQ(p->stats().full_auths_tls, 1u);
}

TEST_F(ReplayAuth, DumpConnectionCachingSha2FullOverRsa) {
  ASSERT_TRUE(Start("caching_sha2_password"));
  {
    mysql::DumpConnection c(ReplicaOptions(*p, o));  // key retrieval allowed by default
    ExpectLogin(&c, "caching_sha2_password", false);
  }
  EXPECT_EQ(p->stats().full_auths_rsa, 1u);
  EXPECT_EQ(p->stats().public_key_requests, 1u);
  p->FlushAuthCache();
  mysql::ConnectionOptions co = ReplicaOptions(*p, o);
  co.server_public_key_file = p->public_key_file();
  co.allow_public_key_retrieval = false;
  mysql::DumpConnection c(co);
  ExpectLogin(&c, "caching_sha2_password", false);
  EXPECT_EQ(p->stats().full_auths_rsa, 2u);
  EXPECT_EQ(p->stats().public_key_requests, 1u);
}

TEST_F(ReplayAuth, DumpConnectionFullAuthWithoutKeyOrTlsNamesTheFix) {
  ASSERT_TRUE(Start("caching_sha2_password"));
  mysql::ConnectionOptions co = ReplicaOptions(*p, o);
  co.allow_public_key_retrieval = false;
  mysql::DumpConnection c(co);
  Status s = c.Connect();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("public key"), std::string::npos) << s.ToString();
}

TEST_F(ReplayAuth, DumpConnectionWrongPassword) {
  ASSERT_TRUE(Start("caching_sha2_password", true));
  mysql::ConnectionOptions co = ReplicaOptions(*p, o);
  co.password = "wrong";
  mysql::DumpConnection c(co);
  Status s = c.Connect();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(c.last_server_error().code, mysql::kErAccessDenied) << s.ToString();
  EXPECT_NE(s.message().find("dbPassword"), std::string::npos) << s.ToString();
}

TEST_F(ReplayAuth, UnknownPluginFailsClearly) {
  ASSERT_TRUE(Start("caching_sha2_password"));
  p->SetUnknownAuthPlugin(true);
  mysql::DumpConnection c(ReplicaOptions(*p, o));
  Status s = c.Connect();
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_NE(s.message().find("replay_unknown_plugin"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("mysql_native_password"), std::string::npos) << s.ToString();  // the fix
  // Connector/C fails too, without hanging.
  std::string error;
  ConnectorC{}.QueryValue(*p, o, "SELECT 1", &error);
  EXPECT_FALSE(error.empty());
  p->SetUnknownAuthPlugin(false);
  mysql::DumpConnection again(ReplicaOptions(*p, o));
  ExpectLogin(&again, "caching_sha2_password", false);
}

TEST_F(ReplayAuth, UnansweredStatementIsAnError) {
  ASSERT_TRUE(Start("mysql_native_password"));
  mysql::DumpConnection c(ReplicaOptions(*p, o));
  ASSERT_TRUE(c.Connect().ok());
  mysql::ResultSet rs;
  Status s = c.Query("SELECT @@no_such_variable", &rs);
  EXPECT_EQ(c.last_server_error().code, mysql::kErUnknownSystemVariable) << s.ToString();
  s = c.Query("DROP TABLE x", &rs);
  EXPECT_EQ(c.last_server_error().code, 1064) << s.ToString();
  // The session goes on after an error.
  ASSERT_TRUE(c.Query("SHOW BINARY LOGS", &rs).ok());
  ASSERT_EQ(rs.rows.size(), 1u);
  EXPECT_EQ(rs.rows[0][0].value_or(""), "mysql_type_bit.000001");
}

}  // namespace
}  // namespace canal::testing
