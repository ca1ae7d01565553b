// Canal's table filter syntax: include and black lists of comma-separated,
// whole-name, case-insensitive regular expressions over schema.table.
#include <chrono>
#include <memory>

#include <gtest/gtest.h>

#include "canal/sink/table_filter.h"

namespace canal::sink {
namespace {

std::unique_ptr<TableFilter> Make(std::string_view include, std::string_view exclude = "") {
  std::unique_ptr<TableFilter> f;
  Status s = TableFilter::Create(include, exclude, &f);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return f;
}

struct Case {
  const char* include;
  const char* exclude;
  const char* schema;
  const char* table;
  bool accepted;
};

// Canal's documented examples, written as the regex engine sees them (the
// properties file's `\\.` is `\.` after loading).
const Case kCases[] = {
    {"", "", "any", "thing", true},
    {".*\\..*", "", "canal", "test1", true},
    {".*\\..*", "", "mysql", "user", true},
    {"canal\\..*", "", "canal", "test1", true},
    {"canal\\..*", "", "CANAL", "Test1", true},  // case-insensitive
    {"canal\\..*", "", "canalx", "t", false},
    {"canal\\..*", "", "other", "canal", false},
    {"canal.test1,canal.test2", "", "canal", "test1", true},
    {"canal.test1,canal.test2", "", "canal", "test2", true},
    {"canal.test1,canal.test2", "", "canal", "test3", false},
    {"canal.test1,canal.test2", "", "canal", "test10", false},  // whole-name match
    {"canal.test1, canal.test2 ", "", "canal", "test2", true},  // blanks around items
    {"mysql\\.slave_.*", "", "mysql", "slave_master_info", true},
    {"mysql\\.slave_.*", "", "mysql", "user", false},
    {".*\\..*", "mysql\\.slave_.*", "mysql", "slave_relay_log_info", false},
    {".*\\..*", "mysql\\.slave_.*", "mysql", "user", true},
    {"", "mysql\\..*", "mysql", "user", false},
    {"", "mysql\\..*", "shop", "orders", true},
    {"shop\\.order_\\d+", "", "shop", "order_2024", true},
    {"shop\\.order_\\d+", "", "shop", "order_x", false},
};

TEST(TableFilter, MatchesCanalsExamples) {
  for (const auto& c : kCases) {
    auto f = Make(c.include, c.exclude);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->Accepts(c.schema, c.table), c.accepted)
        << "include '" << c.include << "' exclude '" << c.exclude << "' on " << c.schema << "." << c.table;
  }
}

TEST(TableFilter, BadPatternIsAStartupErrorQuotingIt) {
  std::unique_ptr<TableFilter> f;
  Status s = TableFilter::Create("canal\\..*,shop.(orders", "", &f);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("canal.instance.filter.regex: pattern 'shop.(orders'"), std::string::npos)
      << s.ToString();
  s = TableFilter::Create("", "(a)\\1", &f);  // backreference: not in RE2
  EXPECT_NE(s.ToString().find("canal.instance.filter.black.regex: pattern '(a)\\1'"), std::string::npos)
      << s.ToString();
}

TEST(TableFilter, CatastrophicBacktrackingPatternStaysLinear) {
  auto f = Make("(a+)+$\\.(x|xx)+y", "");
  const std::string schema(20000, 'a');
  const std::string table(20000, 'x');
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(f->Accepts(schema, table));
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  // A backtracking engine takes longer than the universe; RE2 takes milliseconds.
  EXPECT_LT(ms, 5000);
}

TEST(TableFilter, SplitPatternsTrimsAndDropsEmptyItems) {
  EXPECT_EQ(SplitPatterns(" a , ,b,, c "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(SplitPatterns("").empty());
  EXPECT_TRUE(SplitPatterns(" , ").empty());
}

TEST(FieldFilter, ListsColumnsPerTable) {
  std::unique_ptr<FieldFilter> f;
  ASSERT_TRUE(FieldFilter::Create("shop.orders:id/Amount, shop\\.log_.*:msg", "canal.instance.filter.field", &f).ok());
  EXPECT_TRUE(f->Lists("shop", "orders", "id"));
  EXPECT_TRUE(f->Lists("shop", "orders", "amount"));
  EXPECT_FALSE(f->Lists("shop", "orders", "note"));
  EXPECT_TRUE(f->Lists("SHOP", "log_2024", "MSG"));
  EXPECT_EQ(f->ColumnsFor("shop", "users"), nullptr);
}

TEST(FieldFilter, MalformedSpecsAreErrorsNamingTheKey) {
  std::unique_ptr<FieldFilter> f;
  for (const char* bad : {"shop.orders", ":id", "shop.orders:", "shop.orders: / ", "sh(op:id"}) {
    Status s = FieldFilter::Create(bad, "canal.instance.filter.field", &f);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.ToString().find("canal.instance.filter.field"), std::string::npos) << s.ToString();
  }
}

}  // namespace
}  // namespace canal::sink
