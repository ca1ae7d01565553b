#include "canal/common/properties.h"

#include "canal/common/utf8.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace canal {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\f'; }


// Four hex digits at text[i..i+4) -> *unit.
bool ReadHex4(std::string_view text, size_t i, uint32_t* unit) {
  if (i + 4 > text.size()) return false;
  uint32_t v = 0;
  for (size_t k = i; k < i + 4; ++k) {
    char c = text[k];
    v <<= 4;
    if (c >= '0' && c <= '9') {
      v |= static_cast<uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      v |= static_cast<uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      v |= static_cast<uint32_t>(c - 'A' + 10);
    } else {
      return false;
    }
  }
  *unit = v;
  return true;
}

// Decodes the escapes of one key or value. *escaped_end is the output size
// after the last escape, so trailing-blank trimming spares escaped blanks.
Status Unescape(std::string_view text, const std::string& where, std::string* out, size_t* escaped_end) {
  out->clear();
  *escaped_end = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (i + 1 >= text.size()) break;  // a lone trailing backslash (continuations are gone): dropped, as Java does
    char e = text[++i];
    switch (e) {
      case 't': out->push_back('\t'); break;
      case 'n': out->push_back('\n'); break;
      case 'r': out->push_back('\r'); break;
      case 'f': out->push_back('\f'); break;
      case 'u': {
        uint32_t unit = 0;
        if (!ReadHex4(text, i + 1, &unit)) {
          return Status::InvalidArgument(where + ": malformed \\uXXXX escape near '" +
                                         std::string(text.substr(i - 1, 6)) +
                                         "' (write four hex digits, or \\\\u for a literal backslash-u)");
        }
        i += 4;
        if (unit >= 0xD800 && unit <= 0xDBFF) {
          uint32_t low = 0;
          if (i + 6 < text.size() + 1 && text.substr(i + 1, 2) == "\\u" && ReadHex4(text, i + 3, &low) &&
              low >= 0xDC00 && low <= 0xDFFF) {
            i += 6;
            AppendUtf8(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00), out);
            break;
          }
          return Status::InvalidArgument(where + ": \\u escape of a lone UTF-16 high surrogate (" +
                                         std::string(text.substr(i - 5, 6)) + ") not followed by its low half");
        }
        if (unit >= 0xDC00 && unit <= 0xDFFF) {
          return Status::InvalidArgument(where + ": \\u escape of a lone UTF-16 low surrogate (" +
                                         std::string(text.substr(i - 5, 6)) + ")");
        }
        AppendUtf8(unit, out);
        break;
      }
      default: out->push_back(e); break;
    }
    *escaped_end = out->size();
  }
  return Status::OK();
}

std::string Trim(std::string s) {
  size_t b = 0, e = s.size();
  while (b < e && (IsBlank(s[b]) || s[b] == '\r' || s[b] == '\n')) ++b;
  while (e > b && (IsBlank(s[e - 1]) || s[e - 1] == '\r' || s[e - 1] == '\n')) --e;
  return s.substr(b, e - b);
}

}  // namespace

Status Properties::Parse(std::string_view text, std::string origin, Properties* out) {
  Properties result(std::move(origin));
  const std::string& name = result.origin_.empty() ? std::string("<properties>") : result.origin_;

  std::string logical;
  int logical_line = 0;
  bool continuing = false;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    // One natural line: \n, \r\n or \r ends it.
    size_t end = pos;
    while (end < text.size() && text[end] != '\n' && text[end] != '\r') ++end;
    std::string_view natural = text.substr(pos, end - pos);
    if (end < text.size() && text[end] == '\r' && end + 1 < text.size() && text[end + 1] == '\n') ++end;
    const bool at_eof = end >= text.size();
    pos = end + 1;
    ++line_no;

    size_t b = 0;
    while (b < natural.size() && IsBlank(natural[b])) ++b;
    natural.remove_prefix(b);
    if (!continuing) {
      if (natural.empty() || natural[0] == '#' || natural[0] == '!') {
        if (at_eof) break;
        continue;
      }
      logical.clear();
      logical_line = line_no;
    }
    size_t backslashes = 0;
    while (backslashes < natural.size() && natural[natural.size() - 1 - backslashes] == '\\') ++backslashes;
    if (backslashes % 2 == 1) {
      logical.append(natural.substr(0, natural.size() - 1));
      continuing = true;
      if (!at_eof) continue;
    } else {
      logical.append(natural);
      continuing = false;
    }

    // Split the logical line into key and value.
    std::string_view line = logical;
    size_t k = 0;
    while (k < line.size()) {
      char c = line[k];
      if (c == '\\') {
        k += 2;
        continue;
      }
      if (c == '=' || c == ':' || IsBlank(c)) break;
      ++k;
    }
    if (k > line.size()) k = line.size();
    std::string_view raw_key = line.substr(0, k);
    size_t v = k;
    while (v < line.size() && IsBlank(line[v])) ++v;
    if (v < line.size() && (line[v] == '=' || line[v] == ':')) ++v;
    while (v < line.size() && IsBlank(line[v])) ++v;
    std::string_view raw_value = line.substr(v);

    const std::string where = name + ":" + std::to_string(logical_line);
    std::string key, value;
    size_t key_escaped = 0, value_escaped = 0;
    CANAL_RETURN_IF_ERROR(Unescape(raw_key, where, &key, &key_escaped));
    CANAL_RETURN_IF_ERROR(Unescape(raw_value, where, &value, &value_escaped));
    size_t e = value.size();
    while (e > value_escaped && IsBlank(value[e - 1])) --e;
    value.resize(e);
    result.Set(std::move(key), std::move(value), logical_line);
    if (at_eof) break;
  }
  *out = std::move(result);
  return Status::OK();
}

