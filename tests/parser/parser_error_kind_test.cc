// ParserErrorKind: the kind label of canal_instance_upstream_errors.
#include <gtest/gtest.h>

#include "canal/parser/event_parser.h"
#include "canal/parser/mysql/server_error.h"

namespace canal::parser {
namespace {

TEST(ParserErrorKind, KindsComeFromTheServersErrorNumberThenTheCode) {
  EXPECT_EQ(ParserErrorKind(Status::IOError("127.0.0.1:3306: connect: Connection refused")), "connection");
  EXPECT_EQ(ParserErrorKind(Status::Aborted("read timed out")), "connection");
  EXPECT_EQ(ParserErrorKind(Status::IOError("ERROR 1045: Access denied for user").WithSubcode(1045)), "authentication");
  EXPECT_EQ(ParserErrorKind(Status::IOError("x").WithSubcode(mysql::kErSpecificAccessDenied)), "authentication");
  EXPECT_EQ(ParserErrorKind(Status::IOError("x").WithSubcode(mysql::kErDbAccessDenied)), "authentication");
  EXPECT_EQ(ParserErrorKind(Status::IOError("x").WithSubcode(mysql::kErNotSupportedAuthMode)), "authentication");
  // The context a caller adds keeps the kind.
  EXPECT_EQ(ParserErrorKind(Status::IOError("x").WithSubcode(1045).WithContext("logging in as 'canal'")),
            "authentication");
  EXPECT_EQ(ParserErrorKind(Status::NotFound("binlog mysql-bin.000001 was purged")), "position");
  EXPECT_EQ(ParserErrorKind(Status::IOError("Could not find first log file").WithSubcode(1236)), "position");
  EXPECT_EQ(ParserErrorKind(Status::Corruption("bad checksum at mysql-bin.000001:400")), "decode");
  EXPECT_EQ(ParserErrorKind(Status::Truncated("event ends early")), "decode");
  EXPECT_EQ(ParserErrorKind(Status::NotSupported("binlog_format=STATEMENT")), "unsupported");
  EXPECT_EQ(ParserErrorKind(Status::InvalidArgument("gtid_mode=OFF but canal.instance.master.gtid is set")),
            "configuration");
}

TEST(ParserErrorKind, ASlaveIdConflictIsConfigurationEvenWhenItCameAsA1236) {
  EXPECT_EQ(ParserErrorKind(Status::InvalidArgument("another replica registered ...").WithSubcode(mysql::kErSlaveSameId)),
            "configuration");
}

// The label follows the kind, never the words: a message that reads like
// another kind, or one reworded, changes nothing.
TEST(ParserErrorKind, ARewordedMessageChangesNoKind) {
  EXPECT_EQ(ParserErrorKind(Status::IOError("Access denied; ERROR 1236; logging in as; lacks a privilege")),
            "connection");
  EXPECT_EQ(ParserErrorKind(Status::IOError("the primary refused the password").WithSubcode(1045)), "authentication");
  EXPECT_EQ(ParserErrorKind(Status::InvalidArgument("canal.instance.mysql.slaveId")), "configuration");
  EXPECT_EQ(ParserErrorKind(Status::Corruption("the binlog at 1236 is damaged")), "decode");
  EXPECT_EQ(ParserErrorKind(Status::IOError("dump refused").WithSubcode(mysql::kErMasterFatalReadingBinlog)),
            "position");
}

TEST(SlaveIdConflict, MariadbAndMysqlFormsAreRecognisedAndOther1236sAreNot) {
  EXPECT_TRUE(mysql::IsSlaveIdConflict(
      {4052, "HY000", "A slave with the same server_uuid/server_id is already connected; the first event ..."}));
  EXPECT_TRUE(mysql::IsSlaveIdConflict({1236, "HY000",
                                        "A slave with the same server_uuid/server_id as this slave has connected to "
                                        "the master; the first event 'binlog.000001' at 4"}));
  EXPECT_FALSE(mysql::IsSlaveIdConflict({1236, "HY000", "Could not find first log file name in binary log index file"}));
  EXPECT_FALSE(mysql::IsSlaveIdConflict({1236, "HY000", ""}));
  EXPECT_FALSE(mysql::IsSlaveIdConflict({1927, "70100", "Connection was killed"}));
  EXPECT_FALSE(mysql::IsSlaveIdConflict({}));
}

}  // namespace
}  // namespace canal::parser
