// CanalConfig and InstanceConfig: every key Canal defines that the server
// uses, its default, instance defaults taken from canal.properties, the
// environment overrides, relative paths, and — for each key — a bad value
// refused with the file (and line), the key and the value named.
#include "canal/server/config.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

namespace canal::server {
namespace {

namespace fs = std::filesystem;

EnvLookup FakeEnv(std::map<std::string, std::string> vars = {}) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("canal_config_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::remove_all(root_);
    fs::create_directories(root_ / "conf" / "example");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  std::string Conf() const { return (root_ / "conf").string(); }
  std::string CanalFile() const { return (root_ / "conf" / "canal.properties").string(); }
  std::string InstanceFile(const std::string& dest = "example") const {
    return (root_ / "conf" / dest / "instance.properties").string();
  }

  void Write(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  }

  Status LoadCanal(const std::string& text, CanalConfig* config, std::map<std::string, std::string> env = {},
                   ConfigOverrides overrides = {}) {
    Write(CanalFile(), text);
    return LoadCanalConfig(CanalFile(), overrides, config, FakeEnv(std::move(env)));
  }

  // canal.properties `canal_text`, example/instance.properties `instance_text`.
  Status LoadInstance(const std::string& canal_text, const std::string& instance_text, InstanceConfig* out,
                      std::map<std::string, std::string> env = {}) {
    CanalConfig canal;
    Status s = LoadCanal(canal_text, &canal, std::move(env));
    if (!s.ok()) return s;
    Write(InstanceFile(), instance_text);
    return LoadInstanceConfig(canal, "example", out);
  }

  static constexpr const char* kMinimalInstance =
      "canal.instance.master.address=127.0.0.1:3306\ncanal.instance.dbUsername=canal\n";

  fs::path root_;
  static inline int counter_ = 0;
};

// Expects InvalidArgument whose message holds every one of `parts`.
void ExpectRefused(const Status& s, std::initializer_list<std::string> parts) {
  ASSERT_FALSE(s.ok()) << "expected a refusal mentioning " << *parts.begin();
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument) << s.ToString();
  for (const std::string& part : parts) {
    EXPECT_NE(s.message().find(part), std::string::npos) << "'" << part << "' missing from: " << s.ToString();
  }
}

TEST_F(ConfigTest, AnEmptyCanalPropertiesTakesCanalsDefaults) {
  CanalConfig c;
  ASSERT_TRUE(LoadCanal("", &c).ok());
  EXPECT_EQ(c.session.ip, "0.0.0.0");
  EXPECT_EQ(c.session.port, 11111);
  EXPECT_EQ(c.session.user, "");
  EXPECT_EQ(c.session.password_stored, "");
  EXPECT_FALSE(c.session.low_latency_get);  // Canal's rule
  EXPECT_TRUE(c.destinations.empty());
  EXPECT_EQ(c.conf_dir, Conf());  // the folder holding canal.properties
  EXPECT_TRUE(c.auto_scan);
  EXPECT_EQ(c.auto_scan_interval_s, 5);
  EXPECT_EQ(c.file_data_dir, Conf());  // Canal's ${canal.conf.dir}
  EXPECT_EQ(c.file_flush_period_ms, 1000);
  EXPECT_EQ(c.session.slow_flush_warn_ms, 100);
  EXPECT_EQ(c.properties_file, CanalFile());
}

TEST_F(ConfigTest, ReadsEveryServerKey) {
  CanalConfig c;
  ASSERT_TRUE(LoadCanal("canal.ip = 127.0.0.1\n"
                        "canal.port = 12000\n"
                        "canal.user = canal\n"
                        "canal.passwd = E3619321C1A937C46A0D8BD1DAC39F93B27D4458\n"
                        "canal.get.low.latency = true\n"
                        "canal.destinations = example, orders ,\n"
                        "canal.conf.dir = ../conf\n"
                        "canal.auto.scan = false\n"
                        "canal.auto.scan.interval = 2\n"
                        "canal.file.data.dir = ${canal.conf.dir}/../data\n"
                        "canal.file.flush.period = 250\n"
                        "canal.file.flush.warn = 0\n",
                        &c)
                  .ok());
  EXPECT_EQ(c.session.ip, "127.0.0.1");
  EXPECT_EQ(c.session.port, 12000);
  EXPECT_EQ(c.session.user, "canal");
  EXPECT_EQ(c.session.password_stored, "E3619321C1A937C46A0D8BD1DAC39F93B27D4458");
  EXPECT_TRUE(c.session.low_latency_get);
  EXPECT_EQ(c.destinations, (std::vector<std::string>{"example", "orders"}));
  EXPECT_EQ(c.conf_dir, Conf());  // Canal's ../conf, relative to the conf folder itself
  EXPECT_FALSE(c.auto_scan);
  EXPECT_EQ(c.auto_scan_interval_s, 2);
  EXPECT_EQ(c.file_data_dir, (root_ / "data").string());
  EXPECT_EQ(c.file_flush_period_ms, 250);
  EXPECT_EQ(c.session.slow_flush_warn_ms, 0);
}

TEST_F(ConfigTest, PathsResolveAgainstTheConfFolderAndDataCanBeOverridden) {
  CanalConfig c;
  ASSERT_TRUE(LoadCanal("canal.conf.dir = instances\ncanal.file.data.dir = /var/lib/canal\n", &c).ok());
  EXPECT_EQ(c.conf_dir, (root_ / "conf" / "instances").string());
  EXPECT_EQ(c.file_data_dir, "/var/lib/canal");
  ConfigOverrides overrides;
  overrides.data_dir = "/tmp/elsewhere/";
  ASSERT_TRUE(LoadCanal("canal.file.data.dir = /var/lib/canal\n", &c, {}, overrides).ok());
  EXPECT_EQ(c.file_data_dir, "/tmp/elsewhere");
}

TEST_F(ConfigTest, EnvironmentOverridesServerKeys) {
  CanalConfig c;
  ASSERT_TRUE(LoadCanal("canal.port = 11111\ncanal.destinations = a\n", &c,
                        {{"CANAL_PORT", "12345"}, {"canal.destinations", "b,c"}})
                  .ok());
  EXPECT_EQ(c.session.port, 12345);
  EXPECT_EQ(c.destinations, (std::vector<std::string>{"b", "c"}));
}

TEST_F(ConfigTest, ABadEnvironmentValueNamesTheVariable) {
  CanalConfig c;
  ExpectRefused(LoadCanal("canal.port = 11111\n", &c, {{"CANAL_PORT", "eleven"}}),
                {"environment variable CANAL_PORT", "canal.port", "'eleven'"});
}

TEST_F(ConfigTest, RefusesBadServerValuesNamingFileLineKeyAndValue) {
  struct Case {
    std::string key, value;
  };
  const Case cases[] = {
      {"canal.port", "abc"},
      {"canal.port", "70000"},
      {"canal.port", "-1"},
      {"canal.port", "11111x"},
      {"canal.ip", "localhost-ish"},
      {"canal.ip", "300.1.1.1"},
      {"canal.passwd", "canal"},
      {"canal.passwd", "E3619321C1A937C46A0D8BD1DAC39F93B27D445Z"},
      {"canal.destinations", "a,b/c"},
      {"canal.destinations", "a,..,b"},
      {"canal.destinations", "a,a"},
      {"canal.auto.scan", "yes"},
      {"canal.get.low.latency", "fast"},
      {"canal.auto.scan.interval", "0"},
      {"canal.auto.scan.interval", "5s"},
      {"canal.file.flush.period", "-1"},
      {"canal.file.flush.period", "1e3"},
      {"canal.file.flush.warn", "-5"},
      {"canal.file.flush.warn", "100ms"},
      {"canal.file.flush.warn", "3600001"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.key + "=" + c.value);
    CanalConfig config;
    ExpectRefused(LoadCanal("# line 1\n" + c.key + " = " + c.value + "\n", &config),
                  {CanalFile() + ":2", c.key, "'" + c.value + "'"});
  }
}

TEST_F(ConfigTest, AMissingCanalPropertiesSaysHowToPointAtOne) {
  CanalConfig c;
  Status s = LoadCanalConfig((root_ / "nowhere" / "canal.properties").string(), {}, &c, FakeEnv());
  ASSERT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.message().find("--conf"), std::string::npos);
}

