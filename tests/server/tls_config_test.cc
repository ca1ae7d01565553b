// canal.tls.* in canal.properties: off by default (and then the other keys
// are not read), relative paths from the folder of canal.properties, and
// every unusable setting refused at load naming the key and the file: a
// missing or unreadable file, a key that is not the certificate's, a key
// without a certificate, a file that is no PEM, a bad minVersion.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "canal/server/config.h"
#include "support/test_certs.h"

namespace canal::server {
namespace {

namespace fs = std::filesystem;

class TlsConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) / ("canal-tls-config-" + std::to_string(::getpid()) + "-" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "conf" / "certs");
    pki_ = std::make_unique<canal::testing::TestPki>(root_ / "conf" / "certs");
    ASSERT_TRUE(pki_->ok()) << pki_->error();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // Loads a canal.properties of `text` (with no environment overrides).
  Status Load(const std::string& text, CanalConfig* config) {
    const fs::path file = root_ / "conf" / "canal.properties";
    std::ofstream(file) << text;
    return LoadCanalConfig(file.string(), {}, config, [](const std::string&) -> std::optional<std::string> {
      return std::nullopt;
    });
  }
  std::string Refusal(const std::string& text) {
    CanalConfig config;
    const Status s = Load(text, &config);
    EXPECT_FALSE(s.ok()) << text;
    return std::string(s.message());
  }

  fs::path root_;
  std::unique_ptr<canal::testing::TestPki> pki_;
};

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST_F(TlsConfigTest, OffByDefaultAndTheOtherKeysAreNotReadThen) {
  CanalConfig config;
  ASSERT_TRUE(Load("canal.port = 0\n", &config).ok());
  EXPECT_FALSE(config.session.tls.enabled);
  ASSERT_TRUE(Load("canal.tls.enabled = false\ncanal.tls.cert = /nowhere.pem\n", &config).ok());
  EXPECT_FALSE(config.session.tls.enabled);
}

TEST_F(TlsConfigTest, RelativePathsStartAtTheFolderOfCanalProperties) {
  CanalConfig config;
  const Status s = Load(
      "canal.tls.enabled = true\ncanal.tls.cert = certs/server.pem\ncanal.tls.key = certs/server.key\n"
      "canal.tls.clientCa = certs/ca.pem\ncanal.tls.minVersion = tlsv1.3\n",
      &config);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(config.session.tls.enabled);
  EXPECT_EQ(config.session.tls.cert_file, pki_->server.cert);
  EXPECT_EQ(config.session.tls.key_file, pki_->server.key);
  EXPECT_EQ(config.session.tls.client_ca_file, pki_->ca());
  EXPECT_EQ(config.session.tls.min_version, "TLSv1.3");
}

TEST_F(TlsConfigTest, AMissingFileIsRefusedNamingTheKeyAndTheFile) {
  const std::string m =
      Refusal("canal.tls.enabled = true\ncanal.tls.cert = certs/nope.pem\ncanal.tls.key = certs/server.key\n");
  EXPECT_TRUE(Has(m, "canal.properties")) << m;
  EXPECT_TRUE(Has(m, "canal.tls.cert = " + (root_ / "conf" / "certs" / "nope.pem").string())) << m;
  EXPECT_TRUE(Has(m, "does not exist")) << m;
  const std::string k = Refusal("canal.tls.enabled = true\ncanal.tls.cert = certs/server.pem\ncanal.tls.key = k.pem\n");
  EXPECT_TRUE(Has(k, "canal.tls.key = " + (root_ / "conf" / "k.pem").string())) << k;
  const std::string ca = Refusal(
      "canal.tls.enabled = true\ncanal.tls.cert = certs/server.pem\ncanal.tls.key = certs/server.key\n"
      "canal.tls.clientCa = certs/none.pem\n");
  EXPECT_TRUE(Has(ca, "canal.tls.clientCa = ")) << ca;
}

TEST_F(TlsConfigTest, AnUnreadableFileIsRefused) {
  if (::geteuid() != 0) {
    // A file without read permission (root reads any file, so only for others).
    ASSERT_EQ(::chmod(pki_->server.key.c_str(), 0), 0);
    const std::string m =
        Refusal("canal.tls.enabled = true\ncanal.tls.cert = certs/server.pem\ncanal.tls.key = certs/server.key\n");
    EXPECT_TRUE(Has(m, "canal.tls.key = " + pki_->server.key + ": cannot be read")) << m;
  }
  // A path no one can read, root included: a symbolic link to itself.
  const std::string loop = pki_->server.key + ".loop";
  ASSERT_EQ(::symlink(loop.c_str(), loop.c_str()), 0);
  const std::string m =
      Refusal("canal.tls.enabled = true\ncanal.tls.cert = certs/server.pem\ncanal.tls.key = certs/server.key.loop\n");
  EXPECT_TRUE(Has(m, "canal.tls.key = " + loop + ": cannot be read: ")) << m;
}

TEST_F(TlsConfigTest, AKeyThatIsNotTheCertificatesIsRefused) {
  const std::string m =
      Refusal("canal.tls.enabled = true\ncanal.tls.cert = certs/server.pem\ncanal.tls.key = certs/client.key\n");
  EXPECT_TRUE(Has(m, "canal.tls.key = " + pki_->client.key)) << m;
  EXPECT_TRUE(Has(m, "does not match the certificate of canal.tls.cert = " + pki_->server.cert)) << m;
}

TEST_F(TlsConfigTest, AKeyWithoutACertificateOrNeitherIsRefused) {
  std::string m = Refusal("canal.tls.enabled = true\ncanal.tls.key = certs/server.key\n");
  EXPECT_TRUE(Has(m, "canal.tls.key = " + pki_->server.key + " is set but canal.tls.cert is not")) << m;
  m = Refusal("canal.tls.enabled = true\ncanal.tls.cert = certs/server.pem\n");
  EXPECT_TRUE(Has(m, "canal.tls.key is not")) << m;
  m = Refusal("canal.tls.enabled = true\n");
  EXPECT_TRUE(Has(m, "needs canal.tls.cert and canal.tls.key")) << m;
}

TEST_F(TlsConfigTest, FilesThatAreNoPemAndABadVersionAreRefused) {
  std::string m =
      Refusal("canal.tls.enabled = true\ncanal.tls.cert = certs/server.key\ncanal.tls.key = certs/server.key\n");
  EXPECT_TRUE(Has(m, "canal.tls.cert = " + pki_->server.key + ": not a PEM certificate")) << m;
  m = Refusal("canal.tls.enabled = true\ncanal.tls.cert = certs/server.pem\ncanal.tls.key = certs/server.pem\n");
  EXPECT_TRUE(Has(m, "canal.tls.key = " + pki_->server.cert + ": not a PEM private key")) << m;
  m = Refusal("canal.tls.enabled = true\ncanal.tls.cert = certs\ncanal.tls.key = certs/server.key\n");
  EXPECT_TRUE(Has(m, "is not a file")) << m;
  m = Refusal("canal.tls.enabled = yes\n");
  EXPECT_TRUE(Has(m, "canal.tls.enabled = 'yes'")) << m;
  m = Refusal(
      "canal.tls.enabled = true\ncanal.tls.cert = certs/server.pem\ncanal.tls.key = certs/server.key\n"
      "canal.tls.minVersion = SSLv3\n");
  EXPECT_TRUE(Has(m, "canal.tls.minVersion = 'SSLv3'")) << m;
}

}  // namespace
}  // namespace canal::server
