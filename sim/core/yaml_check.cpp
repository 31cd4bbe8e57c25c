#include "sim/core/yaml_check.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

#include "sim/core/hostlist.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/units.hpp"

namespace gcsim {

namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

/// ` (did you mean 'x'?)` for the closest candidate within edit distance 2, else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  size_t best = 3;
  const std::string* pick = nullptr;
  for (const auto& c : candidates) {
    const size_t d = edit_distance(word, c);
    if (d < best) {
      best = d;
      pick = &c;
    }
  }
  return pick ? " (did you mean '" + *pick + "'?)" : std::string();
}

std::string quote(std::string_view s) { return "'" + std::string(s) + "'"; }

/// "1 name", "16 names".
std::string count_of(size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

/// The suggestion when there is one, else the list of what is accepted.
std::string unknown_choice(const std::string& word, const std::vector<std::string>& choices) {
  std::string hint = did_you_mean(word, choices);
  if (!hint.empty()) return hint;
  std::string list;
  for (size_t i = 0; i < choices.size(); ++i)
    list += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  return " (expected " + list + ")";
}

std::string describe(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Scalar: return quote(n.Scalar());
    default: return "nothing";
  }
}

SourceLoc YamlChecker::loc(const YAML::Mark& m) const {
  if (m.is_null()) return {path_, 0, 0};
  return {path_, m.line + 1, m.column + 1};
}

YamlMap YamlChecker::map_of(const YAML::Node& node, const std::string& what,
                                    const std::vector<std::string>& allowed) {
  YamlMap out;
  if (!node.IsMap()) {
    error(node, "expected a map for " + what + ", got " + describe(node));
    return out;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node k = it->first;
    if (!k.IsScalar()) {
      error(k, "expected a scalar key in " + what);
      continue;
    }
    const std::string key = k.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      error(k, "unknown key " + quote(key) + " in " + what + did_you_mean(key, allowed));
      continue;
    }
    if (auto prev = out.find(key); prev != out.end()) {
      error(k, "duplicate key " + quote(key) + " in " + what + " (first at line " +
                   std::to_string(line_of(prev->second.key_node)) + ")");
      continue;
    }
    out.emplace(key, YamlEntry{key, k, it->second});
  }
  return out;
}

const YamlEntry* YamlChecker::find(const YamlMap& m, const std::string& key) {
  auto it = m.find(key);
  return it == m.end() ? nullptr : &it->second;
}

const YamlEntry* YamlChecker::require(const YamlMap& m, const YAML::Node& map_node,
                     const std::string& key, const std::string& what, const YAML::Node* at) {
  const YamlEntry* e = find(m, key);
  if (!e && map_node.IsMap()) error(at ? *at : map_node, "missing required key " + quote(key) + " in " + what);
  return e;
}


bool YamlChecker::scalar_or_error(const YamlEntry& e, const std::string& expected) {
  if (e.value.IsScalar()) return true;
  error(e.value.IsNull() ? e.key_node : e.value,
        "expected " + expected + " for " + quote(e.key) + ", got " + describe(e.value));
  return false;
}

std::optional<std::string> YamlChecker::get_string(const YamlEntry& e) {
  if (!scalar_or_error(e, "a string")) return std::nullopt;
  if (e.value.Scalar().empty()) {
    error(e.value, "empty value for " + quote(e.key));
    return std::nullopt;
  }
  return e.value.Scalar();
}

std::optional<int64_t> YamlChecker::get_int(const YamlEntry& e, int64_t min, int64_t max) {
  if (!scalar_or_error(e, "an integer")) return std::nullopt;
  const std::string& s = e.value.Scalar();
  int64_t v = 0;
  const char* b = s.data();
  const char* end = s.data() + s.size();
  if (b != end && *b == '+') ++b;
  const auto [ptr, ec] = std::from_chars(b, end, v);
  if (s.empty() || ec != std::errc() || ptr != end) {
    error(e.value, "expected an integer for " + quote(e.key) + ", got " + quote(s));
    return std::nullopt;
  }
  if (v < min) {
    error(e.value, quote(e.key) + " must be at least " + std::to_string(min) + ", got " + s);
    return std::nullopt;
  }
  if (v > max) {
    error(e.value, quote(e.key) + " must be at most " + std::to_string(max) + ", got " + s);
    return std::nullopt;
  }
  return v;
}

std::optional<int> YamlChecker::get_int32(const YamlEntry& e, int min, int max) {
  auto v = get_int(e, min, max);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

std::optional<double> YamlChecker::get_double(const YamlEntry& e) {
  if (!scalar_or_error(e, "a number")) return std::nullopt;
  const std::string& s = e.value.Scalar();
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !(v == v) ||
      v == std::numeric_limits<double>::infinity() || v == -std::numeric_limits<double>::infinity()) {
    error(e.value, "expected a number for " + quote(e.key) + ", got " + quote(s));
    return std::nullopt;
  }
  return v;
}