TEST_F(ConfigTest, AnUnresolvedSubstitutionIsRefused) {
  CanalConfig c;
  ExpectRefused(LoadCanal("canal.file.data.dir = ${no.such.key}/data\n", &c),
                {CanalFile() + ":1", "canal.file.data.dir", "no.such.key"});
}

TEST_F(ConfigTest, InstanceDefaultsWhenOnlyAddressAndUserAreGiven) {
  InstanceConfig i;
  ASSERT_TRUE(LoadInstance("", kMinimalInstance, &i).ok());
  EXPECT_EQ(i.destination, "example");
  EXPECT_EQ(i.properties_file, InstanceFile());
  EXPECT_EQ(i.parser.destination, "example");
  EXPECT_EQ(i.parser.master.host, "127.0.0.1");
  EXPECT_EQ(i.parser.master.port, 3306);
  EXPECT_EQ(i.parser.master.user, "canal");
  EXPECT_EQ(i.parser.master.password, "");
  EXPECT_EQ(i.parser.master.charset, "utf8mb4");
  EXPECT_GE(i.parser.slave_id, 100000u);  // derived: see DefaultSlaveIdsDifferPerServer
  EXPECT_EQ(i.parser.start.journal_name, "");
  EXPECT_EQ(i.parser.start.position, 0u);
  EXPECT_EQ(i.parser.start.timestamp_ms, 0);
  EXPECT_EQ(i.parser.start.gtid, "");
  EXPECT_EQ(i.parser.on_invalid_position, parser::InvalidPositionAction::kStop);
  EXPECT_EQ(i.parser.heartbeat_period_ms, 3000);
  EXPECT_EQ(i.parser.buffer.max_events, 4096u);
  EXPECT_EQ(i.store.buffer_size, 16384u);
  EXPECT_EQ(i.store.buffer_memunit, 1024u);
  EXPECT_EQ(i.store.batch_mode, store::BatchMode::kMemSize);
  EXPECT_FALSE(i.store.ddl_isolation);
  EXPECT_EQ(i.filter_regex, "");
  EXPECT_EQ(i.sink.table_filter->include_text(), "");
  EXPECT_EQ(i.sink.field_filter, nullptr);
  EXPECT_FALSE(i.sink.event_types.query_ddl);
  EXPECT_EQ(i.contents, kMinimalInstance);
}

