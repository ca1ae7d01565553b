// TLS on the client port (canal.tls.*), with the SDK's Connector against a
// SessionServer on in-memory destinations: a valid certificate works (and a
// gathered batch arrives intact); the client refuses an expired server
// certificate, one from another CA and one for another name; with client
// certificates required the server refuses a client without one, with an
// expired one or one from another CA, logging why; a plain client against the
// TLS port and a TLS client against a plain port fail clearly and in time; a
// handshake that never completes or is garbage costs no more than the
// pre-login limits allow; with TLS off the first bytes are Canal's handshake.
// Certificates are made at test time (support/test_certs.h). Port 0.
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "canal/client/connector.h"
#include "canal/client/message.h"
#include "session_fixture.h"
#include "support/test_certs.h"

namespace canal::server {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using canal::testing::TestPki;
using client::Connector;
using client::ConnectorOptions;

constexpr char kDest[] = "example";

bool Has(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

class SessionTlsTest : public testing::SessionFixture {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                     ("canal-session-tls-" + std::to_string(::getpid())));
    pki_ = new TestPki(*dir_);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    std::filesystem::remove_all(*dir_, ec);
    delete pki_;
    delete dir_;
  }

  void SetUp() override {
    ASSERT_TRUE(pki_->ok()) << pki_->error();
    dest_ = std::make_shared<MemoryDestination>(kDest);
    registry_.Add(dest_);
    logger_->set_level(spdlog::level::debug);
  }

  // A TLS server with `server` as its certificate; `client_ca` set: client
  // certificates required.
  void StartTls(const canal::testing::CertFiles& server, const std::string& client_ca = "",
                const std::function<void(SessionServerOptions*)>& tune = {}) {
    SessionServerOptions o = LoopbackOptions();
    o.tls.enabled = true;
    o.tls.cert_file = server.cert;
    o.tls.key_file = server.key;
    o.tls.client_ca_file = client_ca;
    if (tune) tune(&o);
    StartSessionServer(o);
  }

  ConnectorOptions Options(bool tls = true) const {
    ConnectorOptions o;
    o.address = "127.0.0.1:" + std::to_string(server_->port());
    o.destination = kDest;
    o.connect_timeout = 3s;
    o.read_timeout = 5s;
    o.tls.enabled = tls;
    o.tls.ca_file = pki_->ca();
    return o;
  }

  // Connect, subscribe and one get: the status of the first that failed.
  static Status Session(const ConnectorOptions& o) {
    Connector c(o);
    Status s = c.Connect();
    if (s.ok()) s = c.Subscribe();
    client::Message m;
    if (s.ok()) s = c.GetWithoutAck(10, 100, client::TimeUnit::kMilliseconds, &m);
    return s;
  }

  bool Logged(const std::string& a, const std::string& b = "") {
    return WaitUntil([&] { return sink_->Contains(spdlog::level::warn, a, b); });
  }

  static std::filesystem::path* dir_;
  static TestPki* pki_;
  std::shared_ptr<MemoryDestination> dest_;
};

std::filesystem::path* SessionTlsTest::dir_ = nullptr;
TestPki* SessionTlsTest::pki_ = nullptr;

TEST_F(SessionTlsTest, AValidCertificateServesAndGatheredBatchesArriveIntact) {
  StartTls(pki_->server);
  // Entries past the gather threshold go from the ring's slots through TLS.
  ASSERT_TRUE(dest_->PutRange(0, 3).ok());
  entry::Entry e;
  e.set_entrytype(entry::ROWDATA);
  e.set_storevalue(std::string(300 << 10, 'b'));
  const std::string big = e.SerializeAsString();
  store::EntryMeta meta;
  meta.kind = store::EntryKind::kTransactionEnd;
  meta.safe_resume_point = true;
  meta.position = MemoryDestination::Position(3);
  ASSERT_TRUE(dest_->store()->Put(std::string(big), meta).ok());
  Connector c(Options());
  ASSERT_TRUE(c.Connect().ok());
  ASSERT_TRUE(c.Subscribe().ok());
  client::Message m;
  Status s = c.GetWithoutAck(4, 1000, client::TimeUnit::kMilliseconds, &m);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(m.raw_entry_count(), 4u);
  EXPECT_EQ(m.raw_entry(0), MemoryDestination::EntryBytes(0));
  EXPECT_EQ(m.raw_entry(3), big);
  EXPECT_TRUE(c.Ack(m.batch_id()).ok());
  EXPECT_TRUE(c.GetWithoutAck(10, 10, client::TimeUnit::kMilliseconds, &m).ok());
  EXPECT_TRUE(sink_->Contains(spdlog::level::info, "listening on", "TLS"));
}

