// On the ZooKeeper pair: gh-ost's cut-over (a shadow table from
// outside the filter renamed into it) while the active server streams with
// MINIMAL row metadata, then the active server is killed and the standby,
// with no file of its own (the schema history and the cursor are in
// ZooKeeper), takes over and goes on naming `t`'s columns as they were when
// each row was written: compared with the database's own columns and values,
// read right after each write. Part of the Ha suite (ha_fixture.h).
#include "integration/ha_fixture.h"

#include <map>

#include "support/client_rows.h"
#include "support/test_ports.h"

using canal::testing::TestPort;

namespace canal::testing::ha {
namespace {

constexpr uint16_t kOscPorts[2] = {TestPort("ha_servers_late", 4), TestPort("ha_servers_late", 5)};

// "name=value,..." of every column of a row, in column order (NULL as the mariadb client prints it).
std::string RowText(const canal::entry::RowData& row) {
  std::string s;
  for (const canal::entry::Column& c : row.aftercolumns()) {
    if (!s.empty()) s += ',';
    s += c.name() + "=" + (c.isnull() ? std::string("NULL") : c.value());  // as the client prints NULL
  }
  return s;
}

// (Not named "OnlineSchemaChange": that group runs apart from the Ha suite.)
TEST_F(Ha, AShadowTableCutOverThenAStandbyTakeoverKeepsEveryRowsColumns) {
  // This test's rows are logged with MINIMAL metadata: names come from the schema history only.
  ASSERT_TRUE(Sql("SET GLOBAL binlog_row_metadata = MINIMAL"));
  MariadbSandbox* const db = sandbox_.get();
  const std::shared_ptr<void> restore(nullptr, [db](void*) { (void)db->Sql("SET GLOBAL binlog_row_metadata = FULL"); });
  ASSERT_TRUE(Sql("DROP DATABASE IF EXISTS ha_osc; CREATE DATABASE ha_osc; "
                  "CREATE TABLE ha_osc.t (id INT PRIMARY KEY, a INT, z VARCHAR(5))"));
  ASSERT_TRUE(StartPair("osc", kOscPorts, "ha_osc.t"));

  std::mutex mu;
  std::map<int, std::string> got;     // by id, the first delivery
  std::map<int, std::string> server;  // by id, the server it came from
  int duplicates_differing = 0;
  ClusterConnector c(ConsumerOptions(zk_sandbox_->servers()));
  std::jthread consumer([&](std::stop_token stop) {
    bool connected = false;
    while (!stop.stop_requested()) {
      if (!connected) {
        Status s = c.Connect();
        if (s.ok()) s = c.Subscribe();
        connected = s.ok();
        if (!connected) std::this_thread::sleep_for(100ms);
        continue;
      }
      Message m;
      Status s = c.GetWithoutAck(256, 100, TimeUnit::kMilliseconds, &m);
      if (s.ok()) {
        s = ForEachRow(m, [&](const canal::entry::Header& h, canal::entry::EventType, const canal::entry::RowData& row) {
          if (h.tablename() != "t") return;
          const int id = std::stoi(ColumnText(row, "id"));
          std::lock_guard<std::mutex> lock(mu);
          const std::string text = RowText(row);
          auto [it, fresh] = got.emplace(id, text);
          if (fresh) server[id] = c.current_address();
          if (!fresh && it->second != text) ++duplicates_differing;
        });
        if (s.ok() && m.batch_id() != -1) s = c.Ack(m.batch_id());
      }
      if (!s.ok()) connected = false;
    }
  });
  auto received = [&](int id) {
    std::lock_guard<std::mutex> lock(mu);
    return got.count(id) != 0;
  };

  // The database's own names and values of row `id` of t, as they are now.
  std::map<int, std::string> expected;
  auto write = [&](int id, const std::string& sql) {
    ASSERT_TRUE(Sql(sql));
    std::string names, values;
    ASSERT_TRUE(sandbox_->Sql("SELECT GROUP_CONCAT(COLUMN_NAME ORDER BY ORDINAL_POSITION) FROM "
                              "information_schema.COLUMNS WHERE TABLE_SCHEMA = 'ha_osc' AND TABLE_NAME = 't'",
                              &names));
    ASSERT_TRUE(sandbox_->Sql("SELECT * FROM ha_osc.t WHERE id = " + std::to_string(id), &values));
    std::vector<std::string> n, v;
    for (std::stringstream ns(names.substr(0, names.find('\n'))); ns.good();) {
      std::string x;
      std::getline(ns, x, ',');
      n.push_back(x);
    }
    for (std::stringstream vs(values.substr(0, values.find('\n'))); vs.good();) {
      std::string x;
      std::getline(vs, x, '\t');
      v.push_back(x);
    }
    ASSERT_EQ(n.size(), v.size()) << names << " / " << values;
    std::string row;
    for (size_t i = 0; i < n.size(); ++i) row += (i ? "," : "") + n[i] + "=" + v[i];
    expected[id] = row;
  };

  write(1, "INSERT INTO ha_osc.t VALUES (1, 10, 'a')");
  write(2, "INSERT INTO ha_osc.t VALUES (2, 20, NULL)");
  // gh-ost: the shadow beside t (outside the filter), altered, filled, swapped in.
  ASSERT_TRUE(Sql("CREATE TABLE ha_osc._t_gho LIKE ha_osc.t; "
                  "ALTER TABLE ha_osc._t_gho ADD COLUMN b INT AFTER id, DROP COLUMN z, ADD COLUMN z2 VARCHAR(5); "
                  "INSERT INTO ha_osc._t_gho (id, b, a, z2) SELECT id, NULL, a, z FROM ha_osc.t"));
  write(3, "INSERT INTO ha_osc.t VALUES (3, 30, 'c')");
  ASSERT_TRUE(Sql("INSERT INTO ha_osc._t_gho (id, b, a, z2) VALUES (3, NULL, 30, 'c'); "
                  "RENAME TABLE ha_osc.t TO ha_osc._t_del, ha_osc._t_gho TO ha_osc.t"));
  write(4, "INSERT INTO ha_osc.t VALUES (4, 44, 40, 'd')");
  ASSERT_TRUE(Sql("DROP TABLE ha_osc._t_del"));
  ASSERT_TRUE(WaitFor([&] { return received(4); }, 30s)) << ReadAll(install(0).server_log());

  // The active server dies after the cut-over; the standby reads on.
  const std::string standby = Address(kOscPorts[1]);
  ASSERT_TRUE(install(0).Kill9());
  ASSERT_TRUE(WaitFor([&] { return RunningAddress() == standby; }, 20s)) << ReadAll(install(1).server_log());
  write(5, "INSERT INTO ha_osc.t VALUES (5, 55, 50, 'e')");
  ASSERT_TRUE(Sql("ALTER TABLE ha_osc.t ADD COLUMN w INT DEFAULT 7 FIRST"));
  write(6, "INSERT INTO ha_osc.t (id, b, a, z2) VALUES (6, 66, 60, 'f')");
  EXPECT_TRUE(WaitFor([&] { return received(6); }, 60s)) << ReadAll(install(1).server_log());
  consumer.request_stop();
  consumer.join();

  std::lock_guard<std::mutex> lock(mu);
  for (const auto& [id, row] : expected) {
    ASSERT_TRUE(got.count(id)) << "row " << id << " never arrived";
    EXPECT_EQ(got[id], row) << "row " << id;
  }
  EXPECT_EQ(got.size(), expected.size());
  EXPECT_EQ(duplicates_differing, 0);
  // Rows 5 and 6 were named by the standby, from the history it read in ZooKeeper.
  EXPECT_EQ(server[5], standby);
  EXPECT_EQ(server[6], standby);
  std::printf("[ ha ] online schema change: gh-ost cut-over on MINIMAL metadata, active killed after it, the "
              "standby named all %zu rows of t as the database had them\n",
              got.size());
}

}  // namespace
}  // namespace canal::testing::ha