TEST_F(ConfigTest, ReadsEveryInstanceKey) {
  InstanceConfig i;
  Status s = LoadInstance("",
                          "canal.instance.master.address = db.example.com:3307\n"
                          "canal.instance.master.journal.name = mysql-bin.000004\n"
                          "canal.instance.master.position = 6442450944\n"
                          "canal.instance.master.timestamp = 1700000000000\n"
                          "canal.instance.master.gtid = 0-1-100\n"
                          "canal.instance.dbUsername = repl\n"
                          "canal.instance.dbPassword = s3cret\n"
                          "canal.instance.connectionCharset = UTF-8\n"
                          "canal.instance.mysql.slaveId = 4321\n"
                          "canal.instance.parser.invalid.position.action = EARLIEST\n"
                          "canal.instance.detecting.interval.time = 5\n"
                          "canal.instance.transaction.size = 1024\n"
                          "canal.instance.memory.buffer.size = 1024\n"
                          "canal.instance.memory.buffer.memunit = 512\n"
                          "canal.instance.memory.batch.mode = ITEMSIZE\n"
                          "canal.instance.get.ddl.isolation = true\n"
                          "canal.instance.filter.regex = shop\\\\..*,crm\\\\.users\n"
                          "canal.instance.filter.black.regex = shop\\\\.tmp_.*\n"
                          "canal.instance.filter.field = shop.orders:id/total\n"
                          "canal.instance.filter.black.field = crm.users:password\n"
                          "canal.instance.filter.query.dml = true\n"
                          "canal.instance.filter.query.ddl = true\n"
                          "canal.instance.filter.query.dcl = TRUE\n"
                          "canal.instance.filter.dml.insert = true\n"
                          "canal.instance.filter.dml.update = true\n"
                          "canal.instance.filter.dml.delete = true\n"
                          "canal.instance.filter.transaction.entry = true\n",
                          &i);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(i.parser.master.host, "db.example.com");
  EXPECT_EQ(i.parser.master.port, 3307);
  EXPECT_EQ(i.parser.start.journal_name, "mysql-bin.000004");
  EXPECT_EQ(i.parser.start.position, 6442450944u);  // past 4 GiB: one huge transaction makes such a file
  EXPECT_EQ(i.parser.start.timestamp_ms, 1700000000000);
  EXPECT_EQ(i.parser.start.gtid, "0-1-100");
  EXPECT_EQ(i.parser.master.user, "repl");
  EXPECT_EQ(i.parser.master.password, "s3cret");
  EXPECT_EQ(i.parser.master.charset, "utf8mb4");  // Java's UTF-8
  EXPECT_EQ(i.parser.slave_id, 4321u);
  EXPECT_EQ(i.parser.on_invalid_position, parser::InvalidPositionAction::kEarliest);
  EXPECT_EQ(i.parser.heartbeat_period_ms, 5000);
  EXPECT_EQ(i.parser.buffer.max_events, 1024u);
  EXPECT_EQ(i.store.buffer_size, 1024u);
  EXPECT_EQ(i.store.buffer_memunit, 512u);
  EXPECT_EQ(i.store.batch_mode, store::BatchMode::kItemSize);
  EXPECT_TRUE(i.store.ddl_isolation);
  EXPECT_EQ(i.filter_regex, "shop\\..*,crm\\.users");  // the file's \\. is the regex \.
  EXPECT_EQ(i.filter_black_regex, "shop\\.tmp_.*");
  ASSERT_NE(i.sink.table_filter, nullptr);
  EXPECT_TRUE(i.sink.table_filter->Accepts("shop", "orders"));
  EXPECT_TRUE(i.sink.table_filter->Accepts("CRM", "users"));
  EXPECT_FALSE(i.sink.table_filter->Accepts("shop", "tmp_1"));
  EXPECT_FALSE(i.sink.table_filter->Accepts("crm", "accounts"));
  ASSERT_NE(i.sink.field_filter, nullptr);
  EXPECT_TRUE(i.sink.field_filter->Lists("shop", "orders", "total"));
  ASSERT_NE(i.sink.black_field_filter, nullptr);
  EXPECT_TRUE(i.sink.black_field_filter->Lists("crm", "users", "password"));
  const sink::EventTypeFilter& t = i.sink.event_types;
  EXPECT_TRUE(t.query_dml && t.query_ddl && t.query_dcl && t.dml_insert && t.dml_update && t.dml_delete &&
              t.transaction_entry);
}

TEST_F(ConfigTest, InstanceKeysDefaultToCanalPropertiesAndTheInstanceFileWins) {
  InstanceConfig i;
  Status s = LoadInstance(
      "canal.instance.memory.buffer.size = 2048\n"
      "canal.instance.filter.query.ddl = true\n"
      "canal.instance.dbPassword = from-global\n"
      "canal.instance.filter.black.regex = mysql\\\\.slave_.*\n",
      std::string(kMinimalInstance) + "canal.instance.dbPassword = from-instance\n", &i);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(i.store.buffer_size, 2048u);
  EXPECT_TRUE(i.sink.event_types.query_ddl);
  EXPECT_EQ(i.parser.master.password, "from-instance");
  EXPECT_FALSE(i.sink.table_filter->Accepts("mysql", "slave_master_info"));
}

