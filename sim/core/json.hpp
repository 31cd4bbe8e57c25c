// A small strict JSON reader (RFC 8259): objects, arrays, strings with every escape
// including \uXXXX surrogate pairs, numbers, true/false/null. Each value remembers
// where it starts, so readers built on it can report `file:line:col: error:`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gcsim {

struct JsonMember;

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> items;                             // kArray
  std::vector<JsonMember> members;                          // kObject, in file order
  int line = 0;  // 1-based position of the value's first character
  int col = 0;   // 1-based byte column

  [[nodiscard]] bool is_null() const { return kind == Kind::kNull; }
  [[nodiscard]] bool is_bool() const { return kind == Kind::kBool; }
  [[nodiscard]] bool is_number() const { return kind == Kind::kNumber; }
  [[nodiscard]] bool is_string() const { return kind == Kind::kString; }
  [[nodiscard]] bool is_array() const { return kind == Kind::kArray; }
  [[nodiscard]] bool is_object() const { return kind == Kind::kObject; }
  /// The member named `key` of an object, or nullptr (also for non-objects).
  [[nodiscard]] const JsonValue* find(std::string_view key) const;
};

/// One `"key": value` of an object.
struct JsonMember {
  std::string key;
  JsonValue value;
};

/// "object", "array", "string", ... for messages.
[[nodiscard]] const char* json_kind_name(JsonValue::Kind k);

/// Parses one JSON document (surrounding whitespace allowed, nothing else). Throws
/// InputError at the first syntax error, located in `path`. Duplicate object keys,
/// trailing commas, leading zeros, control characters in strings, lone surrogates
/// and nesting deeper than 512 levels are errors.
[[nodiscard]] JsonValue parse_json(std::string_view text, const std::string& path);

}  // namespace gcsim
