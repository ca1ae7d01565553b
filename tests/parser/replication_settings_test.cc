// CheckReplicationSettings: which server settings are refused (with the fix in
// the message), which are accepted with a warning, and which are fine.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "canal/parser/mysql/query_connection.h"

namespace canal::mysql {
namespace {

// A MariaDB 10.11 primary configured the way Canal wants it.
ServerInfo GoodMariadb() {
  ServerInfo i;
  i.version = "10.11.6-MariaDB-0+deb12u1";
  i.mariadb = true;
  i.major = 10;
  i.minor = 11;
  i.patch = 6;
  i.server_id = 1;
  i.log_bin = true;
  i.binlog_format = "ROW";
  i.binlog_row_image = "FULL";
  i.binlog_row_metadata = "FULL";
  i.binlog_checksum = "CRC32";
  i.gtid_current_pos = "0-1-42";
  return i;
}

ServerInfo GoodMysql() {
  ServerInfo i = GoodMariadb();
  i.version = "8.0.36";
  i.mariadb = false;
  i.major = 8;
  i.minor = 0;
  i.patch = 36;
  i.gtid_mode = "ON";
  i.gtid_current_pos = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5";
  return i;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(ReplicationSettings, AWellConfiguredMariadbPassesWithoutWarnings) {
  std::vector<ReplicationWarning> warnings{{ReplicationWarning::Kind::kGtidMode, "stale"}};
  Status s = CheckReplicationSettings(GoodMariadb(), &warnings);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(warnings.empty()) << warnings[0].text;
}

TEST(ReplicationSettings, AWellConfiguredMysqlWithGtidsPassesWithoutWarnings) {
  std::vector<ReplicationWarning> warnings;
  Status s = CheckReplicationSettings(GoodMysql(), &warnings);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(warnings.empty());
}

TEST(ReplicationSettings, LogBinOffIsRefusedWithHowToEnableIt) {
  ServerInfo i = GoodMariadb();
  i.log_bin = false;
  std::vector<ReplicationWarning> warnings;
  Status s = CheckReplicationSettings(i, &warnings);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "log_bin is OFF; start the server with --log-bin (and server_id != 0)");
}

TEST(ReplicationSettings, LogBinIsCheckedBeforeEverythingElse) {
  ServerInfo i = GoodMariadb();
  i.log_bin = false;
  i.server_id = 0;
  i.binlog_format = "STATEMENT";
  Status s = CheckReplicationSettings(i, nullptr);
  EXPECT_TRUE(Contains(std::string(s.message()), "log_bin is OFF")) << s.ToString();
}

TEST(ReplicationSettings, ServerIdZeroIsRefused) {
  ServerInfo i = GoodMariadb();
  i.server_id = 0;
  Status s = CheckReplicationSettings(i, nullptr);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Contains(std::string(s.message()), "server_id is 0")) << s.ToString();
  EXPECT_TRUE(Contains(std::string(s.message()), "SET GLOBAL server_id=1")) << s.ToString();
}

TEST(ReplicationSettings, MixedBinlogFormatIsRefusedWithTheFix) {
  ServerInfo i = GoodMariadb();
  i.binlog_format = "MIXED";
  Status s = CheckReplicationSettings(i, nullptr);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "binlog_format is MIXED; set binlog_format=ROW (SET GLOBAL binlog_format=ROW, and in my.cnf)");
}

TEST(ReplicationSettings, StatementBinlogFormatIsRefused) {
  ServerInfo i = GoodMysql();
  i.binlog_format = "STATEMENT";
  Status s = CheckReplicationSettings(i, nullptr);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Contains(std::string(s.message()), "binlog_format is STATEMENT; set binlog_format=ROW"));
}

TEST(ReplicationSettings, AnUnreportedBinlogFormatIsRefusedNotAssumed) {
  ServerInfo i = GoodMariadb();
  i.binlog_format = "";
  Status s = CheckReplicationSettings(i, nullptr);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_TRUE(Contains(std::string(s.message()), "binlog_format is unknown")) << s.ToString();
}

TEST(ReplicationSettings, LowerCaseRowIsAccepted) {
  ServerInfo i = GoodMariadb();
  i.binlog_format = "row";
  i.binlog_row_image = "full";
  i.binlog_row_metadata = "full";
  std::vector<ReplicationWarning> warnings;
  EXPECT_TRUE(CheckReplicationSettings(i, &warnings).ok());
  EXPECT_TRUE(warnings.empty());
}

