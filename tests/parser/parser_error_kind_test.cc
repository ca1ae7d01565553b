// ParserErrorKind: the kind label of canal_instance_upstream_errors.
#include <gtest/gtest.h>

#include "canal/parser/event_parser.h"
#include "canal/parser/mysql/server_error.h"

namespace canal::parser {
namespace {

TEST(ParserErrorKind, Kinds) {
  EXPECT_EQ(ParserErrorKind(Status::IOError("127.0.0.1:3306: connect: Connection refused")), "connection");
  EXPECT_EQ(ParserErrorKind(Status::Aborted("read timed out")), "connection");
  EXPECT_EQ(ParserErrorKind(Status::IOError("1045: Access denied for user 'canal'@'localhost'")), "authentication");
  EXPECT_EQ(ParserErrorKind(Status::InvalidArgument("x").WithContext("logging in as 'canal'")), "authentication");
  EXPECT_EQ(ParserErrorKind(Status::NotFound("binlog mysql-bin.000001 was purged")), "position");
  EXPECT_EQ(ParserErrorKind(Status::IOError("server error 1236: Could not find first log file")), "position");
  EXPECT_EQ(ParserErrorKind(Status::Corruption("bad checksum at mysql-bin.000001:400")), "decode");
  EXPECT_EQ(ParserErrorKind(Status::Truncated("event ends early")), "decode");
  EXPECT_EQ(ParserErrorKind(Status::NotSupported("binlog_format=STATEMENT")), "unsupported");
  EXPECT_EQ(ParserErrorKind(Status::InvalidArgument("gtid_mode=OFF but canal.instance.master.gtid is set")),
            "configuration");
}

TEST(ParserErrorKind, ASlaveIdConflictIsConfigurationEvenWhenItCameAsA1236) {
  EXPECT_EQ(ParserErrorKind(Status::InvalidArgument(
                "another replica registered ... (ERROR 1236 (HY000): A slave with the same server_uuid/server_id as "
                "this slave has connected to the master); give this destination a unique "
                "canal.instance.mysql.slaveId")),
            "configuration");
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
