// Recursive descent over the DDL statements that change columns (see ddl.h).
#include "canal/schema/ddl.h"

#include "canal/schema/statement.h"
#include "column_def.h"
#include "token_cursor.h"

namespace canal::schema {
namespace {

using Kind = DdlStatement::Kind;

class DdlParser {
 public:
  DdlParser(std::string_view sql, std::string_view default_db, const LexerOptions& options)
      : c_(sql, options), default_db_(default_db), mariadb_(options.mariadb) {}

  Status Parse(DdlStatement* out);

 private:
  Status Fail(std::string_view what) { return Status::NotSupported(std::string(what) + " " + Near(&c_)); }

  Status Table(TableRef* ref) {
    if (!c_.QualifiedName(&ref->db, &ref->name)) return Fail("expected a table name");
    if (ref->db.empty()) {
      if (default_db_.empty()) return Fail("table '" + ref->name + "' without a database and no default database");
      ref->db.assign(default_db_);
    }
    return Status::OK();
  }
  Status End() {
    if (c_.Peek().kind == TokenKind::kError) return Status::Corruption(c_.Peek().text);
    if (!c_.AtStatementEnd()) return Fail("unexpected words");
    return Status::OK();
  }
  // "(a, b(10) DESC, ...)": the column names of a key.
  Status KeyColumns(std::vector<std::string>* names);
  Status CharsetOption(std::string* charset, std::string* collation, bool* matched);
  Status TableOptions(DdlStatement* out);
  Status CreateTable(DdlStatement* out);
  Status CreateDefinition(DdlStatement* out);
  Status AlterTable(DdlStatement* out);
  Status AlterSpec(DdlStatement* out, bool* rest_consumed);
  Status Position(ColumnPosition* pos);
  Status Database(DdlStatement* out, Kind kind);
  void NoColumnChange(DdlStatement* out, std::string note) {
    out->kind = Kind::kNoColumnChange;
    out->note = std::move(note);
  }