TEST_F(ConfigTest, EnvironmentOverridesInstanceKeys) {
  InstanceConfig i;
  Status s = LoadInstance("", kMinimalInstance, &i,
                          {{"CANAL_INSTANCE_MASTER_ADDRESS", "10.0.0.9:3310"}, {"CANAL_INSTANCE_DBPASSWORD", "pw"}});
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(i.parser.master.host, "10.0.0.9");
  EXPECT_EQ(i.parser.master.port, 3310);
  EXPECT_EQ(i.parser.master.password, "pw");
}

TEST_F(ConfigTest, AcceptsAddressForms) {
  const std::pair<std::string, std::pair<std::string, uint16_t>> forms[] = {
      {"127.0.0.1:13306", {"127.0.0.1", 13306}},
      {"db-1.internal", {"db-1.internal", 3306}},
      {"[::1]:3307", {"::1", 3307}},
      {"[::1]", {"::1", 3306}},
  };
  for (const auto& [text, want] : forms) {
    InstanceConfig i;
    Status s = LoadInstance("", "canal.instance.master.address=" + text + "\ncanal.instance.dbUsername=u\n", &i);
    ASSERT_TRUE(s.ok()) << text << ": " << s.ToString();
    EXPECT_EQ(i.parser.master.host, want.first) << text;
    EXPECT_EQ(i.parser.master.port, want.second) << text;
  }
}

// Several candidates for the primary (docs/replication.md, "Failover"), and Canal's standby.
TEST_F(ConfigTest, AListOfAddressesAndTheStandbyAreCandidatesInOrder) {
  InstanceConfig i;
  Status s = LoadInstance("",
                          "canal.instance.master.address = 10.0.0.1:3306, [::1]:3307 ,db-3\n"
                          "canal.instance.standby.address = 10.0.0.4:3306,10.0.0.1:3306\n"
                          "canal.instance.detecting.retry.threshold = 5\n"
                          "canal.instance.failover.diverged = continue\n"
                          "canal.instance.dbUsername=u\n",
                          &i);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(i.parser.master.host, "10.0.0.1");
  EXPECT_EQ(i.parser.master.port, 3306);
  ASSERT_EQ(i.parser.candidates.size(), 4u) << "a repeated address is one candidate";
  EXPECT_EQ(i.parser.candidates[1].host, "::1");
  EXPECT_EQ(i.parser.candidates[1].port, 3307);
  EXPECT_EQ(i.parser.candidates[2].host, "db-3");
  EXPECT_EQ(i.parser.candidates[2].port, 3306);
  EXPECT_EQ(i.parser.candidates[3].host, "10.0.0.4");
  EXPECT_EQ(i.parser.detect_retry_threshold, 5);
  EXPECT_EQ(i.parser.on_diverged, parser::DivergedAction::kContinue);
  EXPECT_EQ(i.parser.standby.host, "10.0.0.4") << "Canal's standby (its start keys apply to it)";
  EXPECT_EQ(i.parser.standby.port, 3306);
  EXPECT_TRUE(i.parser.standby_start.journal_name.empty());
  // Canal's standby start keys, read with Canal's meaning.
  InstanceConfig at;
  ASSERT_TRUE(LoadInstance("",
                           "canal.instance.master.address = 10.0.0.1:3306\n"
                           "canal.instance.standby.address = 10.0.0.2:3307\n"
                           "canal.instance.standby.journal.name = mysql-bin.000007\n"
                           "canal.instance.standby.position = 4711\n"
                           "canal.instance.standby.timestamp = 1700000000000\n"
                           "canal.instance.dbUsername=u\n",
                           &at)
                  .ok());
  EXPECT_EQ(at.parser.standby.host, "10.0.0.2");
  EXPECT_EQ(at.parser.standby.port, 3307);
  EXPECT_EQ(at.parser.standby_start.journal_name, "mysql-bin.000007");
  EXPECT_EQ(at.parser.standby_start.position, 4711u);
  EXPECT_EQ(at.parser.standby_start.timestamp_ms, 1700000000000);
  InstanceConfig lone;
  const Status s2 = LoadInstance("",
                                 "canal.instance.master.address = 10.0.0.1:3306\n"
                                 "canal.instance.standby.address = 10.0.0.2:3307\n"
                                 "canal.instance.standby.position = 4711\n"
                                 "canal.instance.dbUsername=u\n",
                                 &lone);
  EXPECT_NE(s2.message().find("canal.instance.standby.journal.name"), std::string_view::npos) << s2.ToString();
  // One address: no candidates, the stream stays with it (today's behaviour).
  InstanceConfig one;
  ASSERT_TRUE(LoadInstance("", "canal.instance.master.address=10.0.0.1:3306\ncanal.instance.dbUsername=u\n", &one).ok());
  EXPECT_TRUE(one.parser.candidates.empty());
  EXPECT_EQ(one.parser.on_diverged, parser::DivergedAction::kStop);
  EXPECT_EQ(one.parser.failover_timestamp_fallback_s, 0) << "no resume by time unless asked";
}

