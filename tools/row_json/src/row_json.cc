#include "canal/tools/row_json.h"

#include <charconv>

namespace canal::tools {

namespace {

void AppendInteger(int64_t v, std::string* out) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, static_cast<size_t>(r.ptr - buf));
}

}  // namespace

void AppendLineHead(std::string_view file, int64_t pos, std::string_view gtid, int64_t ts_seconds,
                    std::string* out) {
  out->append("{\"file\":");
  AppendJsonString(file, out);
  out->append(",\"pos\":");
  AppendInteger(pos, out);
  out->append(",\"gtid\":");
  AppendJsonString(gtid, out);
  out->append(",\"ts\":");
  AppendInteger(ts_seconds, out);
}

void AppendRowTarget(std::string_view db, std::string_view table, std::string_view type, std::string* out) {
  out->append(",\"db\":");
  AppendJsonString(db, out);
  out->append(",\"table\":");
  AppendJsonString(table, out);
  out->append(",\"type\":\"");
  out->append(type);
  out->push_back('"');
}

void AppendStatement(std::string_view db, bool ddl, std::string_view sql, std::string* out) {
  out->append(",\"db\":");
  AppendJsonString(db, out);
  out->append(ddl ? ",\"type\":\"DDL\",\"sql\":" : ",\"type\":\"QUERY\",\"sql\":");
  AppendJsonString(sql, out);
}

}  // namespace canal::tools