std::optional<bool> YamlChecker::get_bool(const YamlEntry& e) {
  if (!scalar_or_error(e, "true or false")) return std::nullopt;
  const std::string s = to_lower(e.value.Scalar());
  if (s == "true" || s == "yes") return true;
  if (s == "false" || s == "no") return false;
  error(e.value, "expected true or false for " + quote(e.key) + ", got " + quote(e.value.Scalar()));
  return std::nullopt;
}

std::optional<int64_t> YamlChecker::get_bytes(const YamlEntry& e) {
  if (!scalar_or_error(e, "a size")) return std::nullopt;
  auto v = units::parse_bytes(e.value.Scalar());
  if (!v) {
    error(e.value, "bad size " + quote(e.value.Scalar()) + " for " + quote(e.key) +
                       " (expected e.g. 512GiB, 80GB)");
    return std::nullopt;
  }
  return v;
}

std::optional<double> YamlChecker::get_bandwidth(const YamlEntry& e) {
  if (!scalar_or_error(e, "a bandwidth")) return std::nullopt;
  auto v = units::parse_bandwidth_bps(e.value.Scalar());
  if (!v) {
    error(e.value, "bad bandwidth " + quote(e.value.Scalar()) + " for " + quote(e.key) +
                       " (expected e.g. 200Gbps, 25GB/s)");
    return std::nullopt;
  }
  if (*v <= 0) {
    error(e.value, quote(e.key) + " must be positive");
    return std::nullopt;
  }
  return v;
}

std::optional<SimTime> YamlChecker::get_duration(const YamlEntry& e, bool allow_unlimited) {
  if (!scalar_or_error(e, "a duration")) return std::nullopt;
  const std::string& s = e.value.Scalar();
  if (allow_unlimited) {
    const std::string l = to_lower(s);
    if (l == "unlimited" || l == "infinite") return SimTime::infinite();
  }
  auto v = units::parse_duration(s);
  if (!v) {
    error(e.value, "bad duration " + quote(s) + " for " + quote(e.key) + " (expected e.g. 30s, 1.5h, 7d" +
                       (allow_unlimited ? ", UNLIMITED)" : ")"));
    return std::nullopt;
  }
  return v;
}

std::optional<std::vector<std::string>> YamlChecker::get_hostlist(const YamlEntry& e) {
  auto s = get_string(e);
  if (!s) return std::nullopt;
  std::string err;
  auto names = hostlist::expand(*s, &err);
  if (!names) {
    error(e.value, "bad hostlist " + quote(*s) + " for " + quote(e.key) + ": " + err);
    return std::nullopt;
  }
  return names;
}

std::optional<std::vector<std::string>> YamlChecker::get_string_list(const YamlEntry& e) {
  std::vector<std::string> out;
  if (e.value.IsScalar()) {
    for (auto part : split(e.value.Scalar(), ',')) {
      auto t = trim(part);
      if (t.empty()) {
        error(e.value, "empty item in " + quote(e.key));
        return std::nullopt;
      }
      out.emplace_back(t);
    }
    return out;
  }
  if (!e.value.IsSequence()) {
    error(e.value.IsNull() ? e.key_node : e.value,
          "expected a list of strings for " + quote(e.key) + ", got " + describe(e.value));
    return std::nullopt;
  }
  for (const auto& item : e.value) {
    if (!item.IsScalar() || item.Scalar().empty()) {
      error(item, "expected a string in " + quote(e.key) + ", got " + describe(item));
      return std::nullopt;
    }
    out.push_back(item.Scalar());
  }
  return out;
}

bool YamlChecker::sequence_or_error(const YamlEntry& e) {
  if (e.value.IsSequence()) return true;
  error(e.value.IsNull() ? e.key_node : e.value,
        "expected a list for " + quote(e.key) + ", got " + describe(e.value));
  return false;
}

void load_yaml_checked(const std::string& text, const std::string& path,
                       const std::function<void(const YAML::Node& root, Diagnostics& diags)>& load) {
  Diagnostics diags;
  auto at = [&](const YAML::Mark& m) {
    return SourceLoc{path, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1};
  };
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    diags.error(at(e.mark), "YAML syntax error: " + e.msg);
    diags.throw_if_errors();
  }
  try {
    load(root, diags);
  } catch (const YAML::Exception& e) {
    diags.error(at(e.mark), e.msg);
  }
  diags.throw_if_errors();
}

}  // namespace gcsim
