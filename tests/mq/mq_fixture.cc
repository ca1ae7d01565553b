#include "mq/mq_fixture.h"

#include <map>
#include <set>

namespace canal::mq::testing {

::testing::AssertionResult StartServer(const canal::testing::CanalInstall& install) {
  std::string out;
  const int rc = install.Startup(&out);
  if (rc == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "startup.sh exit " << rc << ":\n"
                                       << out << "\n" << canal::testing::ReadAll(install.server_log());
}

std::string ServerLogs(const canal::testing::CanalInstall& install) {
  return canal::testing::ReadAll(install.server_log()) + canal::testing::ReadAll(install.instance_log("example"));
}

size_t ExpectedRowChanges() {
  size_t n = 0;
  for (const auto& [k, v] : ExpectedChanges()) n += v.size();
  return n + 1;  // the DDL
}

void CheckWorkload(const std::vector<Change>& changes, bool flat,
                   const std::function<int32_t(const Change&)>& partition_of) {
  std::map<std::string, std::vector<std::string>> got;
  std::map<std::string, std::set<int32_t>> partitions_of;
  int ddls = 0;
  for (const Change& c : changes) {
    if (c.ddl) {
      ++ddls;
      EXPECT_EQ(c.type, "ALTER");
      EXPECT_EQ(c.partition, 0);
      EXPECT_NE(c.sql.find("ADD COLUMN note"), std::string::npos) << c.sql;
      continue;
    }
    const std::string key = c.table + "/" + c.key;
    got[key].push_back(c.type);
    partitions_of[key].insert(c.partition);
    EXPECT_EQ(c.partition, partition_of(c)) << key;
  }
  EXPECT_EQ(ddls, 1);
  EXPECT_EQ(got, ExpectedChanges());
  for (const auto& [key, ps] : partitions_of) EXPECT_EQ(ps.size(), 1u) << key;
  if (!flat) return;
  // Values and old images as Canal's FlatMessage has them.
  int updates_of_1 = 0;
  for (const Change& c : changes) {
    if (c.table != "users" || c.key != "1" || c.type != "UPDATE") continue;
    if (++updates_of_1 == 1) {
      EXPECT_EQ(c.data["score"], "11.00");
      EXPECT_EQ(c.old, nlohmann::json({{"score", "1.00"}}));  // only the changed column
    } else {
      EXPECT_TRUE(c.data["name"].is_null());
      EXPECT_EQ(c.old, nlohmann::json({{"name", "u1"}}));
    }
  }
  EXPECT_EQ(updates_of_1, 2);
}

}  // namespace canal::mq::testing
