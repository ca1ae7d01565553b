#include "canal/schema/schema_history.h"

#include <algorithm>

#include "canal/schema/statement.h"
#include "column_def.h"

namespace canal::schema {
namespace {

std::string Name(std::string_view db, std::string_view table) {
  return "`" + std::string(db) + "`.`" + std::string(table) + "`";
}

void SetPrimaryKey(TableSchema* t, const std::vector<std::string>& names) {
  for (Column& c : t->columns) c.is_key = false;
  for (const std::string& n : names) {
    for (Column& c : t->columns) {
      if (EqualsIgnoreCase(c.name, n)) {
        c.is_key = true;
        c.nullable = false;
      }
    }
  }
}

}  // namespace

void SchemaHistory::PutTable(TableSchema table) {
  table.charset = NormalizeCharset(table.charset);
  Key key{table.db, table.name};
  unknown_.erase(key);
  tables_[std::move(key)] = std::move(table);
}

void SchemaHistory::PutDatabase(std::string_view db, std::string_view charset) {
  db_charsets_[std::string(db)] = NormalizeCharset(charset);
}

const TableSchema* SchemaHistory::Find(std::string_view db, std::string_view table) const {
  auto it = tables_.find(Key{std::string(db), std::string(table)});
  return it == tables_.end() ? nullptr : &it->second;
}

void SchemaHistory::MarkUnknown(std::string_view db, std::string_view table, std::string reason) {
  Key key{std::string(db), std::string(table)};
  tables_.erase(key);
  notes_.push_back(UnknownNote{std::string(db), std::string(table), reason});
  unknown_[std::move(key)] = std::move(reason);
}

std::string SchemaHistory::Unknown(std::string_view db, std::string_view table) const {
  auto it = unknown_.find(Key{std::string(db), std::string(table)});
  return it == unknown_.end() ? std::string() : it->second;
}

Status SchemaHistory::FailOn(std::string_view db, std::string_view table, Status s) {
  if (InScope(db, table)) return s;
  MarkUnknown(db, table, "a DDL contradicted its history: " + s.ToString());
  return Status::OK();
}

std::string SchemaHistory::DatabaseCharset(std::string_view db) const {
  auto it = db_charsets_.find(std::string(db));
  return it == db_charsets_.end() || it->second.empty() ? server_charset_ : it->second;
}

void SchemaHistory::ResolveColumn(const TableSchema& table, Column* col) const {
  if (IsCharacterType(col->type) && col->charset.empty()) col->charset = table.charset;
  if (col->collation == "binary" && col->charset != "binary") col->collation = col->charset + "_bin";
  if ((col->type == "text" || col->type == "blob") && col->length >= 0) {
    // TEXT(n)/BLOB(n): the smallest type holding n characters (bytes for BLOB).
    const bool text = col->type == "text";
    const int mb = text ? std::max(1, CharsetMaxLen(col->charset)) : 1;
    col->type = SizedLobType(text, col->length * mb);
    col->length = -1;
  }
}

Status SchemaHistory::ApplySql(std::string_view sql, std::string_view default_db, const LexerOptions& options,
                               DdlStatement* parsed) {
  DdlStatement local;
  DdlStatement* ddl = parsed != nullptr ? parsed : &local;
  *ddl = DdlStatement{};
  Status s = ParseDdl(sql, default_db, options, ddl);
  if (!s.ok()) {
    // Not understood (CREATE ... SELECT in statement format, WITH SYSTEM
    // VERSIONING's hidden columns, ...): the table it names is no longer
    // known, which stops nothing until rows of it need names.
    const StatementClass cls = ClassifyStatement(sql, options);
    if (cls.table.empty()) return s;
    MarkUnknown(cls.db.empty() ? default_db : std::string_view(cls.db), cls.table,
                "a DDL on it was not understood (" + s.ToString() + ")");
    return Status::OK();
  }
  return Apply(*ddl);
}

Status SchemaHistory::Apply(const DdlStatement& ddl) {
  using Kind = DdlStatement::Kind;
  // Why a table the history lacks is unknown, for the one derived from it.
  auto lacking = [this](const TableRef& r) {
    const std::string why = Unknown(r.db, r.name);
    return Name(r.db, r.name) + ", which the history does not hold" + (why.empty() ? "" : " (" + why + ")");
  };
  switch (ddl.kind) {
    case Kind::kNotDdl:
    case Kind::kNoColumnChange:
    case Kind::kTruncate:
      return Status::OK();
    case Kind::kCreateDatabase:
    case Kind::kAlterDatabase:
      if (!ddl.charset.empty()) PutDatabase(ddl.database, ddl.charset);
      else if (ddl.kind == Kind::kCreateDatabase) PutDatabase(ddl.database, "");
      return Status::OK();
    case Kind::kDropDatabase:
      db_charsets_.erase(ddl.database);
      for (auto it = tables_.begin(); it != tables_.end();) {
        it = it->first.first == ddl.database ? tables_.erase(it) : std::next(it);
      }
      for (auto it = unknown_.begin(); it != unknown_.end();) {
        it = it->first.first == ddl.database ? unknown_.erase(it) : std::next(it);
      }
      return Status::OK();
    case Kind::kCreateTable: {
      // IF NOT EXISTS on a table that exists, known or not, changes nothing.
      if (ddl.if_not_exists && (Find(ddl.table.db, ddl.table.name) != nullptr ||
                                !Unknown(ddl.table.db, ddl.table.name).empty())) {
        return Status::OK();
      }
      TableSchema t;
      t.db = ddl.table.db;
      t.name = ddl.table.name;
      t.charset = ddl.charset.empty() ? (ddl.collation.empty() ? DatabaseCharset(t.db) : CharsetOfCollation(ddl.collation))
                                      : ddl.charset;
      t.collation = ddl.collation;
      t.columns = ddl.columns;
      for (Column& c : t.columns) ResolveColumn(t, &c);
      PutTable(std::move(t));
      return Status::OK();
    }
    case Kind::kCreateTableLike: {
      // IF NOT EXISTS on a table that exists, known or not, changes nothing.
      if (ddl.if_not_exists && (Find(ddl.table.db, ddl.table.name) != nullptr ||
                                !Unknown(ddl.table.db, ddl.table.name).empty())) {
        return Status::OK();
      }
      const TableSchema* src = Find(ddl.like.db, ddl.like.name);
      if (src == nullptr) {
        MarkUnknown(ddl.table.db, ddl.table.name, "created LIKE " + lacking(ddl.like));
        return Status::OK();
      }
      TableSchema t = *src;
      t.db = ddl.table.db;
      t.name = ddl.table.name;
      PutTable(std::move(t));
      return Status::OK();
    }
    case Kind::kDropTables:
      for (const TableRef& r : ddl.tables) {
        tables_.erase(Key{r.db, r.name});
        unknown_.erase(Key{r.db, r.name});
      }
      return Status::OK();
    case Kind::kRenameTables:
      // Pairs apply in order (RENAME a TO tmp, b TO a, tmp TO b swaps).
      for (const auto& [from, to] : ddl.renames) {
        auto it = tables_.find(Key{from.db, from.name});
        if (it == tables_.end()) {
          const std::string why = "renamed from " + lacking(from);
          unknown_.erase(Key{from.db, from.name});
          MarkUnknown(to.db, to.name, why);
          continue;
        }
        TableSchema t = std::move(it->second);
        tables_.erase(it);
        t.db = to.db;
        t.name = to.name;
        PutTable(std::move(t));
      }
      return Status::OK();
    case Kind::kAlterTable: {
      const bool renames = !ddl.rename_to.name.empty();
      auto it = tables_.find(Key{ddl.table.db, ddl.table.name});
      if (it == tables_.end()) {
        if (renames) {
          const std::string why = "renamed from " + lacking(ddl.table);
          unknown_.erase(Key{ddl.table.db, ddl.table.name});
          MarkUnknown(ddl.rename_to.db, ddl.rename_to.name, why);
        } else if (Unknown(ddl.table.db, ddl.table.name).empty()) {
          MarkUnknown(ddl.table.db, ddl.table.name, "altered while the history did not hold it");
        }
        return Status::OK();
      }
      TableSchema t = it->second;  // applied to a copy: a failing clause changes nothing
      Status s = ApplyAlter(ddl, &t);
      if (!s.ok()) {
        CANAL_RETURN_IF_ERROR(FailOn(ddl.table.db, ddl.table.name, std::move(s)));
        if (renames) {
          unknown_.erase(Key{ddl.table.db, ddl.table.name});
          MarkUnknown(ddl.rename_to.db, ddl.rename_to.name, "renamed from " + lacking(ddl.table));
        }
        return Status::OK();
      }
      tables_.erase(it);
      if (renames) {
        t.db = ddl.rename_to.db;
        t.name = ddl.rename_to.name;
      }
      PutTable(std::move(t));
      return Status::OK();
    }
  }
  return Status::OK();
}

// MariaDB decides a column clause's IF EXISTS / IF NOT EXISTS against the
// table as it was before the statement, not after the clauses before it:
// `ADD c, DROP COLUMN IF EXISTS c` keeps c, `RENAME COLUMN a TO z, CHANGE
// COLUMN IF EXISTS z y INT` and `DROP a, ADD COLUMN IF NOT EXISTS a INT` do
// nothing more than their first clause (checked against a MariaDB 10.11).
static bool SkippedByIfExists(const AlterOp& op, const TableSchema& before) {
  using K = AlterOp::Kind;
  if (op.if_exists && (op.kind == K::kDropColumn || op.kind == K::kChangeColumn || op.kind == K::kRenameColumn)) {
    return before.IndexOf(op.name) < 0;
  }
  return op.if_not_exists && op.kind == K::kAddColumn && before.IndexOf(op.column.name) >= 0;
}

Status SchemaHistory::ApplyAlter(const DdlStatement& ddl, TableSchema* table) {
  std::vector<std::string> added;  // columns this statement added (upper case)
  const TableSchema before = *table;
  for (const AlterOp& op : ddl.ops) {
    if (SkippedByIfExists(op, before)) continue;
    CANAL_RETURN_IF_ERROR(ApplyAlterOp(op, table).WithContext("ALTER TABLE " + Name(table->db, table->name)));
    if (op.kind == AlterOp::Kind::kAddColumn) added.push_back(AsciiUpper(op.column.name));
    // The server rebuilds a column that this statement added and then
    // modified without a position at the end of the table, not where ADD put it.
    if (op.kind == AlterOp::Kind::kChangeColumn && op.position.kind == ColumnPosition::Kind::kLast &&
        std::find(added.begin(), added.end(), AsciiUpper(op.name)) != added.end()) {
      const int i = table->IndexOf(op.column.name);
      if (i >= 0) {
        Column col = std::move(table->columns[static_cast<size_t>(i)]);
        table->columns.erase(table->columns.begin() + i);
        table->columns.push_back(std::move(col));
      }
      added.push_back(AsciiUpper(op.column.name));
    }
  }
  return Status::OK();
}

Status SchemaHistory::ApplyAlterOp(const AlterOp& op, TableSchema* t) {
  using K = AlterOp::Kind;
  auto place = [&](Column col, const ColumnPosition& pos, size_t default_index) -> Status {
    size_t at = default_index;
    if (pos.kind == ColumnPosition::Kind::kFirst) {
      at = 0;
    } else if (pos.kind == ColumnPosition::Kind::kAfter) {
      const int i = t->IndexOf(pos.after);
      if (i < 0) return Status::InvalidArgument("AFTER names column '" + pos.after + "' that the history does not hold");
      at = static_cast<size_t>(i) + 1;
    }
    t->columns.insert(t->columns.begin() + static_cast<std::ptrdiff_t>(std::min(at, t->columns.size())),
                      std::move(col));
    return Status::OK();
  };
  switch (op.kind) {
    case K::kAddColumn: {
      if (t->IndexOf(op.column.name) >= 0) {
        if (op.if_not_exists) return Status::OK();
        return Status::InvalidArgument("ADD COLUMN '" + op.column.name + "': the history already holds it");
      }
      Column col = op.column;
      ResolveColumn(*t, &col);
      if (op.inline_primary_key) {
        for (Column& c : t->columns) c.is_key = false;
        col.is_key = true;
      }
      return place(std::move(col), op.position, t->columns.size());
    }
    case K::kDropColumn: {
      const int i = t->IndexOf(op.name);
      if (i < 0) {
        if (op.if_exists) return Status::OK();
        return Status::InvalidArgument("DROP COLUMN '" + op.name + "': the history does not hold it");
      }
      t->columns.erase(t->columns.begin() + i);
      return Status::OK();
    }
    case K::kChangeColumn: {
      const int i = t->IndexOf(op.name);
      if (i < 0) {
        if (op.if_exists) return Status::OK();
        return Status::InvalidArgument("CHANGE/MODIFY COLUMN '" + op.name + "': the history does not hold it");
      }
      Column col = op.column;
      ResolveColumn(*t, &col);
      col.is_key = t->columns[static_cast<size_t>(i)].is_key || op.inline_primary_key;
      if (col.is_key) col.nullable = false;
      t->columns.erase(t->columns.begin() + i);
      if (op.position.kind == ColumnPosition::Kind::kLast) {
        t->columns.insert(t->columns.begin() + i, std::move(col));
        return Status::OK();
      }
      return place(std::move(col), op.position, static_cast<size_t>(i));
    }
    case K::kRenameColumn: {
      const int i = t->IndexOf(op.name);
      if (i < 0) {
        if (op.if_exists) return Status::OK();
        return Status::InvalidArgument("RENAME COLUMN '" + op.name + "': the history does not hold it");
      }
      t->columns[static_cast<size_t>(i)].name = op.new_name;
      return Status::OK();
    }
    case K::kAddPrimaryKey:
      for (const std::string& n : op.key_columns) {
        if (t->IndexOf(n) < 0) return Status::InvalidArgument("PRIMARY KEY names unknown column '" + n + "'");
      }
      SetPrimaryKey(t, op.key_columns);
      return Status::OK();
    case K::kDropPrimaryKey:
      for (Column& c : t->columns) c.is_key = false;
      return Status::OK();
    case K::kConvertCharset: {
      const std::string cs = op.charset == "binary" ? "binary" : NormalizeCharset(op.charset);
      for (Column& c : t->columns) {
        if (!IsCharacterType(c.type)) continue;
        // TEXT columns grow so that they hold as many characters as before.
        if (c.type.ends_with("text")) {
          const int64_t old_bytes = c.type == "tinytext" ? 255 : c.type == "text" ? 65535
                                   : c.type == "mediumtext" ? 16777215 : -1;
          const int old_mb = std::max(1, CharsetMaxLen(c.charset));
          const int new_mb = std::max(1, CharsetMaxLen(cs));
          if (old_bytes > 0 && new_mb > old_mb) c.type = SizedLobType(true, old_bytes / old_mb * new_mb);
        }
        c.charset = cs;
        c.collation = op.collation;
      }
      t->charset = cs;
      t->collation = op.collation;
      return Status::OK();
    }
    case K::kTableCharset:
      if (!op.charset.empty()) t->charset = NormalizeCharset(op.charset);
      else if (!op.collation.empty()) t->charset = CharsetOfCollation(op.collation);
      t->collation = op.collation;
      return Status::OK();
  }
  return Status::OK();
}

}  // namespace canal::schema
