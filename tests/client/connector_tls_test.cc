// The SDK's TLS options on their own (the conversation with a TLS server is
// in tests/server/session_tls_test.cc and tests/integration/client_tls_test.cc):
// unusable files are InvalidArgument naming the option and the file, before
// any byte is sent; a server that accepts and never answers the handshake
// is given up at connect_timeout.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "canal/client/connector.h"
#include "support/test_certs.h"

namespace canal::client {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

bool Has(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// A loopback listener that never accepts: the kernel completes TCP
// connections (backlog), and nothing ever answers on them.
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 || ::listen(fd_, 8) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      return;
    }
    port_ = ntohs(a.sin_port);
  }
  ~SilentListener() { ::close(fd_); }
  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

class ConnectorTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("canal-connector-tls-" + std::to_string(::getpid()));
    pki_ = std::make_unique<canal::testing::TestPki>(dir_);
    ASSERT_TRUE(pki_->ok()) << pki_->error();
    ASSERT_NE(listener_.port(), 0);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  ConnectorOptions Options() const {
    ConnectorOptions o;
    o.address = "127.0.0.1:" + std::to_string(listener_.port());
    o.destination = "example";
    o.connect_timeout = 500ms;
    o.read_timeout = 500ms;
    o.tls.enabled = true;
    o.tls.ca_file = pki_->ca();
    return o;
  }

  fs::path dir_;
  std::unique_ptr<canal::testing::TestPki> pki_;
  SilentListener listener_;
};

TEST_F(ConnectorTlsTest, UnusableFilesAreInvalidArgumentNamingTheOptionAndTheFile) {
  ConnectorOptions o = Options();
  o.tls.ca_file = (dir_ / "missing.pem").string();
  Status s = Connector(o).Connect();
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
  EXPECT_TRUE(Has(s.message(), "tls.ca_file = " + o.tls.ca_file + ": the file does not exist")) << s.ToString();

  o = Options();
  o.tls.cert_file = pki_->client.cert;  // no key
  s = Connector(o).Connect();
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
  EXPECT_TRUE(Has(s.message(), "tls.key_file is not")) << s.ToString();

  o.tls.key_file = pki_->server.key;  // another certificate's
  s = Connector(o).Connect();
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
  EXPECT_TRUE(Has(s.message(), "tls.key_file = " + pki_->server.key + ": not the private key of tls.cert_file"))
      << s.ToString();

  o = Options();
  o.tls.ca_file = pki_->client.key;  // a key, not certificates
  s = Connector(o).Connect();
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
  EXPECT_TRUE(Has(s.message(), "tls.ca_file")) << s.ToString();
}

TEST_F(ConnectorTlsTest, AHandshakeNobodyAnswersEndsAtTheConnectTimeout) {
  const auto start = std::chrono::steady_clock::now();
  Connector c(Options());
  const Status s = c.Connect();
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  EXPECT_TRUE(Has(s.message(), "TLS handshake with 127.0.0.1:" + std::to_string(listener_.port()) + " failed"))
      << s.ToString();
  EXPECT_TRUE(Has(s.message(), "timed out in the TLS handshake (ConnectorOptions::connect_timeout)")) << s.ToString();
  EXPECT_GE(took, 450ms);
  EXPECT_LT(took, 3s);
  EXPECT_FALSE(c.connected());
}

}  // namespace
}  // namespace canal::client