  TokenCursor c_;
  std::string_view default_db_;
  bool mariadb_;
};

Status DdlParser::KeyColumns(std::vector<std::string>* names) {
  if (!c_.Punct('(')) return Fail("expected '(' before a key's columns");
  while (true) {
    std::string name;
    if (c_.Peek().IsPunct('(')) {
      if (!c_.SkipOne()) return Fail("unbalanced parenthesis");  // functional key part: no column
    } else if (!c_.Identifier(&name)) {
      return Fail("expected a key column");
    } else {
      names->push_back(std::move(name));
    }
    c_.SkipToCommaOrClose();
    if (c_.Punct(')')) return Status::OK();
    if (!c_.Punct(',')) return Fail("expected ',' or ')' in a key");
  }
}

// [DEFAULT] CHARACTER SET|CHARSET [=] x, [DEFAULT] COLLATE [=] y.
Status DdlParser::CharsetOption(std::string* charset, std::string* collation, bool* matched) {
  *matched = false;
  const bool has_default = c_.Peek().IsWord("DEFAULT") &&
                           (c_.Peek(1).IsWord("CHARSET") || c_.Peek(1).IsWord("CHARACTER") ||
                            c_.Peek(1).IsWord("COLLATE") || c_.Peek(1).IsWord("CHAR"));
  if (has_default) c_.Take();
  std::string* target = nullptr;
  if (c_.Word("CHARSET") || c_.Words("CHARACTER", "SET") || c_.Words("CHAR", "SET")) {
    target = charset;
  } else if (c_.Word("COLLATE")) {
    target = collation;
  } else {
    return has_default ? Fail("expected CHARACTER SET or COLLATE after DEFAULT") : Status::OK();
  }
  c_.Punct('=');
  if (!c_.Peek().IsIdentifier() && c_.Peek().kind != TokenKind::kString) return Fail("expected a name");
  *target = NormalizeCharset(c_.Take().text);
  *matched = true;
  return Status::OK();
}

// Table options until the statement, a partition clause or a SELECT begins.
Status DdlParser::TableOptions(DdlStatement* out) {
  while (true) {
    c_.Punct(',');
    const Token& t = c_.Peek();
    if (c_.AtEnd() || t.IsPunct(';') || t.IsWord("PARTITION") || t.IsWord("SELECT") || t.IsWord("AS") ||
        t.IsWord("IGNORE") || t.IsWord("REPLACE") || t.IsPunct('(')) {
      return Status::OK();
    }
    bool matched = false;
    CANAL_RETURN_IF_ERROR(CharsetOption(&out->charset, &out->collation, &matched));
    if (matched) continue;
    if (c_.Words("WITH", "SYSTEM")) {
      return Fail("WITH SYSTEM VERSIONING adds hidden columns; not supported");
    }
    if (c_.Words("START", "TRANSACTION")) continue;  // MySQL 8's atomic CREATE ... SELECT
    if (t.kind != TokenKind::kWord) return Fail("expected a table option");
    // name [=] value; a value is one token or a parenthesised list (UNION=(a,b)).
    c_.Take();
    if (c_.Peek().IsWord("STORAGE") && c_.Peek(1).kind == TokenKind::kWord) {  // TABLESPACE x STORAGE DISK
      c_.Take();
    }
    c_.Punct('=');
    if (c_.AtEnd()) return Fail("expected a table option's value");
    if (!c_.SkipOne()) return Fail("unbalanced parenthesis");
  }
}

Status DdlParser::CreateDefinition(DdlStatement* out) {
  const Token& t = c_.Peek();
  if (t.kind == TokenKind::kWord) {
    if (c_.Word("CONSTRAINT")) {
      if (!c_.Peek().IsWord("PRIMARY") && !c_.Peek().IsWord("UNIQUE") && !c_.Peek().IsWord("FOREIGN") &&
          !c_.Peek().IsWord("CHECK")) {
        c_.Take();  // the constraint's name
      }
    }
    if (c_.Words("PRIMARY", "KEY")) {
      while (!c_.Peek().IsPunct('(') && !c_.AtEnd()) c_.Take();  // [USING BTREE]
      CANAL_RETURN_IF_ERROR(KeyColumns(&out->primary_key));
      c_.SkipToCommaOrClose();
      return Status::OK();
    }
    for (std::string_view w : {"INDEX", "KEY", "UNIQUE", "FULLTEXT", "SPATIAL", "FOREIGN", "CHECK", "PERIOD"}) {
      if (c_.Peek().IsWord(w)) {
        c_.SkipToCommaOrClose();  // indexes and constraints keep the columns as they are
        return Status::OK();
      }
    }
  }
  Column col;
  bool pk = false;
  CANAL_RETURN_IF_ERROR(ParseColumnDefinition(&c_, mariadb_, &col, &pk));
  if (pk) {
    out->primary_key.push_back(col.name);
  }
  out->columns.push_back(std::move(col));
  return Status::OK();
}

Status DdlParser::CreateTable(DdlStatement* out) {
  out->if_not_exists = c_.IfNotExists();
  CANAL_RETURN_IF_ERROR(Table(&out->table));
  if (c_.Word("LIKE") || (c_.Peek().IsPunct('(') && c_.Peek(1).IsWord("LIKE") && c_.Punct('(') && c_.Word("LIKE"))) {
    out->kind = Kind::kCreateTableLike;
    CANAL_RETURN_IF_ERROR(Table(&out->like));
    c_.Punct(')');
    return End();
  }
  out->kind = Kind::kCreateTable;
  if (!c_.Punct('(')) {
    return Fail("CREATE TABLE without a column list (CREATE ... SELECT in statement format): its columns are "
                "unknown");
  }
  if (c_.Peek().IsWord("SELECT") || c_.Peek().IsWord("WITH")) {
    return Fail("CREATE TABLE ... (SELECT): its columns are unknown");
  }
  while (true) {
    CANAL_RETURN_IF_ERROR(CreateDefinition(out));
    if (c_.Punct(')')) break;
    if (!c_.Punct(',')) return Fail("expected ',' or ')' in the column list");
  }
  CANAL_RETURN_IF_ERROR(TableOptions(out));
  if (c_.Word("PARTITION")) {
    while (!c_.AtEnd() && !c_.Peek().IsWord("SELECT") && !c_.Peek().IsWord("AS")) c_.SkipOne();
  }
  (void)(c_.Word("IGNORE") || c_.Word("REPLACE"));
  if (c_.Word("AS") || c_.Peek().IsWord("SELECT") || c_.Peek().IsPunct('(')) {
    // Row-format binlogs log CREATE ... SELECT with every column spelled out and
    // no SELECT; a SELECT here may add columns we cannot see.
    return Fail("CREATE TABLE ... SELECT in statement format: the SELECT's columns are unknown");
  }
  for (const std::string& key : out->primary_key) {
    bool found = false;
    for (Column& col : out->columns) {
      if (EqualsIgnoreCase(col.name, key)) {
        col.is_key = true;
        col.nullable = false;
        found = true;
      }
    }
    if (!found) return Status::NotSupported("PRIMARY KEY names column '" + key + "' that the table does not have");
  }
  return End();
}

Status DdlParser::Position(ColumnPosition* pos) {
  if (c_.Word("FIRST")) {
    pos->kind = ColumnPosition::Kind::kFirst;
  } else if (c_.Word("AFTER")) {
    pos->kind = ColumnPosition::Kind::kAfter;
    if (!c_.Identifier(&pos->after)) return Fail("expected a column after AFTER");
  }
  return Status::OK();
}

Status DdlParser::AlterSpec(DdlStatement* out, bool* rest_consumed) {
  AlterOp op;
  auto skip_clause = [&] {
    c_.SkipToCommaOrClose();
    return Status::OK();
  };
  if (c_.Word("ADD")) {
    const bool column_word = c_.Word("COLUMN");
    if (!column_word) {
      if (c_.Word("CONSTRAINT") && !c_.Peek().IsWord("PRIMARY") && !c_.Peek().IsWord("UNIQUE") &&
          !c_.Peek().IsWord("FOREIGN") && !c_.Peek().IsWord("CHECK")) {
        c_.Take();  // the constraint's name
      }
      if (c_.Words("PRIMARY", "KEY")) {
        op.kind = AlterOp::Kind::kAddPrimaryKey;
        while (!c_.Peek().IsPunct('(') && !c_.AtEnd()) c_.Take();
        CANAL_RETURN_IF_ERROR(KeyColumns(&op.key_columns));
        out->ops.push_back(std::move(op));
        return skip_clause();
      }
      if (c_.Words("SYSTEM", "VERSIONING")) return Fail("ADD SYSTEM VERSIONING adds hidden columns; not supported");
      for (std::string_view w : {"INDEX", "KEY", "UNIQUE", "FULLTEXT", "SPATIAL", "FOREIGN", "CHECK", "PERIOD"}) {
        if (c_.Peek().IsWord(w)) return skip_clause();
      }
      if (c_.Peek().IsWord("PARTITION")) {
        c_.Take();
        c_.IfNotExists();
        return skip_clause();
      }
    }
    op.if_not_exists = c_.IfNotExists();
    if (c_.Punct('(')) {  // ADD (a INT, b INT)
      while (true) {
        AlterOp add;
        add.kind = AlterOp::Kind::kAddColumn;
        add.if_not_exists = op.if_not_exists;
        CANAL_RETURN_IF_ERROR(ParseColumnDefinition(&c_, mariadb_, &add.column, &add.inline_primary_key));
        out->ops.push_back(std::move(add));
        if (c_.Punct(')')) return Status::OK();
        if (!c_.Punct(',')) return Fail("expected ',' or ')' in ADD (...)");
      }
    }
    op.kind = AlterOp::Kind::kAddColumn;
    CANAL_RETURN_IF_ERROR(ParseColumnDefinition(&c_, mariadb_, &op.column, &op.inline_primary_key));
    CANAL_RETURN_IF_ERROR(Position(&op.position));
    out->ops.push_back(std::move(op));
    return Status::OK();
  }
  if (c_.Word("DROP")) {
    if (c_.Words("PRIMARY", "KEY")) {
      op.kind = AlterOp::Kind::kDropPrimaryKey;
      out->ops.push_back(std::move(op));
      return Status::OK();
    }
    if (c_.Words("SYSTEM", "VERSIONING")) return Fail("DROP SYSTEM VERSIONING drops hidden columns; not supported");
    if (c_.Word("PARTITION")) return skip_clause();
    if (!c_.Peek().IsWord("COLUMN")) {
      for (std::string_view w : {"INDEX", "KEY", "FOREIGN", "CONSTRAINT", "CHECK", "PERIOD"}) {
        if (c_.Peek().IsWord(w)) return skip_clause();
      }
    }
    c_.Word("COLUMN");
    op.kind = AlterOp::Kind::kDropColumn;
    op.if_exists = c_.IfExists();
    if (!c_.Identifier(&op.name)) return Fail("expected a column to drop");
    (void)(c_.Word("RESTRICT") || c_.Word("CASCADE"));
    out->ops.push_back(std::move(op));
    return Status::OK();
  }
  if (c_.Peek().IsWord("MODIFY") || c_.Peek().IsWord("CHANGE")) {
    const bool change = c_.Take().IsWord("CHANGE");
    c_.Word("COLUMN");
    op.kind = AlterOp::Kind::kChangeColumn;
    op.if_exists = c_.IfExists();
    if (change && !c_.Identifier(&op.name)) return Fail("expected the column to change");
    CANAL_RETURN_IF_ERROR(ParseColumnDefinition(&c_, mariadb_, &op.column, &op.inline_primary_key));
    if (!change) op.name = op.column.name;
    CANAL_RETURN_IF_ERROR(Position(&op.position));
    out->ops.push_back(std::move(op));
    return Status::OK();
  }
  if (c_.Word("RENAME")) {
    if (c_.Word("COLUMN")) {
      op.kind = AlterOp::Kind::kRenameColumn;
      op.if_exists = c_.IfExists();
      if (!c_.Identifier(&op.name) || !c_.Word("TO") || !c_.Identifier(&op.new_name)) {
        return Fail("expected RENAME COLUMN a TO b");
      }
      out->ops.push_back(std::move(op));
      return Status::OK();
    }
    if (c_.Word("INDEX") || c_.Word("KEY")) return skip_clause();
    (void)(c_.Word("TO") || c_.Word("AS"));
    return Table(&out->rename_to);
  }
  if (c_.Word("ALTER")) {
    if (c_.Peek().IsWord("INDEX") || c_.Peek().IsWord("CHECK") || c_.Peek().IsWord("CONSTRAINT")) {
      return skip_clause();
    }
    c_.Word("COLUMN");
    c_.IfExists();
    std::string name;
    if (!c_.Identifier(&name)) return Fail("expected a column after ALTER");
    // SET DEFAULT v, DROP DEFAULT, SET [IN]VISIBLE: the column list stays.
    if (!c_.Words("SET", "DEFAULT") && !c_.Words("DROP", "DEFAULT") && !c_.Words("SET", "VISIBLE") &&
        !c_.Words("SET", "INVISIBLE")) {
      return Fail("expected SET DEFAULT, DROP DEFAULT or SET [IN]VISIBLE");
    }
    return skip_clause();
  }
  if (c_.Word("CONVERT")) {
    if (!c_.Word("TO")) return Fail("expected CONVERT TO CHARACTER SET");
    op.kind = AlterOp::Kind::kConvertCharset;
    bool matched = false;
    CANAL_RETURN_IF_ERROR(CharsetOption(&op.charset, &op.collation, &matched));
    if (!matched || op.charset.empty()) return Fail("expected CONVERT TO CHARACTER SET name");
    CANAL_RETURN_IF_ERROR(CharsetOption(&op.charset, &op.collation, &matched));
    if (op.charset == "default") return Fail("CONVERT TO CHARACTER SET DEFAULT");
    out->ops.push_back(std::move(op));
    return Status::OK();
  }
  {
    bool matched = false;
    op.kind = AlterOp::Kind::kTableCharset;
    CANAL_RETURN_IF_ERROR(CharsetOption(&op.charset, &op.collation, &matched));
    if (matched) {
      CANAL_RETURN_IF_ERROR(CharsetOption(&op.charset, &op.collation, &matched));
      out->ops.push_back(std::move(op));
      return Status::OK();
    }
  }
  if (c_.Peek().IsWord("PARTITION") || c_.Peek().IsWord("REMOVE") || c_.Peek().IsWord("ORDER")) {
    // PARTITION BY ..., REMOVE PARTITIONING and ORDER BY a, b end the clause list.
    *rest_consumed = true;
    while (!c_.AtEnd() && !c_.Peek().IsPunct(';')) c_.SkipOne();
    return Status::OK();
  }
  // Clauses that never touch columns.
  for (std::string_view w : {"ALGORITHM", "LOCK", "FORCE", "ENGINE", "ENABLE", "DISABLE", "DISCARD",
                             "IMPORT", "WITH", "WITHOUT", "ANALYZE", "CHECK", "OPTIMIZE", "REBUILD", "REPAIR",
                             "COALESCE", "REORGANIZE", "EXCHANGE", "TRUNCATE", "COMMENT", "AUTO_INCREMENT",
                             "ROW_FORMAT", "KEY_BLOCK_SIZE", "STATS_PERSISTENT", "STATS_AUTO_RECALC",
                             "STATS_SAMPLE_PAGES", "PAGE_COMPRESSED", "PAGE_COMPRESSION_LEVEL", "ENCRYPTED",
                             "ENCRYPTION_KEY_ID", "ENCRYPTION", "COMPRESSION", "CHECKSUM", "TABLE_CHECKSUM",
                             "DELAY_KEY_WRITE", "MAX_ROWS", "MIN_ROWS", "PACK_KEYS", "AVG_ROW_LENGTH",
                             "INSERT_METHOD", "TABLESPACE", "DATA", "INDEX", "CONNECTION", "PASSWORD",
                             "TRANSACTIONAL", "PAGE_CHECKSUM", "SEQUENCE", "UNION", "SECONDARY_ENGINE",
                             "ENGINE_ATTRIBUTE", "AUTOEXTEND_SIZE", "STATS_SAMPLE_PAGES"}) {
    if (c_.Peek().IsWord(w)) return skip_clause();
  }
  return Fail("unknown ALTER TABLE clause");
}

Status DdlParser::AlterTable(DdlStatement* out) {
  out->kind = Kind::kAlterTable;
  out->if_exists = c_.IfExists();
  CANAL_RETURN_IF_ERROR(Table(&out->table));
  if (c_.Word("WAIT")) c_.Take();
  c_.Word("NOWAIT");
  if (c_.AtStatementEnd()) return Status::OK();  // ALTER TABLE t: a rebuild
  bool rest_consumed = false;
  while (true) {
    CANAL_RETURN_IF_ERROR(AlterSpec(out, &rest_consumed));
    if (rest_consumed || !c_.Punct(',')) break;
  }
  return End();
}

Status DdlParser::Database(DdlStatement* out, Kind kind) {
  out->kind = kind;
  if (kind == Kind::kCreateDatabase) out->if_not_exists = c_.IfNotExists();
  if (kind == Kind::kDropDatabase) out->if_exists = c_.IfExists();
  const bool named = c_.Peek().IsIdentifier() && !c_.Peek().IsWord("DEFAULT") && !c_.Peek().IsWord("CHARACTER") &&
                     !c_.Peek().IsWord("CHARSET") && !c_.Peek().IsWord("COLLATE") && !c_.Peek().IsWord("COMMENT");
  if (named) {
    out->database = c_.Take().text;
  } else if (kind == Kind::kAlterDatabase && !default_db_.empty()) {
    out->database.assign(default_db_);
  } else {
    return Fail("expected a database name");
  }
  if (kind == Kind::kAlterDatabase && c_.Word("UPGRADE")) {
    NoColumnChange(out, "ALTER DATABASE ... UPGRADE DATA DIRECTORY NAME");
    return Status::OK();
  }
  while (!c_.AtStatementEnd()) {
    bool matched = false;
    CANAL_RETURN_IF_ERROR(CharsetOption(&out->charset, &out->collation, &matched));
    if (matched) continue;
    if (c_.Peek().kind != TokenKind::kWord) return Fail("expected a database option");
    c_.Take();  // COMMENT, ENCRYPTION, READ ONLY: no column changes
    c_.Punct('=');
    if (!c_.AtEnd()) c_.Take();
  }
  if (out->charset.empty() && !out->collation.empty()) out->charset = CharsetOfCollation(out->collation);
  return Status::OK();
}

Status DdlParser::Parse(DdlStatement* out) {
  *out = DdlStatement{};
  while (c_.Punct('(')) {
  }
  if (c_.Peek().kind == TokenKind::kError) return Status::Corruption(c_.Peek().text);
  if (c_.Word("CREATE")) {
    out->or_replace = c_.Words("OR", "REPLACE");
    if (c_.Word("TEMPORARY")) {
      NoColumnChange(out, "temporary table (its rows are not in row-format binlogs)");
      return Status::OK();
    }
    if (c_.Word("TABLE")) return CreateTable(out);
    if (c_.Word("DATABASE") || c_.Word("SCHEMA")) return Database(out, Kind::kCreateDatabase);
  } else if (c_.Word("ALTER")) {
    (void)(c_.Word("ONLINE") || c_.Word("OFFLINE"));
    c_.Word("IGNORE");
    if (c_.Word("TABLE")) return AlterTable(out);
    if (c_.Word("DATABASE") || c_.Word("SCHEMA")) return Database(out, Kind::kAlterDatabase);
  } else if (c_.Word("DROP")) {
    if (c_.Word("TEMPORARY")) {
      NoColumnChange(out, "temporary table");
      return Status::OK();
    }
    if (c_.Word("TABLE") || c_.Word("TABLES")) {
      out->kind = Kind::kDropTables;
      out->if_exists = c_.IfExists();
      do {
        TableRef t;
        CANAL_RETURN_IF_ERROR(Table(&t));
        out->tables.push_back(std::move(t));
      } while (c_.Punct(','));
      if (c_.Word("WAIT")) c_.Take();
      (void)(c_.Word("NOWAIT") || c_.Word("RESTRICT") || c_.Word("CASCADE"));
      return End();
    }
    if (c_.Word("DATABASE") || c_.Word("SCHEMA")) {
      CANAL_RETURN_IF_ERROR(Database(out, Kind::kDropDatabase));
      return Status::OK();
    }
  } else if (c_.Word("RENAME")) {
    if (c_.Word("TABLE") || c_.Word("TABLES")) {
      out->kind = Kind::kRenameTables;
      out->if_exists = c_.IfExists();
      do {
        TableRef from, to;
        CANAL_RETURN_IF_ERROR(Table(&from));
        if (c_.Word("WAIT")) c_.Take();
        c_.Word("NOWAIT");
        if (!c_.Word("TO")) return Fail("expected TO in RENAME TABLE");
        CANAL_RETURN_IF_ERROR(Table(&to));
        out->renames.emplace_back(std::move(from), std::move(to));
      } while (c_.Punct(','));
      return End();
    }
  } else if (c_.Word("TRUNCATE")) {
    c_.Word("TABLE");
    out->kind = Kind::kTruncate;
    TableRef t;
    CANAL_RETURN_IF_ERROR(Table(&t));
    out->tables.push_back(std::move(t));
    return Status::OK();  // WAIT n / NOWAIT and the like: nothing to change
  }
  // Everything else: decide by the classifier, on the statement's own text.
  return Status::OK();
}

}  // namespace

Status ParseDdl(std::string_view sql, std::string_view default_db, const LexerOptions& options, DdlStatement* out) {
  const StatementClass cls = ClassifyStatement(sql, options);
  if (cls.kind != StatementKind::kDdl) {
    *out = DdlStatement{};
    out->kind = Kind::kNotDdl;
    return Status::OK();
  }
  DdlParser parser(sql, default_db, options);
  CANAL_RETURN_IF_ERROR(parser.Parse(out));
  if (out->kind == Kind::kNotDdl) {
    // DDL the parser has no rule for: known not to change columns unless it
    // acts on a table (CREATE VIEW, INDEX, TRIGGER, PROCEDURE, EVENT, ...).
    if (cls.object == DdlObject::kTable) {
      return Status::NotSupported("unrecognised table statement (it may change columns)");
    }
    out->kind = Kind::kNoColumnChange;
    out->note = cls.object == DdlObject::kIndex ? "index" : "DDL on an object without columns";
  }
  return Status::OK();
}

}  // namespace canal::schema