// A failover without GTIDs: stop by default; resume by time only when asked, over Canal's window.
TEST_F(ConfigTest, TheTimestampFallbackIsOffUnlessAskedAndUsesCanalsWindow) {
  InstanceConfig on;
  ASSERT_TRUE(LoadInstance("",
                           "canal.instance.master.address=10.0.0.1:3306\ncanal.instance.dbUsername=u\n"
                           "canal.instance.failover.timestamp.fallback=true\n",
                           &on)
                  .ok());
  EXPECT_EQ(on.parser.failover_timestamp_fallback_s, 60);
  InstanceConfig window;
  ASSERT_TRUE(LoadInstance("",
                           "canal.instance.master.address=10.0.0.1:3306\ncanal.instance.dbUsername=u\n"
                           "canal.instance.failover.timestamp.fallback=true\n"
                           "canal.instance.fallbackIntervalInSeconds=15\n",
                           &window)
                  .ok());
  EXPECT_EQ(window.parser.failover_timestamp_fallback_s, 15);
  InstanceConfig off;
  ASSERT_TRUE(LoadInstance("",
                           "canal.instance.master.address=10.0.0.1:3306\ncanal.instance.dbUsername=u\n"
                           "canal.instance.fallbackIntervalInSeconds=15\n",
                           &off)
                  .ok());
  EXPECT_EQ(off.parser.failover_timestamp_fallback_s, 0) << "a window alone does not turn the fallback on";
}

// Canal's detection keys: off by default, Canal's statement, HA only when asked.
TEST_F(ConfigTest, DetectingKeysKeepCanalsDefaultsAndMeaning) {
  InstanceConfig plain;
  ASSERT_TRUE(LoadInstance("", "canal.instance.master.address=10.0.0.1:3306\ncanal.instance.dbUsername=u\n", &plain)
                  .ok());
  EXPECT_FALSE(plain.parser.detecting_enable);
  EXPECT_EQ(plain.parser.detecting_sql, "select 1");
  EXPECT_FALSE(plain.parser.detecting_ha);
  InstanceConfig on;
  ASSERT_TRUE(LoadInstance("",
                           "canal.instance.master.address=10.0.0.1:3306,10.0.0.2:3306\ncanal.instance.dbUsername=u\n"
                           "canal.instance.detecting.enable = true\n"
                           "canal.instance.detecting.sql = INSERT INTO ops.hb VALUES (1, NOW()) ON DUPLICATE KEY "
                           "UPDATE ts = NOW() \n"
                           "canal.instance.detecting.heartbeatHaEnable = true\n",
                           &on)
                  .ok());
  EXPECT_TRUE(on.parser.detecting_enable);
  EXPECT_EQ(on.parser.detecting_sql, "INSERT INTO ops.hb VALUES (1, NOW()) ON DUPLICATE KEY UPDATE ts = NOW()");
  EXPECT_TRUE(on.parser.detecting_ha);
  InstanceConfig huge;
  const Status s = LoadInstance("",
                                "canal.instance.master.address=10.0.0.1:3306\ncanal.instance.dbUsername=u\n"
                                "canal.instance.detecting.enable=true\ncanal.instance.detecting.sql=select " +
                                    std::string(5000, '1') + "\n",
                                &huge);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("canal.instance.detecting.sql"), std::string_view::npos) << s.ToString();
}

// Canal's parallel-parser key: on by default (as Canal's canal.properties ships it), and
// here it means the binlog is read ahead on a thread of its own.
TEST_F(ConfigTest, ParserParallelReadsAheadUnlessTurnedOff) {
  InstanceConfig plain;
  ASSERT_TRUE(LoadInstance("", "canal.instance.master.address=10.0.0.1:3306\ncanal.instance.dbUsername=u\n", &plain)
                  .ok());
  EXPECT_TRUE(plain.parser.read_ahead);
  InstanceConfig off;
  ASSERT_TRUE(LoadInstance("canal.instance.parser.parallel = false\n",
                           "canal.instance.master.address=10.0.0.1:3306\ncanal.instance.dbUsername=u\n", &off)
                  .ok());
  EXPECT_FALSE(off.parser.read_ahead) << "the server-wide default applies";
}

