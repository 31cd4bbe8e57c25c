// Strict YAML reading for gcsim's own formats (cluster, generator model, NCCL
// tuning): every map's keys checked against what the context allows (with a
// did-you-mean), every scalar typed, every problem `file:line:col: error:` into one
// Diagnostics so that several are reported at once. Readers derive from YamlChecker.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/diagnostics.hpp"
#include "sim/core/time.hpp"

namespace gcsim {

/// ` (did you mean 'x'?)` for the closest candidate within edit distance 2, else "".
[[nodiscard]] std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);
[[nodiscard]] std::string quote(std::string_view s);
/// "1 name", "16 names".
[[nodiscard]] std::string count_of(size_t n, const std::string& noun);
/// The suggestion when there is one, else the list of what is accepted.
[[nodiscard]] std::string unknown_choice(const std::string& word, const std::vector<std::string>& choices);
/// "a map", "a list", "'text'", "nothing": what a node is, for messages.
[[nodiscard]] std::string describe(const YAML::Node& n);

/// One map's entries in file order, with the keys checked against what the context allows.
struct YamlEntry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};
using YamlMap = std::map<std::string, YamlEntry>;

class YamlChecker {
 public:
  YamlChecker(const std::string& path, Diagnostics& diags) : path_(path), diags_(diags) {}

  [[nodiscard]] SourceLoc loc(const YAML::Mark& m) const;
  [[nodiscard]] SourceLoc loc(const YAML::Node& n) const { return loc(n.Mark()); }
  void error(const YAML::Node& n, std::string msg) { diags_.error(loc(n), std::move(msg)); }
  void error(const YAML::Mark& m, std::string msg) { diags_.error(loc(m), std::move(msg)); }
  [[nodiscard]] int line_of(const YAML::Node& n) const { return n.Mark().is_null() ? 0 : n.Mark().line + 1; }
  /// Where to point for a bad value: the value, or its key when the value is empty.
  [[nodiscard]] static const YAML::Node& at(const YamlEntry& e) { return e.value.IsNull() ? e.key_node : e.value; }

  /// Reads `node` as a map; reports non-map values, unknown keys (with a suggestion)
  /// and repeated keys. `what` names the context: "node template", "partition", ...
  YamlMap map_of(const YAML::Node& node, const std::string& what, const std::vector<std::string>& allowed);
  [[nodiscard]] static const YamlEntry* find(const YamlMap& m, const std::string& key);
  /// The entry for a required key, or an error and nullptr. The error points at `at`
  /// when given (a template's name), else at the map (yaml-cpp marks its first key).
  const YamlEntry* require(const YamlMap& m, const YAML::Node& map_node, const std::string& key,
                           const std::string& what, const YAML::Node* at = nullptr);

  bool scalar_or_error(const YamlEntry& e, const std::string& expected);
  bool sequence_or_error(const YamlEntry& e);
  std::optional<std::string> get_string(const YamlEntry& e);
  std::optional<int64_t> get_int(const YamlEntry& e, int64_t min, int64_t max);
  std::optional<int> get_int32(const YamlEntry& e, int min, int max = 1'000'000'000);
  std::optional<double> get_double(const YamlEntry& e);
  std::optional<bool> get_bool(const YamlEntry& e);
  std::optional<int64_t> get_bytes(const YamlEntry& e);
  std::optional<double> get_bandwidth(const YamlEntry& e);
  std::optional<SimTime> get_duration(const YamlEntry& e, bool allow_unlimited);
  /// A hostlist expression, expanded.
  std::optional<std::vector<std::string>> get_hostlist(const YamlEntry& e);
  /// A list of strings; a single scalar is split at commas (Slurm's `Feature=a,b`).
  std::optional<std::vector<std::string>> get_string_list(const YamlEntry& e);

 protected:
  std::string path_;
  Diagnostics& diags_;
};

/// Parses `text` and hands the root to `load`, which reports into `diags`. A syntax
/// error, an error `load` reported, or a yaml-cpp exception escaping it (a defect: loaders
/// read nodes only through the checked accessors) ends in InputError with every message.
void load_yaml_checked(const std::string& text, const std::string& path,
                       const std::function<void(const YAML::Node& root, Diagnostics& diags)>& load);

}  // namespace gcsim
