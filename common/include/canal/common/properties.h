// Properties: Canal's configuration files (canal.properties,
// instance.properties), read the way Java's java.util.Properties reads them,
// plus the two things Canal adds on top: environment overrides and `${name}`
// substitution.
//
// File format (Java's):
//   - `key=value`, `key: value` and `key value` (the first unescaped `=`, `:`
//     or blank ends the key; blanks around the separator are dropped);
//   - lines whose first non-blank character is `#` or `!` are comments;
//   - a line ending in an odd number of backslashes continues on the next
//     line, whose leading blanks are dropped;
//   - escapes in keys and values: `\t \n \r \f`, `\uXXXX` (written out as
//     UTF-8; a surrogate pair makes one character), and `\x` for any other x
//     is x itself — so `\\.` in a file is the regex `\.`, as in Canal;
//   - a later line for the same key replaces the earlier one;
//   - values lose trailing blanks (Canal trims every value it reads).
// A malformed `\u` escape is InvalidArgument naming the file and line.
//
// Looking a key up (PropertyResolver), first match wins:
//   1. the environment variable named exactly like the key
//      (`canal.instance.master.address`), as Canal's own lookup does;
//   2. the environment variable named like the key upper-cased with every
//      character that is not a letter or digit turned into `_`
//      (`CANAL_INSTANCE_MASTER_ADDRESS`), which shells and container
//      runtimes can set;
//   3. each layer of files in order (instance.properties, then the
//      canal.instance.* defaults in canal.properties).
// An empty environment variable counts as set (to "").
//
// Substitution: `${name}` in a value is replaced by the value of `name`,
// looked up the same way (so env overrides apply), else by the environment
// variable `name`; `${name:default}` uses `default` when neither has it.
// Substituted values are substituted in turn; a loop (a -> b -> a) or a name
// found nowhere is InvalidArgument naming the key, where it was set and the
// name. `$$` is a literal `$`.
//
// Properties is a plain value; PropertyResolver only reads its layers, which
// must outlive it. Both are thread-compatible.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "canal/common/status.h"

namespace canal {

class Properties {
 public:
  Properties() = default;
  explicit Properties(std::string origin) : origin_(std::move(origin)) {}

  // Parses `text`; `origin` (a file path) names it in errors and lookups.
  static Status Parse(std::string_view text, std::string origin, Properties* out);
  // Reads and parses a file. NotFound when it does not exist; IOError when
  // it cannot be read.
  static Status LoadFile(const std::string& path, Properties* out);

  // The raw value (escapes decoded, no substitution), or nullptr.
  const std::string* Find(std::string_view key) const;
  // Line of the key's last definition (1-based); 0 when set by Set().
  int LineOf(std::string_view key) const;
  void Set(std::string key, std::string value, int line = 0);
  bool empty() const { return values_.empty(); }
  // Keys in the order they first appeared.
  const std::vector<std::string>& keys() const { return order_; }
  const std::string& origin() const { return origin_; }

 private:
  struct Value {
    std::string text;
    int line = 0;
  };
  std::string origin_;
  std::map<std::string, Value, std::less<>> values_;
  std::vector<std::string> order_;
};

// Reads an environment variable; nullopt when unset. Injectable for tests.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
// getenv().
EnvLookup ProcessEnvironment();

// `canal.instance.master.address` -> `CANAL_INSTANCE_MASTER_ADDRESS`.
std::string EnvOverrideName(std::string_view key);

// Where an effective value came from, for messages: "conf/canal.properties:12"
// or "environment variable CANAL_PORT".
struct PropertySource {
  std::string where;   // as above
  std::string origin;  // the file (or the variable name) alone
  bool from_environment = false;
};

class PropertyResolver {
 public:
  // `layers`: first wins. Null layers are skipped.
  explicit PropertyResolver(std::vector<const Properties*> layers, EnvLookup env = ProcessEnvironment());

  // The effective, substituted value. *value = nullopt (OK) when the key is
  // set nowhere. `source` (optional) says where it was set.
  Status Get(std::string_view key, std::optional<std::string>* value, PropertySource* source = nullptr) const;

  // Whether the key has a value anywhere (before substitution).
  bool Has(std::string_view key) const;

 private:
  // The raw (unsubstituted) value of `key` and where it came from.
  bool FindRaw(std::string_view key, std::string* raw, PropertySource* source) const;
  Status Substitute(std::string_view key, const std::string& raw, const PropertySource& source,
                    std::vector<std::string>* chain, std::string* out) const;

  std::vector<const Properties*> layers_;
  EnvLookup env_;
};

}  // namespace canal