TEST_F(ConfigTest, RefusesBadInstanceValuesNamingFileLineKeyAndValue) {
  struct Case {
    std::string key, value, expect;  // expect: a further word the message must hold ("" = none)
  };
  const Case cases[] = {
      {"canal.instance.master.address", "host:", "host:port"},
      {"canal.instance.master.address", "host:0", "host:port"},
      {"canal.instance.master.address", "host:99999", "host:port"},
      {"canal.instance.master.address", "::1:3306", "host:port"},
      {"canal.instance.master.address", "[::1:3306", "host:port"},
      {"canal.instance.master.address", ":3306", "host:port"},
      {"canal.instance.master.address", "10.0.0.1:3306,host:0", "comma-separated"},
      {"canal.instance.master.address", ",", "host:port"},
      {"canal.instance.standby.address", "10.0.0.2:x", "host:port"},
      {"canal.instance.detecting.retry.threshold", "0", "failed sessions"},
      {"canal.instance.failover.diverged", "ignore", "stop, continue"},
      {"canal.instance.failover.timestamp.fallback", "maybe", ""},
      {"canal.instance.fallbackIntervalInSeconds", "0", "seconds"},
      {"canal.instance.fallbackIntervalInSeconds", "a minute", "seconds"},
      {"canal.instance.detecting.enable", "sometimes", ""},
      {"canal.instance.detecting.heartbeatHaEnable", "2", ""},
      {"canal.instance.parser.parallel", "threads", ""},
      {"canal.instance.master.position", "12ab", "binlog offset"},
      {"canal.instance.master.position", "-1", "binlog offset"},
      {"canal.instance.master.position", "9223372036854775808", "binlog offset"},
      {"canal.instance.master.timestamp", "-5", "milliseconds"},
      {"canal.instance.master.timestamp", "yesterday", "milliseconds"},
      {"canal.instance.mysql.slaveId", "abc", "server id"},
      {"canal.instance.mysql.slaveId", "4294967296", "server id"},
      {"canal.instance.connectionCharset", "klingon", "character set"},
      {"canal.instance.parser.invalid.position.action", "skip", "stop, earliest, latest"},
      {"canal.instance.detecting.interval.time", "0", "seconds"},
      {"canal.instance.transaction.size", "0", "events"},
      {"canal.instance.memory.buffer.size", "1000", ""},
      {"canal.instance.memory.buffer.size", "lots", ""},
      {"canal.instance.memory.buffer.memunit", "0", ""},
      {"canal.instance.memory.batch.mode", "BYTES", ""},
      {"canal.instance.get.ddl.isolation", "maybe", ""},
      {"canal.instance.filter.regex", "shop\\\\.(orders", "regular expression"},
      {"canal.instance.filter.black.regex", "(?=x).*", ""},
      {"canal.instance.filter.field", "shop.orders", "db.table:col"},
      {"canal.instance.filter.black.field", "shop.orders:", "db.table:col"},
      {"canal.instance.filter.query.dml", "yes", "true or false"},
      {"canal.instance.filter.dml.delete", "1", "true or false"},
      {"canal.instance.filter.transaction.entry", "on", "true or false"},
      {"canal.instance.value.format", "java", "canal"},
      {"canal.instance.value.format", "mysql8", "mysql"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.key + "=" + c.value);
    InstanceConfig i;
    std::string text = std::string(kMinimalInstance) + c.key + "=" + c.value + "\n";
    // The key's own line (3) wins over line 1 when it is the address.
    Status s = LoadInstance("", text, &i);
    // The value as the file has it after unescaping (\\ -> \).
    std::string shown = c.value;
    for (size_t p; (p = shown.find("\\\\")) != std::string::npos;) shown.replace(p, 2, "\\");
    std::vector<std::string> parts{InstanceFile() + ":3", c.key, shown};
    ExpectRefused(s, {parts[0], parts[1], parts[2]});
    if (!c.expect.empty()) ExpectRefused(s, {c.expect});
  }
}

// canal.instance.snapshot.*: a value out of bounds names the key, the value, the bounds and why.
TEST_F(ConfigTest, SnapshotKeysAreReadAndBadOnesRefusedNamingKeyValueAndBounds) {
  InstanceConfig i;
  Status s = LoadInstance("", std::string(kMinimalInstance) +
                                  "canal.instance.snapshot.mode = initial_only\n"
                                  "canal.instance.snapshot.threads = 4\n"
                                  "canal.instance.snapshot.chunk.rows = 5000\n"
                                  "canal.instance.snapshot.chunk.bytes = 1048576\n"
                                  "canal.instance.snapshot.window.keys = 777\n",
                          &i);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(i.snapshot.mode, snapshot::SnapshotMode::kInitialOnly);
  EXPECT_EQ(i.snapshot.threads, 4u);
  EXPECT_EQ(i.snapshot.chunk_rows, 5000u);
  EXPECT_EQ(i.snapshot.chunk_bytes, 1048576u);
  EXPECT_EQ(i.snapshot.window_keys, 777u);
  ASSERT_TRUE(LoadInstance("", kMinimalInstance, &i).ok());
  EXPECT_EQ(i.snapshot.mode, snapshot::SnapshotMode::kNever) << "Canal's behaviour by default";

  const struct {
    const char* key;
    const char* value;
    const char* expect;
  } cases[] = {
      {"canal.instance.snapshot.chunk.rows", "0", "1..1000000"},
      {"canal.instance.snapshot.chunk.rows", "1000000000000", "1..1000000"},
      {"canal.instance.snapshot.chunk.bytes", "0", "65536"},
      {"canal.instance.snapshot.chunk.bytes", "1000000000000", "1073741824"},
      {"canal.instance.snapshot.threads", "0", "1..64"},
      {"canal.instance.snapshot.threads", "1000", "1..64"},
      {"canal.instance.snapshot.window.keys", "0", "window.keys"},
      {"canal.instance.snapshot.mode", "always", "never, initial, initial_only or when_needed"},
      {"canal.instance.snapshot.chunk.rows", "many", "number"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.key) + "=" + c.value);
    s = LoadInstance("", std::string(kMinimalInstance) + c.key + "=" + c.value + "\n", &i);
    ExpectRefused(s, {InstanceFile(), c.key, c.value});
    EXPECT_NE(s.ToString().find(c.expect), std::string::npos) << s.ToString();
  }
}