TEST(ReplicationSettings, MinimalRowImageIsAcceptedWithAWarning) {
  for (const char* image : {"MINIMAL", "NOBLOB"}) {
    ServerInfo i = GoodMariadb();
    i.binlog_row_image = image;
    std::vector<ReplicationWarning> warnings;
    Status s = CheckReplicationSettings(i, &warnings);
    EXPECT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(warnings.size(), 1u) << image;
    EXPECT_TRUE(Contains(warnings[0].text, std::string("binlog_row_image is ") + image)) << warnings[0].text;
    EXPECT_TRUE(Contains(warnings[0].text, "FULL for whole before/after images")) << warnings[0].text;
  }
}

TEST(ReplicationSettings, AServerWithoutRowImageLogsFullRowsAndGetsNoWarning) {
  ServerInfo i = GoodMysql();
  i.major = 5;
  i.minor = 5;
  i.binlog_row_image = "";
  i.binlog_row_metadata = "FULL";
  std::vector<ReplicationWarning> warnings;
  EXPECT_TRUE(CheckReplicationSettings(i, &warnings).ok());
  EXPECT_TRUE(warnings.empty());
}

TEST(ReplicationSettings, MinimalRowMetadataIsAcceptedWithAWarningAboutInformationSchema) {
  ServerInfo i = GoodMariadb();
  i.binlog_row_metadata = "MINIMAL";
  std::vector<ReplicationWarning> warnings;
  EXPECT_TRUE(CheckReplicationSettings(i, &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].kind, ReplicationWarning::Kind::kRowMetadata);
  EXPECT_TRUE(Contains(warnings[0].text, "binlog_row_metadata is MINIMAL")) << warnings[0].text;
  EXPECT_TRUE(Contains(warnings[0].text, "information_schema, which reflects the current schema")) << warnings[0].text;
  EXPECT_TRUE(Contains(warnings[0].text, "set binlog_row_metadata=FULL")) << warnings[0].text;
}

TEST(ReplicationSettings, AServerWithoutRowMetadataGetsAWarningWithoutAnImpossibleFix) {
  ServerInfo i = GoodMysql();
  i.major = 5;
  i.minor = 7;
  i.binlog_row_metadata = "";
  std::vector<ReplicationWarning> warnings;
  EXPECT_TRUE(CheckReplicationSettings(i, &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(Contains(warnings[0].text, "has no binlog_row_metadata")) << warnings[0].text;
  EXPECT_FALSE(Contains(warnings[0].text, "SET GLOBAL")) << warnings[0].text;
}

TEST(ReplicationSettings, MysqlGtidModeOffIsOnlyInformational) {
  ServerInfo i = GoodMysql();
  i.gtid_mode = "OFF";
  std::vector<ReplicationWarning> warnings;
  EXPECT_TRUE(CheckReplicationSettings(i, &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(Contains(warnings[0].text, "gtid_mode is OFF (informational)")) << warnings[0].text;
}

TEST(ReplicationSettings, MariadbHasNoGtidModeToReport) {
  ServerInfo i = GoodMariadb();
  i.gtid_mode = "";
  std::vector<ReplicationWarning> warnings;
  EXPECT_TRUE(CheckReplicationSettings(i, &warnings).ok());
  EXPECT_TRUE(warnings.empty());
}

TEST(ReplicationSettings, EveryWarningIsReportedTogether) {
  ServerInfo i = GoodMysql();
  i.binlog_row_image = "MINIMAL";
  i.binlog_row_metadata = "MINIMAL";
  i.gtid_mode = "OFF_PERMISSIVE";
  std::vector<ReplicationWarning> warnings;
  EXPECT_TRUE(CheckReplicationSettings(i, &warnings).ok());
  EXPECT_EQ(warnings.size(), 3u);
}

TEST(ReplicationSettings, WarningsMayBeIgnoredButRefusalsStillHappen) {
  ServerInfo i = GoodMariadb();
  i.binlog_row_image = "MINIMAL";
  EXPECT_TRUE(CheckReplicationSettings(i, nullptr).ok());
  i.binlog_format = "MIXED";
  EXPECT_FALSE(CheckReplicationSettings(i, nullptr).ok());
}

}  // namespace
}  // namespace canal::mysql