Status Properties::LoadFile(const std::string& path, Properties* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    if (err == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::IOError("reading " + path + ": " + std::strerror(err));
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return Status::IOError("reading " + path + ": read failed");
  return Parse(buf.str(), path, out);
}

const std::string* Properties::Find(std::string_view key) const {
  auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second.text;
}

int Properties::LineOf(std::string_view key) const {
  auto it = values_.find(key);
  return it == values_.end() ? 0 : it->second.line;
}

void Properties::Set(std::string key, std::string value, int line) {
  auto it = values_.find(key);
  if (it == values_.end()) {
    order_.push_back(key);
    values_.emplace(std::move(key), Value{std::move(value), line});
  } else {
    it->second = Value{std::move(value), line};
  }
}

EnvLookup ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

std::string EnvOverrideName(std::string_view key) {
  std::string name;
  name.reserve(key.size());
  for (char c : key) {
    if (c >= 'a' && c <= 'z') {
      name.push_back(static_cast<char>(c - 'a' + 'A'));
    } else if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
      name.push_back(c);
    } else {
      name.push_back('_');
    }
  }
  return name;
}

PropertyResolver::PropertyResolver(std::vector<const Properties*> layers, EnvLookup env)
    : layers_(std::move(layers)), env_(std::move(env)) {}

bool PropertyResolver::FindRaw(std::string_view key, std::string* raw, PropertySource* source) const {
  if (env_) {
    const std::string exact(key);
    const std::string upper = EnvOverrideName(key);
    for (const std::string* name : {&exact, &upper}) {
      if (auto v = env_(*name)) {
        *raw = *v;
        source->where = "environment variable " + *name;
        source->origin = *name;
        source->from_environment = true;
        return true;
      }
    }
  }
  for (const Properties* layer : layers_) {
    if (layer == nullptr) continue;
    if (const std::string* v = layer->Find(key)) {
      *raw = *v;
      int line = layer->LineOf(key);
      source->origin = layer->origin();
      source->where = line > 0 ? layer->origin() + ":" + std::to_string(line) : layer->origin();
      source->from_environment = false;
      return true;
    }
  }
  return false;
}

bool PropertyResolver::Has(std::string_view key) const {
  std::string raw;
  PropertySource source;
  return FindRaw(key, &raw, &source);
}

Status PropertyResolver::Substitute(std::string_view key, const std::string& raw, const PropertySource& source,
                                    std::vector<std::string>* chain, std::string* out) const {
  auto fail = [&](const std::string& why) {
    return Status::InvalidArgument(source.where + ": " + std::string(key) + " = '" + raw + "': " + why);
  };
  out->clear();
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c != '$' || i + 1 >= raw.size()) {
      out->push_back(c);
      continue;
    }
    if (raw[i + 1] == '$') {
      out->push_back('$');
      ++i;
      continue;
    }
    if (raw[i + 1] != '{') {
      out->push_back(c);
      continue;
    }
    size_t close = raw.find('}', i + 2);
    if (close == std::string::npos) return fail("'${' without a closing '}' (write $${ for a literal ${)");
    std::string inner = raw.substr(i + 2, close - i - 2);
    std::optional<std::string> fallback;
    if (size_t colon = inner.find(':'); colon != std::string::npos) {
      fallback = inner.substr(colon + 1);
      inner.resize(colon);
    }
    if (inner.empty()) return fail("'${}' names nothing");
    for (const std::string& seen : *chain) {
      if (seen == inner) {
        std::string loop;
        for (const std::string& s : *chain) loop += s + " -> ";
        return fail("substitution loop " + loop + inner + " (one of these must not refer back)");
      }
    }
    std::string inner_raw;
    PropertySource inner_source;
    if (FindRaw(inner, &inner_raw, &inner_source)) {
      chain->push_back(inner);
      std::string expanded;
      Status s = Substitute(inner, inner_raw, inner_source, chain, &expanded);
      chain->pop_back();
      CANAL_RETURN_IF_ERROR(s);
      out->append(Trim(std::move(expanded)));
    } else if (fallback) {
      out->append(*fallback);
    } else {
      return fail("${" + inner + "} is set in no file and no environment variable (define " + inner +
                  ", give a default as ${" + inner + ":value}, or write $${ for a literal ${)");
    }
    i = close;
  }
  return Status::OK();
}

Status PropertyResolver::Get(std::string_view key, std::optional<std::string>* value, PropertySource* source) const {
  value->reset();
  std::string raw;
  PropertySource where;
  if (!FindRaw(key, &raw, &where)) {
    if (source != nullptr) *source = PropertySource{};
    return Status::OK();
  }
  std::vector<std::string> chain{std::string(key)};
  std::string expanded;
  CANAL_RETURN_IF_ERROR(Substitute(key, raw, where, &chain, &expanded));
  *value = Trim(std::move(expanded));
  if (source != nullptr) *source = std::move(where);
  return Status::OK();
}

}  // namespace canal
