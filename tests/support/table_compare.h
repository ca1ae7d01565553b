// CompareTables: whether tables on two MariaDB servers hold the same rows,
// byte for byte: the end of the mirror oracle (table_mirror.h), where a
// consumer's rebuilt tables meet the source's.
//
//   std::string report;
//   Status s = CompareTables(*source, *mirror, "shop", {"orders", "items"}, &report);
//   EXPECT_TRUE(s.ok()) << s.ToString() << "\n" << report;
//
// Per table, on both servers (root over the socket, time zone +00:00, results
// in the stored bytes: character_set_results NULL):
//   - the column lists from information_schema.COLUMNS (name, COLUMN_TYPE,
//     collation, in order), so a missed or extra DDL shows;
//   - SELECT <the columns both have> ORDER BY <primary key, else every column>,
//     text protocol (FLOAT as CAST(... AS DOUBLE): its own text has 6 digits),
//     compared as raw bytes with NULL apart from "": rows are
//     paired by primary key (the source's); a table without one is compared as
//     a sorted multiset of whole rows.
// The report has each table's row counts and up to `max_differences` of its
// differences (a missing row, an extra row, a column whose values differ,
// with both values: quoted when printable ASCII, else hex).
// Library canal_test_mirror.
#pragma once

#include <string>
#include <vector>

#include "canal/common/status.h"
#include "support/mariadb_sandbox.h"

namespace canal::testing {

// OK when every table is equal on both; Corruption naming the tables that
// differ otherwise (the details in *report, which is written either way);
// another error when a server cannot be read. `tables` empty: every base
// table of `schema` on either server.
Status CompareTables(const std::string& source_socket, const std::string& mirror_socket, const std::string& schema,
                     const std::vector<std::string>& tables, std::string* report, size_t max_differences = 10);
Status CompareTables(const MariadbSandbox& source, const MariadbSandbox& mirror, const std::string& schema,
                     const std::vector<std::string>& tables, std::string* report, size_t max_differences = 10);

}  // namespace canal::testing