TEST_F(SessionTlsTest, TheClientRefusesAnExpiredServerCertificate) {
  StartTls(pki_->server_expired);
  const Status s = Session(Options());
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Has(s.message(), "TLS handshake with 127.0.0.1:" + std::to_string(server_->port()) + " failed"))
      << s.ToString();
  EXPECT_TRUE(Has(s.message(), "certificate has expired")) << s.ToString();
  // The server says why the client went: its alert.
  EXPECT_TRUE(Logged("TLS handshake failed", "certificate expired"));
}

TEST_F(SessionTlsTest, TheClientRefusesACertificateFromAnotherCaOrForAnotherName) {
  StartTls(pki_->server_other_ca);
  Status s = Session(Options());
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Has(s.message(), "unable to get local issuer certificate")) << s.ToString();
  EXPECT_TRUE(Has(s.message(), "tls.ca_file")) << s.ToString();
  server_->Stop();
  server_.reset();
  StartTls(pki_->server);
  ConnectorOptions o = Options();
  o.tls.server_name = "canal.example.org";
  s = Session(o);
  EXPECT_TRUE(Has(s.message(), "hostname mismatch")) << s.ToString();
  o.tls.verify = false;  // no check at all: it connects
  EXPECT_TRUE(Session(o).ok());
}

TEST_F(SessionTlsTest, ClientCertificatesRequiredAcceptsAValidOne) {
  StartTls(pki_->server, pki_->ca());
  ConnectorOptions o = Options();
  o.tls.cert_file = pki_->client.cert;
  o.tls.key_file = pki_->client.key;
  const Status s = Session(o);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(sink_->Contains(spdlog::level::info, "listening on", "client certificates required"));
}

TEST_F(SessionTlsTest, ClientCertificatesRequiredRefusesNoneExpiredAndForeign) {
  StartTls(pki_->server, pki_->ca());
  Status s = Session(Options());
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Has(s.message(), "certificate required")) << s.ToString();
  EXPECT_TRUE(Has(s.message(), "tls.cert_file")) << s.ToString();
  EXPECT_TRUE(Logged("TLS handshake failed", "peer did not return a certificate"));

  ConnectorOptions o = Options();
  o.tls.cert_file = pki_->client_expired.cert;
  o.tls.key_file = pki_->client_expired.key;
  s = Session(o);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Has(s.message(), "the server refused the connection")) << s.ToString();
  EXPECT_TRUE(Has(s.message(), "expired")) << s.ToString();
  EXPECT_TRUE(Logged("TLS handshake failed", "client certificate: certificate has expired"));

  o.tls.cert_file = pki_->client_other_ca.cert;
  o.tls.key_file = pki_->client_other_ca.key;
  s = Session(o);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Has(s.message(), "the server refused the connection")) << s.ToString();
  EXPECT_TRUE(Has(s.message(), "canal.tls.clientCa")) << s.ToString();
  EXPECT_TRUE(Logged("TLS handshake failed", "client certificate: unable to"));
  EXPECT_TRUE(WaitUntil([&] { return server_->sessions() == 0; }));
}

// A plain client waits for Canal's handshake, the TLS port for a ClientHello:
// the login deadline ends it, and both sides say what happened.
TEST_F(SessionTlsTest, APlainClientAgainstTheTlsPortFailsClearlyAtTheLoginDeadline) {
  StartTls(pki_->server, "", [](SessionServerOptions* o) { o->login_timeout_ms = 300; });
  const Clock::time_point start = Clock::now();
  const Status s = Session(Options(/*tls=*/false));
  ASSERT_FALSE(s.ok());
  EXPECT_LT(Clock::now() - start, 4s) << "bounded by the login timeout, not the client's read timeout";
  EXPECT_TRUE(Has(s.message(), "reading the handshake")) << s.ToString();
  EXPECT_TRUE(Has(s.message(), "canal.tls.enabled")) << s.ToString();
  EXPECT_TRUE(Logged("no TLS handshake within 300 ms", "a client without TLS?"));
}

