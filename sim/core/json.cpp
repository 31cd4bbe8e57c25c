#include "sim/core/json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>

#include "sim/core/diagnostics.hpp"

namespace gcsim {

const JsonValue* JsonValue::find(std::string_view key) const {
  if (kind != Kind::kObject) return nullptr;
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

const char* json_kind_name(JsonValue::Kind k) {
  switch (k) {
    case JsonValue::Kind::kNull: return "null";
    case JsonValue::Kind::kBool: return "boolean";
    case JsonValue::Kind::kNumber: return "number";
    case JsonValue::Kind::kString: return "string";
    case JsonValue::Kind::kArray: return "array";
    case JsonValue::Kind::kObject: return "object";
  }
  return "value";
}

namespace {

constexpr int kMaxDepth = 512;

class JsonParser {
 public:
  JsonParser(std::string_view text, const std::string& path) : s_(text), path_(path) {}

  JsonValue document() {
    skip_ws();
    JsonValue v = value(0);
    skip_ws();
    if (i_ < s_.size()) fail("unexpected text after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const { fail_at(line_, col_, msg); }
  [[noreturn]] void fail_at(int line, int col, const std::string& msg) const {
    throw InputError(SourceLoc{path_, line, col}, msg);
  }

  [[nodiscard]] bool at_end() const { return i_ >= s_.size(); }
  [[nodiscard]] char peek() const { return s_[i_]; }

  void advance() {
    if (s_[i_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++i_;
  }

  void skip_ws() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) advance();
  }

  void expect_word(std::string_view w) {
    const int l = line_, c = col_;
    if (s_.substr(i_, w.size()) != w) fail_at(l, c, "invalid literal (expected '" + std::string(w) + "')");
    for (size_t k = 0; k < w.size(); ++k) advance();
  }

  std::string describe_here() const {
    if (at_end()) return "end of input";
    const unsigned char ch = static_cast<unsigned char>(peek());
    if (ch >= 0x20 && ch < 0x7f) return std::string("'") + static_cast<char>(ch) + "'";
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", ch);
    return std::string("byte ") + buf;
  }

  JsonValue value(int depth) {
    if (depth > kMaxDepth) fail("JSON nested deeper than 512 levels");
    if (at_end()) fail("expected a JSON value, found end of input");
    JsonValue v;
    v.line = line_;
    v.col = col_;
    const char ch = peek();
    if (ch == '{') {
      v.kind = JsonValue::Kind::kObject;
      object(v, depth);
    } else if (ch == '[') {
      v.kind = JsonValue::Kind::kArray;
      array(v, depth);
    } else if (ch == '"') {
      v.kind = JsonValue::Kind::kString;
      v.string = string();
    } else if (ch == 't') {
      expect_word("true");
      v.kind = JsonValue::Kind::kBool;
      v.boolean = true;
    } else if (ch == 'f') {
      expect_word("false");
      v.kind = JsonValue::Kind::kBool;
    } else if (ch == 'n') {
      expect_word("null");
    } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
      v.kind = JsonValue::Kind::kNumber;
      v.number = number();
    } else {
      fail("expected a JSON value, found " + describe_here());
    }
    return v;
  }

  void object(JsonValue& v, int depth) {
    advance();  // '{'
    skip_ws();
    if (!at_end() && peek() == '}') {
      advance();
      return;
    }
    std::set<std::string> seen;
    while (true) {
      skip_ws();
      if (at_end() || peek() != '"') fail("expected a string key in object, found " + describe_here());
      const int kl = line_, kc = col_;
      std::string key = string();
      if (!seen.insert(key).second) fail_at(kl, kc, "duplicate key \"" + key + "\" in object");
      skip_ws();
      if (at_end() || peek() != ':') fail("expected ':' after object key, found " + describe_here());
      advance();
      skip_ws();
      JsonValue member = value(depth + 1);
      v.members.push_back(JsonMember{std::move(key), std::move(member)});
      skip_ws();
      if (at_end()) fail("unterminated object (opened at " + std::to_string(v.line) + ":" + std::to_string(v.col) + ")");
      if (peek() == ',') {
        advance();
        skip_ws();
        if (!at_end() && peek() == '}') fail("trailing comma in object");
        continue;
      }
      if (peek() == '}') {
        advance();
        return;
      }
      fail("expected ',' or '}' in object, found " + describe_here());
    }
  }

  void array(JsonValue& v, int depth) {
    advance();  // '['
    skip_ws();
    if (!at_end() && peek() == ']') {
      advance();
      return;
    }
    while (true) {
      skip_ws();
      v.items.push_back(value(depth + 1));
      skip_ws();
      if (at_end()) fail("unterminated array (opened at " + std::to_string(v.line) + ":" + std::to_string(v.col) + ")");
      if (peek() == ',') {
        advance();
        skip_ws();
        if (!at_end() && peek() == ']') fail("trailing comma in array");
        continue;
      }
      if (peek() == ']') {
        advance();
        return;
      }
      fail("expected ',' or ']' in array, found " + describe_here());
    }
  }

  unsigned hex4() {
    unsigned cp = 0;
    for (int k = 0; k < 4; ++k) {
      if (at_end()) fail("truncated \\u escape");
      const char h = peek();
      unsigned d = 0;
      if (h >= '0' && h <= '9') d = static_cast<unsigned>(h - '0');
      else if (h >= 'a' && h <= 'f') d = static_cast<unsigned>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') d = static_cast<unsigned>(h - 'A' + 10);
      else fail("invalid hex digit in \\u escape");
      cp = cp * 16 + d;
      advance();
    }
    return cp;
  }

  static void put_utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    } else {
      out.push_back(static_cast<char>(0xf0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
    }
  }

  std::string string() {
    const int sl = line_, sc = col_;
    advance();  // opening quote
    std::string out;
    while (true) {
      if (at_end() || peek() == '\n') fail_at(sl, sc, "unterminated string");
      const unsigned char ch = static_cast<unsigned char>(peek());
      if (ch == '"') {
        advance();
        return out;
      }
      if (ch < 0x20) fail("control character in string (must be escaped)");
      if (ch != '\\') {
        out.push_back(static_cast<char>(ch));
        advance();
        continue;
      }
      const int el = line_, ec = col_;
      advance();
      if (at_end()) fail_at(sl, sc, "unterminated string");
      const char e = peek();
      advance();
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xdc00 && cp <= 0xdfff) fail_at(el, ec, "lone low surrogate in \\u escape");
          if (cp >= 0xd800 && cp <= 0xdbff) {
            if (s_.substr(i_, 2) != "\\u") fail_at(el, ec, "high surrogate not followed by a low surrogate");
            advance();
            advance();
            const unsigned lo = hex4();
            if (lo < 0xdc00 || lo > 0xdfff) fail_at(el, ec, "high surrogate not followed by a low surrogate");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
          }
          put_utf8(out, cp);
          break;
        }
        default:
          fail_at(el, ec, std::string("invalid escape '\\") + e + "' in string");
      }
    }
  }

  double number() {
    const int nl = line_, nc = col_;
    const size_t start = i_;
    auto digits = [&]() {
      size_t n = 0;
      while (!at_end() && peek() >= '0' && peek() <= '9') {
        advance();
        ++n;
      }
      return n;
    };
    if (peek() == '-') advance();
    if (at_end() || !(peek() >= '0' && peek() <= '9')) fail_at(nl, nc, "invalid number: expected a digit");
    if (peek() == '0') {
      advance();
      if (!at_end() && peek() >= '0' && peek() <= '9') fail_at(nl, nc, "invalid number: leading zero");
    } else {
      digits();
    }
    if (!at_end() && peek() == '.') {
      advance();
      if (digits() == 0) fail_at(nl, nc, "invalid number: expected a digit after '.'");
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      advance();
      if (!at_end() && (peek() == '+' || peek() == '-')) advance();
      if (digits() == 0) fail_at(nl, nc, "invalid number: expected a digit in the exponent");
    }
    const std::string_view tok = s_.substr(start, i_ - start);
    double v = 0;
    const auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (ec != std::errc() || p != tok.data() + tok.size() || !std::isfinite(v))
      fail_at(nl, nc, "number out of range: " + std::string(tok));
    return v;
  }

  std::string_view s_;
  const std::string& path_;
  size_t i_ = 0;
  int line_ = 1;
  int col_ = 1;
};

}  // namespace

JsonValue parse_json(std::string_view text, const std::string& path) {
  return JsonParser(text, path).document();
}

}  // namespace gcsim