TEST_F(ConfigTest, ValueFormatDefaultsToCanalsFormsAndMysqlChoosesMySqls) {
  InstanceConfig i;
  ASSERT_TRUE(LoadInstance("", kMinimalInstance, &i).ok());
  EXPECT_EQ(i.sink.entries.values.forms, render::TextForms::kCanal);
  InstanceConfig m;
  Status s = LoadInstance("canal.instance.value.format = canal\n",
                          std::string(kMinimalInstance) + "canal.instance.value.format = MySQL\n", &m);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(m.sink.entries.values.forms, render::TextForms::kMysql);  // the instance file wins; any case
  InstanceConfig g;
  ASSERT_TRUE(LoadInstance("canal.instance.value.format = mysql\n", kMinimalInstance, &g).ok());
  EXPECT_EQ(g.sink.entries.values.forms, render::TextForms::kMysql);  // canal.properties' default
}

TEST_F(ConfigTest, APositionWithoutAJournalNameIsRefused) {
  InstanceConfig i;
  ExpectRefused(LoadInstance("", std::string(kMinimalInstance) + "canal.instance.master.position=4\n", &i),
                {InstanceFile() + ":3", "canal.instance.master.position", "journal.name"});
}

TEST_F(ConfigTest, MissingAddressOrUserIsRefusedNamingTheFile) {
  InstanceConfig i;
  ExpectRefused(LoadInstance("", "canal.instance.dbUsername=canal\n", &i),
                {InstanceFile(), "canal.instance.master.address"});
  ExpectRefused(LoadInstance("", "canal.instance.master.address=127.0.0.1:3306\n", &i),
                {InstanceFile(), "canal.instance.dbUsername"});
}

TEST_F(ConfigTest, ABadDefaultInCanalPropertiesNamesCanalProperties) {
  InstanceConfig i;
  ExpectRefused(LoadInstance("canal.instance.memory.batch.mode = WHATEVER\n", kMinimalInstance, &i),
                {CanalFile() + ":1", "canal.instance.memory.batch.mode", "WHATEVER"});
}

TEST_F(ConfigTest, AMissingInstancePropertiesIsNotFound) {
  CanalConfig canal;
  ASSERT_TRUE(LoadCanal("", &canal).ok());
  InstanceConfig i;
  Status s = LoadInstanceConfig(canal, "absent", &i);
  ASSERT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.message().find(InstanceFile("absent")), std::string::npos);
}

TEST_F(ConfigTest, ADestinationNameThatIsNotAFolderNameIsRefused) {
  CanalConfig canal;
  ASSERT_TRUE(LoadCanal("", &canal).ok());
  InstanceConfig i;
  ExpectRefused(ParseInstanceConfig(canal, "../etc", "/x", kMinimalInstance, &i), {"../etc"});
}

TEST(MysqlCharsetName, MapsJavaNamesAndKeepsMysqlNames) {
  std::string name;
  const std::pair<const char*, const char*> cases[] = {
      {"UTF-8", "utf8mb4"}, {"utf-8", "utf8mb4"}, {"utf8mb4", "utf8mb4"}, {"utf8", "utf8"},
      {"ISO-8859-1", "latin1"}, {"latin1", "latin1"}, {"GBK", "gbk"}, {"Shift_JIS", "sjis"},
  };
  for (const auto& [from, to] : cases) {
    ASSERT_TRUE(MysqlCharsetName(from, &name).ok()) << from;
    EXPECT_EQ(name, to) << from;
  }
  EXPECT_FALSE(MysqlCharsetName("", &name).ok());
  EXPECT_FALSE(MysqlCharsetName("UTF-16", &name).ok());
}

TEST_F(ConfigTest, ConnectionLimitsHaveSaneDefaultsAndRefuseBadValues) {
  CanalConfig c;
  ASSERT_TRUE(LoadCanal("", &c).ok());
  EXPECT_EQ(c.session.pre_auth_max_frame_bytes, 64u << 10);
  EXPECT_EQ(c.session.login_timeout_ms, 10'000);
  EXPECT_EQ(c.session.max_connections, 1024u);
  EXPECT_EQ(c.session.max_connections_per_address, 64u);

  ASSERT_TRUE(LoadCanal("canal.connections.preauth.max.frame.bytes = 4096\n"
                        "canal.connections.login.timeout = 2500\n"
                        "canal.connections.max = 0\n"
                        "canal.connections.max.per.address = 8\n",
                        &c)
                  .ok());
  EXPECT_EQ(c.session.pre_auth_max_frame_bytes, 4096u);
  EXPECT_EQ(c.session.login_timeout_ms, 2500);
  EXPECT_EQ(c.session.max_connections, 0u);  // no limit
  EXPECT_EQ(c.session.max_connections_per_address, 8u);

  CanalConfig bad;
  ExpectRefused(LoadCanal("canal.connections.login.timeout = 0\n", &bad), {"canal.connections.login.timeout", "'0'"});
  ExpectRefused(LoadCanal("canal.connections.max = -1\n", &bad), {"canal.connections.max", "'-1'"});
  ExpectRefused(LoadCanal("canal.connections.max.per.address = many\n", &bad),
                {"canal.connections.max.per.address", "'many'"});
  // Past the frame limit after login (64 MiB): a pre-login frame cannot be bigger.
  ExpectRefused(LoadCanal("canal.connections.preauth.max.frame.bytes = 100000000\n", &bad),
                {"canal.connections.preauth.max.frame.bytes", "'100000000'"});
}

TEST_F(ConfigTest, DefaultSlaveIdsDifferPerServerAndStayTheSameForOne) {
  // Two servers with a destination of the same name on one primary (ERROR
  // 4052 when they share an id): their ids differ by the server's address.
  const auto id = [&](const std::string& canal_text, const std::string& instance_text = kMinimalInstance) {
    InstanceConfig i;
    Status s = LoadInstance(canal_text, instance_text, &i);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return i.parser.slave_id;
  };
  const uint32_t a = id("canal.ip = 127.0.0.1\ncanal.port = 11111\n");
  EXPECT_EQ(id("canal.ip = 127.0.0.1\ncanal.port = 11111\n"), a);  // stable across restarts
  EXPECT_NE(id("canal.ip = 127.0.0.1\ncanal.port = 11112\n"), a);  // another server on this host
  EXPECT_NE(id("canal.ip = 127.0.0.2\ncanal.port = 11111\n"), a);  // another host
  EXPECT_NE(id("canal.ip = 127.0.0.1\ncanal.register.ip = 10.0.0.7\ncanal.port = 11111\n"), a);
  EXPECT_NE(id("canal.ip = 127.0.0.1\ncanal.port = 11111\n",
               "canal.instance.master.address=127.0.0.1:3307\ncanal.instance.dbUsername=canal\n"),
            a);  // another primary
  EXPECT_GE(a, 100000u);
  // Given: taken as it is.
  EXPECT_EQ(id("canal.ip = 127.0.0.1\n", std::string(kMinimalInstance) + "canal.instance.mysql.slaveId = 77\n"), 77u);
}

}  // namespace
}  // namespace canal::server