TEST_F(SessionTlsTest, ATlsClientAgainstAPlainPortFailsAtOnce) {
  StartSessionServer(LoopbackOptions());
  const Clock::time_point start = Clock::now();
  const Status s = Session(Options());
  ASSERT_FALSE(s.ok());
  EXPECT_LT(Clock::now() - start, 3s) << "within the connect timeout";
  EXPECT_TRUE(Has(s.message(), "TLS handshake with")) << s.ToString();
  EXPECT_TRUE(Has(s.message(), "canal.tls.enabled")) << s.ToString();
}

TEST_F(SessionTlsTest, TlsOffTheFirstBytesAreCanalsHandshakePacket) {
  StartSessionServer(LoopbackOptions());
  TestClient c(server_->port(), 5s);
  protocol::Packet p;
  ASSERT_TRUE(c.ReadPacket(&p));
  EXPECT_EQ(p.type(), protocol::HANDSHAKE);
  EXPECT_EQ(p.version(), 1);
  // Nothing before it or around it: the frame is the packet's bytes alone.
  EXPECT_EQ(c.last_frame(), p.SerializeAsString());
  EXPECT_NE(static_cast<unsigned char>(c.last_frame()[0]), 0x16) << "a TLS record";
  c.SendAuth("", "");
  const std::optional<protocol::Ack> ack = c.ReadAck();
  EXPECT_TRUE(ack && ack->error_code() == 0);
}

// A client that connects and sends nothing, or starts a handshake it never
// finishes: closed at the login deadline. Garbage: closed at once.
TEST_F(SessionTlsTest, AHandshakeThatNeverCompletesIsBoundedByTheLoginDeadline) {
  StartTls(pki_->server, "", [](SessionServerOptions* o) { o->login_timeout_ms = 300; });
  TestClient silent(server_->port(), 5s);
  TestClient partial(server_->port(), 5s);
  // A TLS handshake record announcing 16 KiB, of which 10 bytes come.
  ASSERT_TRUE(partial.SendRaw(std::string("\x16\x03\x01\x40\x00", 5) + std::string(10, '\x01')));
  const Clock::time_point start = Clock::now();
  EXPECT_TRUE(silent.WaitClosed(3s));
  EXPECT_TRUE(partial.WaitClosed(3s));
  EXPECT_LT(Clock::now() - start, 3s);
  EXPECT_TRUE(WaitUntil([&] { return server_->sessions() == 0; }));
}

TEST_F(SessionTlsTest, GarbageInsteadOfAHandshakeIsRefusedAtOnceAndLoggedEscaped) {
  StartTls(pki_->server);  // the default login timeout (10 s): garbage must not wait for it
  TestClient c(server_->port(), 5s);
  ASSERT_TRUE(c.SendRaw("GET / HTTP/1.1\r\nHost: \x1b[31mx\r\n\r\n" + std::string(64 << 10, 'x')));
  EXPECT_TRUE(c.WaitClosed(3s));
  EXPECT_TRUE(Logged("TLS handshake failed"));
  for (const std::string& line : sink_->Lines()) EXPECT_FALSE(Has(line, "\x1b")) << line;
  EXPECT_TRUE(WaitUntil([&] { return server_->sessions() == 0; }));
}

TEST_F(SessionTlsTest, UnusableFilesStopTheServerNamingTheKeyAndTheFile) {
  SessionServerOptions o = LoopbackOptions();
  o.tls.enabled = true;
  o.tls.cert_file = pki_->server.cert;
  o.tls.key_file = pki_->client.key;  // another certificate's key
  std::unique_ptr<SessionServer> server;
  Status s = SessionServer::Create(o, registry(), logger_, &server);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Has(s.message(), "canal.tls.key = " + pki_->client.key)) << s.ToString();
  EXPECT_TRUE(Has(s.message(), "does not match")) << s.ToString();
}

}  // namespace
}  // namespace canal::server
