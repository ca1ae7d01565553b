// TLS on the client port (canal.tls.*) end to end: the real canal-server on a
// MariaDB sandbox, read with the SDK's Connector and with canal-cli.
//
//   - a valid certificate: rows flow (SDK and canal-cli);
//   - the client refuses a server certificate from another CA and an expired
//     one, saying so (SDK error, canal-cli exit 2 and stderr);
//   - client certificates required (canal.tls.clientCa): a valid one reads
//     rows; none, an expired one or one from another CA is refused by the
//     server, with a line in canal.log and a clear error at the client;
//   - a plain client against the TLS port fails at the login timeout with a
//     hint, not a hang;
//   - unusable files stop the server (exit 2) naming the key and the file.
//
// Certificates are made at test time in the install's conf/certs
// (support/test_certs.h). simple_client is checked too (TLS from its
// environment). Ports: the "client_tls" block only.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/client/connector.h"
#include "canal/client/message.h"
#include "support/canal_install.h"
#include "support/client_rows.h"
#include "support/sandbox_script.h"
#include "support/server_suite.h"
#include "support/test_certs.h"
#include "support/test_ports.h"
#include "support/wait.h"

namespace canal::testing {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using client::Connector;
using client::ConnectorOptions;
using client::Message;
using client::TimeUnit;

constexpr uint16_t kSandboxPort = TestPort("client_tls");
constexpr uint16_t kValidPort = TestPort("client_tls", 1);
constexpr uint16_t kExpiredPort = TestPort("client_tls", 2);
constexpr uint16_t kClientCertPort = TestPort("client_tls", 3);
constexpr uint16_t kBadFilesPort = TestPort("client_tls", 4);

bool Has(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

class ClientTlsE2e : public InstalledServerSuite<kSandboxPort> {
 protected:
  ClientTlsE2e() : InstalledServerSuite("client-tls") {}
  void SetUp() override {
    InstalledServerSuite::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    pki_ = std::make_unique<TestPki>(install_->conf_dir() / "certs");
    ASSERT_TRUE(pki_->ok()) << pki_->error();
  }
  // Starts canal-server on `port` with TLS (paths relative to conf/) and `extra` lines.
  ::testing::AssertionResult Start(uint16_t port, const std::string& cert, const std::string& extra = "") {
    install_->WriteServerProperties(CanalInstall::ServerProperties(
        port, "canal.tls.enabled = true\ncanal.tls.cert = certs/" + cert + ".pem\ncanal.tls.key = certs/" + cert +
                  ".key\n" + extra));
    install_->WriteInstance("example", StartHere());
    std::string out;
    const int rc = install_->Startup(&out);
    if (rc == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "startup.sh exit " << rc << ":\n" << out << "\n"
                                         << ReadAll(install_->server_log());
  }

  ConnectorOptions Tls(uint16_t port, const std::string& ca) const {
    ConnectorOptions o = ServerClientOptions(port);
    o.tls.enabled = true;
    o.tls.ca_file = ca;
    return o;
  }

  // canal-cli on 127.0.0.1:`port` with `args`: its output (stdout and stderr), *rc its exit code.
  static std::string Cli(uint16_t port, const std::string& args, int* rc) {
    const fs::path cli = fs::path(CANAL_BINARY_DIR) / "bin" / "canal-cli";
    return RunShell("timeout 60 " + ShellQuoted(cli) + " --address 127.0.0.1:" + std::to_string(port) +
                        " --destination example --json " + args + " 2>&1",
                    rc);
  }
  // simple_client on 127.0.0.1:`port` with the environment `env` (CANAL_TLS_*) and `args`.
  static std::string SimpleClientCommand(uint16_t port, const std::string& env) {
    const fs::path program = fs::path(CANAL_BINARY_DIR) / "bin" / "simple_client";
    return env + " timeout 60 " + ShellQuoted(program) + " 127.0.0.1:" + std::to_string(port) + " example";
  }
  std::string CliTls(uint16_t port, const std::string& args, int* rc) const {
    return Cli(port, "--tls --tls-ca " + ShellQuoted(pki_->ca()) + " " + args, rc);
  }
  static std::string CertArgs(const CertFiles& files) {
    return "--tls-cert " + ShellQuoted(files.cert) + " --tls-key " + ShellQuoted(files.key);
  }

  // Inserts rows first..last into tls_db.t, one transaction.
  static void Insert(int first, int last) {
    std::string values;
    for (int i = first; i <= last; ++i) values += (values.empty() ? "(" : ",(") + std::to_string(i) + ")";
    Sql("INSERT INTO tls_db.t (id) VALUES " + values);
  }
  static void CreateTable() {
    Sql("CREATE DATABASE IF NOT EXISTS tls_db");
    Sql("CREATE TABLE IF NOT EXISTS tls_db.t (id INT PRIMARY KEY)");
  }

  // Reads with `c` (subscribed) until the ids of tls_db.t seen include every one of `want`.
  static ::testing::AssertionResult ReadIds(Connector& c, const std::set<std::string>& want) {
    std::set<std::string> seen;
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    Message m;
    while (std::chrono::steady_clock::now() < deadline) {
      Status s = c.GetWithoutAck(100, 200, TimeUnit::kMilliseconds, &m);
      if (!s.ok()) return ::testing::AssertionFailure() << s.ToString();
      if (m.batch_id() == -1) continue;
      s = ForEachRow(m, [&](const entry::Header& h, entry::EventType, const entry::RowData& row) {
        if (h.schemaname() == "tls_db") seen.insert(ColumnText(row, "id"));
      });
      if (!s.ok()) return ::testing::AssertionFailure() << s.ToString();
      if (Status a = c.Ack(m.batch_id()); !a.ok()) return ::testing::AssertionFailure() << a.ToString();
      bool all = true;
      for (const std::string& id : want) all = all && seen.count(id) > 0;
      if (all) return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << "saw " << seen.size() << " of " << want.size() << " rows";
  }

  std::unique_ptr<TestPki> pki_;
};

// A valid certificate: canal-cli and then the SDK read the rows; a client
// trusting another CA is refused; a plain client gets a clear error at the
// server's login timeout.
TEST_F(ClientTlsE2e, RowsFlowWithAValidCertificateAndAnotherCaIsRefused) {
  CreateTable();
  ASSERT_TRUE(Start(kValidPort, "server", "canal.connections.login.timeout = 1000\n"));
  EXPECT_TRUE(WaitForText(install_->server_log(), "TLS", 10s)) << ReadAll(install_->server_log());
  Insert(1, 3);
  int rc = -1;
  std::string out = CliTls(kValidPort, "--count 3", &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_TRUE(Has(out, "tls_db")) << out;

  Connector c(Tls(kValidPort, pki_->ca()));
  ASSERT_TRUE(ConnectAndSubscribe(c, 20s).ok());
  Insert(4, 5);
  EXPECT_TRUE(ReadIds(c, {"4", "5"}));
  c.Disconnect();

  // Trusting another CA: refused by the client, before anything is sent.
  Connector wrong(Tls(kValidPort, pki_->other_ca()));
  Status s = wrong.Connect();
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Has(s.message(), "TLS handshake with 127.0.0.1:" + std::to_string(kValidPort) + " failed"))
      << s.ToString();
  EXPECT_TRUE(Has(s.message(), "unable to get local issuer certificate")) << s.ToString();
  out = Cli(kValidPort, "--tls --tls-ca " + ShellQuoted(pki_->other_ca()) + " --count 1", &rc);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_TRUE(Has(out, "unable to get local issuer certificate")) << out;

  // A plain client: the server waits for a TLS handshake, closes at the login timeout.
  const auto start = std::chrono::steady_clock::now();
  Connector plain(ServerClientOptions(kValidPort));
  s = plain.Connect();
  ASSERT_FALSE(s.ok());
  EXPECT_LT(SecondsSince(start), 10.0);
  EXPECT_TRUE(Has(s.message(), "canal.tls.enabled")) << s.ToString();
  EXPECT_TRUE(WaitForText(install_->server_log(), "no TLS handshake within 1000 ms", 10s))
      << ReadAll(install_->server_log());

  // simple_client with TLS from its environment prints the next rows; Ctrl-C ends it.
  Insert(6, 7);
  const fs::path log = install_->root() / "simple_client.out";
  const std::string pid = RunShell(SimpleClientCommand(kValidPort, "CANAL_TLS_CA=" + ShellQuoted(pki_->ca())) +
                                       " > " + ShellQuoted(log) + " 2>&1 & echo $!",
                                   &rc);
  EXPECT_TRUE(WaitForText(log, "id : 7", 30s)) << ReadAll(log);
  RunShell("kill -INT " + pid, &rc);
}

TEST_F(ClientTlsE2e, AnExpiredServerCertificateIsRefusedByTheSdkAndCanalCli) {
  ASSERT_TRUE(Start(kExpiredPort, "server-expired"));
  EXPECT_TRUE(WaitForText(install_->server_log(), "the certificate expired on", 10s))
      << ReadAll(install_->server_log());
  Connector c(Tls(kExpiredPort, pki_->ca()));
  Status s = c.Connect();
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Has(s.message(), "certificate has expired")) << s.ToString();
  int rc = -1;
  const std::string out = CliTls(kExpiredPort, "--count 1", &rc);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_TRUE(Has(out, "TLS handshake with 127.0.0.1:" + std::to_string(kExpiredPort) + " failed")) << out;
  EXPECT_TRUE(Has(out, "certificate has expired")) << out;
  const std::string simple = RunShell(SimpleClientCommand(kExpiredPort, "CANAL_TLS_CA=" + ShellQuoted(pki_->ca())) +
                                          " 2>&1",
                                      &rc);
  EXPECT_EQ(rc, 1) << simple;
  EXPECT_TRUE(Has(simple, "simple_client: IO error: TLS handshake with")) << simple;
  EXPECT_TRUE(Has(simple, "certificate has expired")) << simple;
}

TEST_F(ClientTlsE2e, ClientCertificatesAreRequiredAndCheckedByTheServer) {
  CreateTable();
  ASSERT_TRUE(Start(kClientCertPort, "server", "canal.tls.clientCa = certs/ca.pem\n"));
  EXPECT_TRUE(WaitForText(install_->server_log(), "client certificates required", 10s))
      << ReadAll(install_->server_log());
  Insert(11, 12);
  int rc = -1;
  std::string out = CliTls(kClientCertPort, CertArgs(pki_->client) + " --count 2", &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_TRUE(Has(out, "tls_db")) << out;

  ConnectorOptions o = Tls(kClientCertPort, pki_->ca());
  o.tls.cert_file = pki_->client.cert;
  o.tls.key_file = pki_->client.key;
  {
    Connector c(o);
    ASSERT_TRUE(ConnectAndSubscribe(c, 20s).ok());
    Insert(13, 14);
    EXPECT_TRUE(ReadIds(c, {"13", "14"}));
  }

  struct Case {
    const char* what;
    CertFiles files;  // empty: no certificate
    const char* client_says;
    const char* log_says;
  } cases[] = {
      {"no certificate", {}, "certificate required", "peer did not return a certificate"},
      {"an expired one", pki_->client_expired, "expired", "client certificate: certificate has expired"},
      {"one from another CA", pki_->client_other_ca, "canal.tls.clientCa", "client certificate: unable to"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    o.tls.cert_file = k.files.cert;
    o.tls.key_file = k.files.key;
    Connector c(o);
    Status s = c.Connect();
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(Has(s.message(), "the server refused the connection")) << s.ToString();
    EXPECT_TRUE(Has(s.message(), k.client_says)) << s.ToString();
    std::printf("[ client_tls ] %s: %s\n", k.what, s.ToString().c_str());
    out = CliTls(kClientCertPort, (k.files.cert.empty() ? std::string() : CertArgs(k.files)) + " --count 1", &rc);
    EXPECT_EQ(rc, 2) << out;
    EXPECT_TRUE(Has(out, k.client_says)) << out;
    EXPECT_TRUE(WaitForText(install_->server_log(), k.log_says, 10s)) << ReadAll(install_->server_log());
  }
  EXPECT_TRUE(Has(ReadAll(install_->server_log()), "warning [")) << "the refusals are warnings";
}

// Bad input: the server refuses to start (exit 2) naming the key and the file.
TEST_F(ClientTlsE2e, UnusableFilesStopTheServerNamingTheKeyAndTheFile) {
  install_->WriteInstance("example", StartHere());
  struct Case {
    std::string lines;
    std::string says;
  } cases[] = {
      {"canal.tls.cert = certs/missing.pem\ncanal.tls.key = certs/server.key\n",
       "canal.tls.cert = " + (install_->conf_dir() / "certs" / "missing.pem").string() + ": the file does not exist"},
      {"canal.tls.cert = certs/server.pem\ncanal.tls.key = certs/client.key\n",
       "canal.tls.key = " + pki_->client.key + ": does not match the certificate of canal.tls.cert = " +
           pki_->server.cert},
      {"canal.tls.key = certs/server.key\n",
       "canal.tls.key = " + pki_->server.key + " is set but canal.tls.cert is not"},
      {"canal.tls.cert = certs/server.pem\ncanal.tls.key = certs\n",
       "canal.tls.key = " + (install_->conf_dir() / "certs").string() + ": is not a file"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.lines);
    install_->WriteServerProperties(
        CanalInstall::ServerProperties(kBadFilesPort, "canal.tls.enabled = true\n" + k.lines));
    int rc = -1;
    const std::string out = RunShell("timeout 30 " + install_->ServerCommand() + " 2>&1", &rc);
    EXPECT_EQ(rc, 2) << out;
    EXPECT_TRUE(Has(out, "configuration refused")) << out;
    EXPECT_TRUE(Has(out, k.says)) << out;
  }
}

}  // namespace
}  // namespace canal::testing