namespace canal::server {
namespace {

TEST_F(ConfigTest, ClusterPlacementKeysDefaultToCanalsRaceAndRefuseBadValues) {
  CanalConfig c;
  ASSERT_TRUE(LoadCanal("canal.zkServers = zk1:2181\n", &c).ok());
  EXPECT_FALSE(c.cluster_balanced);  // without the keys: today's pair
  EXPECT_EQ(c.cluster_max_destinations, 0);
  EXPECT_EQ(c.cluster_lost_delay_ms, 0);

  ASSERT_TRUE(LoadCanal("canal.zkServers = zk1:2181\ncanal.cluster.placement = Balanced\n"
                        "canal.cluster.max.destinations = 12\ncanal.cluster.lost.delay = 30000\n",
                        &c)
                  .ok());
  EXPECT_TRUE(c.cluster_balanced);
  EXPECT_EQ(c.cluster_max_destinations, 12);
  EXPECT_EQ(c.cluster_lost_delay_ms, 30000);
  ASSERT_TRUE(LoadCanal("canal.zkServers = zk1:2181\ncanal.cluster.placement = race\n", &c).ok());
  EXPECT_FALSE(c.cluster_balanced);

  CanalConfig bad;
  ExpectRefused(LoadCanal("canal.cluster.placement = balanced\n", &bad),
                {"canal.cluster.placement", "canal.zkServers is empty"});
  ExpectRefused(LoadCanal("canal.zkServers = zk1:2181\ncanal.cluster.placement = leader\n", &bad),
                {"canal.cluster.placement", "'leader'", "race", "balanced"});
  ExpectRefused(LoadCanal("canal.zkServers = zk1:2181\ncanal.cluster.max.destinations = -1\n", &bad),
                {"canal.cluster.max.destinations", "'-1'"});
  ExpectRefused(LoadCanal("canal.zkServers = zk1:2181\ncanal.cluster.lost.delay = soon\n", &bad),
                {"canal.cluster.lost.delay", "'soon'"});
}

TEST_F(ConfigTest, ClusterHintsOfADestinationAreReadAndBadOnesRefused) {
  InstanceConfig i;
  ASSERT_TRUE(LoadInstance("", kMinimalInstance, &i).ok());
  EXPECT_EQ(i.cluster_weight, 1.0);
  EXPECT_TRUE(i.cluster_preferred.empty());
  EXPECT_TRUE(i.cluster_excluded.empty());
  ASSERT_TRUE(LoadInstance("", std::string(kMinimalInstance) +
                                   "canal.instance.cluster.weight = 2.5\n"
                                   "canal.instance.cluster.preferred = 10.0.0.5:11111, 10.0.0.6:11111\n"
                                   "canal.instance.cluster.excluded = 10.0.0.7:11111\n",
                           &i)
                  .ok());
  EXPECT_EQ(i.cluster_weight, 2.5);
  EXPECT_EQ(i.cluster_preferred, (std::vector<std::string>{"10.0.0.5:11111", "10.0.0.6:11111"}));
  EXPECT_EQ(i.cluster_excluded, (std::vector<std::string>{"10.0.0.7:11111"}));
  for (const char* bad : {"0", "-1", "heavy", "1e9", "nan"}) {
    ExpectRefused(LoadInstance("", std::string(kMinimalInstance) + "canal.instance.cluster.weight = " + bad + "\n", &i),
                  {"canal.instance.cluster.weight", bad});
  }
  ExpectRefused(LoadInstance("", std::string(kMinimalInstance) + "canal.instance.cluster.excluded = nowhere\n", &i),
                {"canal.instance.cluster.excluded", "nowhere", "ip:port"});
}

}  // namespace
}  // namespace canal::server
