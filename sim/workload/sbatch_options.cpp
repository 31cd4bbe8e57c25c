// sbatch command-line parsing.
//
// The string is first split into words as a POSIX shell would, remembering where
// each word starts so that diagnostics can point at it. The words are then read
// the way sbatch's getopt_long reads argv:
//   * `--name=value` and `--name value` for options that require a value; the
//     next word is taken as the value even when it starts with '-';
//   * `-Xvalue` and `-X value` for short options (all short options supported
//     here take a value, so there is no flag bundling);
//   * `--exclusive` takes an optional value, which must be attached (`=user`);
//   * `--` ends the options.
// Unlike getopt_long, long options must be spelled out in full (no unambiguous
// prefixes), and a word that is not an option is an error rather than the script.
// Each bad option produces exactly one error (the separate value of an unknown
// option is skipped with it); an unknown long option close to a known one
// additionally gets a "did you mean" note.
#include "sim/core/input_file.hpp"
#include "sim/workload/sbatch_options.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <climits>
#include <functional>
#include <optional>

#include "sim/workload/slurm_time.hpp"

namespace gcsim {
namespace {

// ---------------------------------------------------------------------------
// Shell splitting

struct Word {
  std::string text;
  size_t offset = 0;  // byte offset of the word's first character within the input
};

[[nodiscard]] bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// POSIX word splitting without expansions. On an unterminated quote returns false,
/// sets `error` and `error_offset` (the offset of the opening quote).
bool split_words(std::string_view s, std::vector<Word>& out, std::string& error,
                 size_t& error_offset) {
  out.clear();
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    while (i < n && is_blank(s[i])) ++i;
    if (i >= n) break;
    Word w;
    w.offset = i;
    while (i < n && !is_blank(s[i])) {
      const char c = s[i];
      if (c == '\'') {
        // Single quotes: everything up to the next quote is literal.
        const size_t close = s.find('\'', i + 1);
        if (close == std::string_view::npos) {
          error = "unterminated single quote";
          error_offset = i;
          return false;
        }
        w.text.append(s.substr(i + 1, close - i - 1));
        i = close + 1;
      } else if (c == '"') {
        // Double quotes: backslash escapes only $ ` " \ and newline.
        const size_t open = i++;
        bool closed = false;
        while (i < n) {
          const char d = s[i];
          if (d == '"') {
            closed = true;
            ++i;
            break;
          }
          if (d == '\\' && i + 1 < n) {
            const char e = s[i + 1];
            if (e == '$' || e == '`' || e == '"' || e == '\\') {
              w.text.push_back(e);
              i += 2;
              continue;
            }
            if (e == '\n') {  // line continuation
              i += 2;
              continue;
            }
          }
          w.text.push_back(d);
          ++i;
        }
        if (!closed) {
          error = "unterminated double quote";
          error_offset = open;
          return false;
        }
      } else if (c == '\\') {
        // Outside quotes a backslash quotes the next character; backslash-newline
        // disappears. A backslash at the very end stays literal (as with `sh -c`).
        if (i + 1 < n) {
          if (s[i + 1] != '\n') w.text.push_back(s[i + 1]);
          i += 2;
        } else {
          w.text.push_back('\\');
          ++i;
        }
      } else {
        w.text.push_back(c);
        ++i;
      }
    }
    out.push_back(std::move(w));
  }
  return true;
}

// ---------------------------------------------------------------------------
// Small lexical helpers

[[nodiscard]] char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

[[nodiscard]] bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

[[nodiscard]] bool istarts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && iequals(s.substr(0, prefix.size()), prefix);
}

[[nodiscard]] bool is_digit(char c) { return c >= '0' && c <= '9'; }

[[nodiscard]] bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_digit);
}

/// Unsigned decimal, digits only; nullopt when empty, malformed or above `max`.
[[nodiscard]] std::optional<int64_t> parse_uint(std::string_view s, int64_t max = INT64_MAX) {
  if (!all_digits(s)) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    const int digit = c - '0';
    if (v > (max - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  return v;
}

/// A positive `int` (>= 1).
[[nodiscard]] std::optional<int> parse_positive_int(std::string_view s) {
  const auto v = parse_uint(s, INT_MAX);
  if (!v || *v < 1) return std::nullopt;
  return static_cast<int>(*v);
}

/// Splits a binding list the way Slurm does: a comma followed by a digit belongs
/// to a map/mask list (`map_cpu:0,1,2`), any other comma separates keywords.
[[nodiscard]] std::vector<std::string_view> split_bind_list(std::string_view s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || (s[i] == ',' && !(i + 1 < s.size() && is_digit(s[i + 1])))) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

[[nodiscard]] bool is_hex_digit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

/// `item[*count][,item[*count]...]` where each item is decimal (maps) or
/// hexadecimal with an optional 0x prefix (masks).
[[nodiscard]] bool valid_map_or_mask_list(std::string_view s, bool hex) {
  if (s.empty()) return false;
  for (auto item : split(s, ',')) {
    const size_t star = item.find('*');
    if (star != std::string_view::npos) {
      if (!parse_positive_int(item.substr(star + 1))) return false;
      item = item.substr(0, star);
    }
    if (hex) {
      if (istarts_with(item, "0x")) item.remove_prefix(2);
      if (item.empty() || !std::all_of(item.begin(), item.end(), is_hex_digit)) return false;
    } else if (!all_digits(item)) {
      return false;
    }
  }
  return true;
}

/// Identifier for a GRES name or type: starts with a letter or digit, then
/// letters, digits, '_', '-', '.'.
[[nodiscard]] bool valid_gres_word(std::string_view s) {
  if (s.empty() || std::isalnum(static_cast<unsigned char>(s[0])) == 0) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
  });
}

/// Optimal-string-alignment distance (Levenshtein plus adjacent transpositions),
/// case-insensitive. Used only for "did you mean" suggestions.
[[nodiscard]] size_t edit_distance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

// ---------------------------------------------------------------------------
// Option values. Each parser returns the reason the value is invalid (the text
// after "invalid value 'V' for 'OPT': "), or nullopt when it was stored.

using Reason = std::optional<std::string>;

constexpr const char* kPositiveInteger = "expected a positive integer";

Reason set_positive(std::string_view v, std::optional<int>& field) {
  const auto x = parse_positive_int(v);
  if (!x) return kPositiveInteger;
  field = *x;
  return std::nullopt;
}

Reason set_nodes(std::string_view v, JobRequest& r) {
  const char* const kWhat = "expected a positive node count N or a range N-M";
  const size_t dash = v.find('-');
  const auto lo = parse_positive_int(v.substr(0, dash));
  if (!lo) return kWhat;
  int hi = *lo;  // a single count means exactly that many nodes (min = max)
  if (dash != std::string_view::npos) {
    const auto h = parse_positive_int(v.substr(dash + 1));
    if (!h) return kWhat;
    if (*h < *lo) return "the minimum node count exceeds the maximum";
    hi = *h;
  }
  r.nodes_min = *lo;
  r.nodes_max = hi;
  return std::nullopt;
}

Reason set_mem(std::string_view v, std::optional<int64_t>& field) {
  const auto mb = parse_slurm_mem_mb(v);
  if (!mb) return "expected a size with an optional K, M, G or T suffix";
  field = *mb;
  return std::nullopt;
}

Reason set_gres(std::string_view v, JobRequest& r) {
  // `--gres=none` explicitly requests no generic resources.
  if (iequals(v, "none")) {
    r.gres.clear();
    return std::nullopt;
  }
  std::vector<GresRequest> list;
  for (auto item : split(v, ',')) {
    const auto g = parse_gres_spec(item, /*name_required=*/true);
    if (!g) return "expected a comma list of name[:type][:count]";
    list.push_back(*g);
  }
  r.gres = std::move(list);  // a repeated --gres replaces the earlier one, as in sbatch
  return std::nullopt;
}

Reason set_gpus(std::string_view v, std::optional<GresRequest>& field) {
  const auto g = parse_gres_spec(v, /*name_required=*/false);
  if (!g || g->count < 1) return "expected [type:]count with a positive count";
  field = *g;
  return std::nullopt;
}

Reason set_time(std::string_view v, JobRequest& r) {
  const auto t = slurm_time::parse_time_limit(v);
  if (!t)
    return "expected minutes, minutes:seconds, hours:minutes:seconds, days-hours, "
           "days-hours:minutes, days-hours:minutes:seconds or UNLIMITED";
  r.time_limit = *t;
  return std::nullopt;
}

Reason set_exclusive(std::optional<std::string_view> v, JobRequest& r) {
  // The bare flag asks for whole nodes; `=user`, `=mcs` and `=topo` narrow whom
  // the nodes may be shared with. `exclusive` is set in every case, so consumers
  // must look at `exclusive_mode` to tell them apart.
  if (!v) {
    r.exclusive = true;
    r.exclusive_mode.clear();
    return std::nullopt;
  }
  for (const char* mode : {"user", "mcs", "topo"}) {
    if (iequals(*v, mode)) {
      r.exclusive = true;
      r.exclusive_mode = mode;
      return std::nullopt;
    }
  }
  return "expected user, mcs or topo";
}

Reason set_gres_flags(std::string_view v, JobRequest& r) {
  static constexpr std::array<std::string_view, 4> kFlags = {
      "enforce-binding", "disable-binding", "one-task-per-sharing", "multiple-tasks-per-sharing"};
  for (auto item : split(v, ',')) {
    if (std::none_of(kFlags.begin(), kFlags.end(), [&](auto f) { return iequals(item, f); }))
      return "expected enforce-binding, disable-binding, one-task-per-sharing or "
             "multiple-tasks-per-sharing";
  }
  r.gres_flags = std::string(v);
  return std::nullopt;
}

Reason set_cpu_bind(std::string_view v, JobRequest& r) {
  static constexpr std::array<std::string_view, 11> kWords = {
      "none", "no", "rank", "rank_ldom", "sockets", "cores", "threads", "ldoms", "boards",
      "verbose", "quiet"};
  struct ListKeyword {
    std::string_view prefix;
    bool hex;
  };
  static constexpr std::array<ListKeyword, 4> kLists = {{
      {"map_cpu:", false}, {"mask_cpu:", true}, {"map_ldom:", false}, {"mask_ldom:", true}}};
  for (auto tok : split_bind_list(v)) {
    bool ok = std::any_of(kWords.begin(), kWords.end(), [&](auto w) { return iequals(tok, w); });
    for (const auto& l : kLists) {
      if (!ok && istarts_with(tok, l.prefix))
        ok = valid_map_or_mask_list(tok.substr(l.prefix.size()), l.hex);
    }
    if (!ok)
      return "expected none, rank, map_cpu:<list>, mask_cpu:<list>, rank_ldom, map_ldom:<list>, "
             "mask_ldom:<list>, sockets, cores, threads, ldoms, boards, verbose or quiet";
  }
  r.cpu_bind = std::string(v);
  return std::nullopt;
}

Reason set_gpu_bind(std::string_view v, JobRequest& r) {
  for (auto tok : split_bind_list(v)) {
    bool ok = iequals(tok, "verbose") || iequals(tok, "closest") || iequals(tok, "none");
    if (!ok && istarts_with(tok, "single:")) ok = parse_positive_int(tok.substr(7)).has_value();
    if (!ok && istarts_with(tok, "per_task:")) ok = parse_positive_int(tok.substr(9)).has_value();
    if (!ok && istarts_with(tok, "map_gpu:")) ok = valid_map_or_mask_list(tok.substr(8), false);
    if (!ok && istarts_with(tok, "mask_gpu:")) ok = valid_map_or_mask_list(tok.substr(9), true);
    if (!ok)
      return "expected closest, none, single:N, per_task:N, map_gpu:<list> or "
             "mask_gpu:<list>, optionally with verbose";
  }
  r.gpu_bind = std::string(v);
  return std::nullopt;
}

Reason set_distribution(std::string_view v, JobRequest& r) {
  const char* const kWhat =
      "expected block, cyclic, arbitrary, plane=N or fcyclic, optionally followed by "
      ":block|:cyclic|:fcyclic levels and ,Pack or ,NoPack";
  std::string_view dist = v;
  const size_t comma = v.find(',');
  if (comma != std::string_view::npos) {
    const std::string_view pack = v.substr(comma + 1);
    if (!iequals(pack, "Pack") && !iequals(pack, "NoPack")) return kWhat;
    dist = v.substr(0, comma);
  }
  const auto levels = split(dist, ':');
  if (levels.size() > 3) return kWhat;
  // `*` stands for the default method at any level.
  const auto is_level = [](std::string_view l) {
    return l == "*" || iequals(l, "block") || iequals(l, "cyclic") || iequals(l, "fcyclic");
  };
  const std::string_view first = levels[0];
  if (iequals(first, "arbitrary")) {
    if (levels.size() != 1) return kWhat;
  } else if (istarts_with(first, "plane=")) {
    if (levels.size() != 1 || !parse_positive_int(first.substr(6))) return kWhat;
  } else if (!is_level(first)) {
    return kWhat;
  }
  for (size_t i = 1; i < levels.size(); ++i)
    if (!is_level(levels[i])) return kWhat;
  r.distribution = std::string(v);
  return std::nullopt;
}

Reason set_switches(std::string_view v, JobRequest& r) {
  const char* const kWhat = "expected a switch count N or N@max-time";
  const size_t at = v.find('@');
  const auto n = parse_positive_int(v.substr(0, at));
  if (!n) return kWhat;
  std::optional<SimTime> wait;
  if (at != std::string_view::npos) {
    wait = slurm_time::parse_time_limit(v.substr(at + 1));
    if (!wait) return kWhat;
  }
  r.switches = *n;
  r.switches_wait = wait;
  return std::nullopt;
}

/// One `jobid[_task][+minutes]` of a dependency.
[[nodiscard]] bool valid_dependency_job(std::string_view s, bool allow_delay) {
  const size_t plus = s.find('+');
  if (plus != std::string_view::npos) {
    if (!allow_delay || !all_digits(s.substr(plus + 1))) return false;
    s = s.substr(0, plus);
  }
  const size_t us = s.find('_');
  if (us != std::string_view::npos) {
    if (!all_digits(s.substr(us + 1))) return false;
    s = s.substr(0, us);
  }
  return all_digits(s);
}

Reason set_dependency(std::string_view v, JobRequest& r) {
  const char* const kWhat =
      "expected type:jobid[:jobid...] with type after, afterany, afterok, afternotok, "
      "aftercorr or afterburstbuffer, or singleton, separated by ',' or '?'";
  const bool has_and = v.find(',') != std::string_view::npos;
  const bool has_or = v.find('?') != std::string_view::npos;
  if (has_and && has_or) return "',' (all of) and '?' (any of) cannot be mixed";
  static constexpr std::array<std::string_view, 6> kTypes = {
      "after", "afterany", "afterok", "afternotok", "aftercorr", "afterburstbuffer"};
  for (auto item : split(v, has_or ? '?' : ',')) {
    if (iequals(item, "singleton")) continue;
    const auto parts = split(item, ':');
    if (parts.size() < 2) return kWhat;
    const std::string_view type = parts[0];
    if (std::none_of(kTypes.begin(), kTypes.end(), [&](auto t) { return iequals(type, t); }))
      return kWhat;
    // Only plain `after` takes a `+minutes` delay.
    const bool delay = iequals(type, "after");
    for (size_t i = 1; i < parts.size(); ++i)
      if (!valid_dependency_job(parts[i], delay)) return kWhat;
  }
  r.dependency = std::string(v);
  return std::nullopt;
}

Reason set_array(std::string_view v, JobRequest& r) {
  const char* const kWhat =
      "expected indexes such as 1-10, 1,3,5 or 0-15:4, optionally followed by %N";
  std::string_view list = v;
  const size_t pct = v.find('%');
  if (pct != std::string_view::npos) {
    if (!parse_positive_int(v.substr(pct + 1))) return kWhat;
    list = v.substr(0, pct);
  }
  for (auto item : split(list, ',')) {
    const size_t colon = item.find(':');
    if (colon != std::string_view::npos) {
      if (!parse_positive_int(item.substr(colon + 1))) return kWhat;
      item = item.substr(0, colon);
      if (item.find('-') == std::string_view::npos) return kWhat;  // a step needs a range
    }
    const size_t dash = item.find('-');
    const auto lo = parse_uint(item.substr(0, dash), INT_MAX);
    if (!lo) return kWhat;
    if (dash != std::string_view::npos) {
      const auto hi = parse_uint(item.substr(dash + 1), INT_MAX);
      if (!hi) return kWhat;
      if (*hi < *lo) return "the range start exceeds its end";
    }
  }
  r.array = std::string(v);
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// The option table

enum class Arg { kRequired, kOptional };

struct OptionSpec {
  std::string_view long_name;
  char short_name;  // 0 = none
  Arg arg;
  // Applies a non-empty value (or, for kOptional, no value).
  std::function<Reason(std::optional<std::string_view>, JobRequest&)> apply;
};

/// Wraps a required-value setter.
template <typename F>
auto req(F f) {
  return [f](std::optional<std::string_view> v, JobRequest& r) -> Reason { return f(*v, r); };
}

const std::vector<OptionSpec>& option_table() {
  static const std::vector<OptionSpec> kTable = {
      {"nodes", 'N', Arg::kRequired, req(set_nodes)},
      {"ntasks", 'n', Arg::kRequired,
       req([](std::string_view v, JobRequest& r) { return set_positive(v, r.ntasks); })},
      {"ntasks-per-node", 0, Arg::kRequired,
       req([](std::string_view v, JobRequest& r) { return set_positive(v, r.ntasks_per_node); })},
      {"cpus-per-task", 'c', Arg::kRequired,
       req([](std::string_view v, JobRequest& r) { return set_positive(v, r.cpus_per_task); })},
      {"mem", 0, Arg::kRequired,
       req([](std::string_view v, JobRequest& r) { return set_mem(v, r.mem_per_node_mb); })},
      {"mem-per-cpu", 0, Arg::kRequired,
       req([](std::string_view v, JobRequest& r) { return set_mem(v, r.mem_per_cpu_mb); })},
      {"mem-per-gpu", 0, Arg::kRequired,
       req([](std::string_view v, JobRequest& r) { return set_mem(v, r.mem_per_gpu_mb); })},
      {"gres", 0, Arg::kRequired, req(set_gres)},
      {"gpus", 'G', Arg::kRequired,
       req([](std::string_view v, JobRequest& r) { return set_gpus(v, r.gpus); })},
      {"gpus-per-node", 0, Arg::kRequired,
       req([](std::string_view v, JobRequest& r) { return set_gpus(v, r.gpus_per_node); })},
      {"gpus-per-task", 0, Arg::kRequired,
       req([](std::string_view v, JobRequest& r) { return set_gpus(v, r.gpus_per_task); })},
      {"cpus-per-gpu", 0, Arg::kRequired,
       req([](std::string_view v, JobRequest& r) { return set_positive(v, r.cpus_per_gpu); })},
      {"time", 't', Arg::kRequired, req(set_time)},
      {"partition", 'p', Arg::kRequired, req([](std::string_view v, JobRequest& r) -> Reason {
         r.partition = std::string(v);
         return std::nullopt;
       })},
      {"exclusive", 0, Arg::kOptional, set_exclusive},
      {"gres-flags", 0, Arg::kRequired, req(set_gres_flags)},
      {"cpu-bind", 0, Arg::kRequired, req(set_cpu_bind)},
      {"gpu-bind", 0, Arg::kRequired, req(set_gpu_bind)},
      {"distribution", 'm', Arg::kRequired, req(set_distribution)},
      {"switches", 0, Arg::kRequired, req(set_switches)},
      {"dependency", 'd', Arg::kRequired, req(set_dependency)},
      {"array", 'a', Arg::kRequired, req(set_array)},
      {"qos", 'q', Arg::kRequired, req([](std::string_view v, JobRequest& r) -> Reason {
         r.qos = std::string(v);
         return std::nullopt;
       })},
      {"account", 'A', Arg::kRequired, req([](std::string_view v, JobRequest& r) -> Reason {
         r.account = std::string(v);
         return std::nullopt;
       })},
      {"job-name", 'J', Arg::kRequired, req([](std::string_view v, JobRequest& r) -> Reason {
         r.job_name = std::string(v);
         return std::nullopt;
       })},
  };
  return kTable;
}

const OptionSpec* find_long(std::string_view name) {
  for (const auto& o : option_table())
    if (o.long_name == name) return &o;
  return nullptr;
}

const OptionSpec* find_short(char c) {
  for (const auto& o : option_table())
    if (o.short_name != 0 && o.short_name == c) return &o;
  return nullptr;
}

/// The known long option closest to `name`, when it is close enough to be a typo.
std::optional<std::string_view> suggest_long(std::string_view name) {
  if (name.empty()) return std::nullopt;
  const size_t limit = name.size() <= 4 ? 1 : 2;
  std::optional<std::string_view> best;
  size_t best_d = limit + 1;
  for (const auto& o : option_table()) {
    const size_t d = edit_distance(name, o.long_name);
    if (d < best_d) {
      best_d = d;
      best = o.long_name;
    }
  }
  return best;
}

}  // namespace

// ---------------------------------------------------------------------------
// Public API

bool shell_split(std::string_view s, std::vector<std::string>& out, std::string* error) {
  std::vector<Word> words;
  std::string err;
  size_t err_off = 0;
  out.clear();
  if (!split_words(s, words, err, err_off)) {
    if (error) *error = err;
    return false;
  }
  for (auto& w : words) out.push_back(std::move(w.text));
  return true;
}

std::optional<int64_t> parse_slurm_mem_mb(std::string_view s) {
  // Slurm's MB is a MiB; K rounds up to a whole MB so a request never shrinks.
  if (s.empty()) return std::nullopt;
  int64_t mult = 1;
  bool kib = false;
  const char last = lower(s.back());
  if (!is_digit(s.back())) {
    switch (last) {
      case 'k': kib = true; break;
      case 'm': break;
      case 'g': mult = 1024; break;
      case 't': mult = 1024 * 1024; break;
      default: return std::nullopt;
    }
    s.remove_suffix(1);
  }
  const auto n = parse_uint(s, INT64_MAX / mult);
  if (!n) return std::nullopt;
  if (kib) return (*n + 1023) / 1024;
  return *n * mult;
}

std::optional<GresRequest> parse_gres_spec(std::string_view s, bool name_required) {
  // Accept the TRES spelling `gres/gpu:2` too.
  if (name_required && s.substr(0, 5) == "gres/") s.remove_prefix(5);
  const auto parts = split(s, ':');
  GresRequest g;
  if (name_required) {
    // name, name:count, name:type, name:type:count
    if (parts.size() > 3 || !valid_gres_word(parts[0]) || all_digits(parts[0]))
      return std::nullopt;
    g.name = std::string(parts[0]);
    g.count = 1;
    if (parts.size() == 2) {
      if (all_digits(parts[1])) {
        const auto c = parse_uint(parts[1], INT_MAX);
        if (!c) return std::nullopt;
        g.count = *c;
      } else if (valid_gres_word(parts[1])) {
        g.type = std::string(parts[1]);
      } else {
        return std::nullopt;
      }
    } else if (parts.size() == 3) {
      const auto c = parse_uint(parts[2], INT_MAX);
      if (!valid_gres_word(parts[1]) || all_digits(parts[1]) || !c) return std::nullopt;
      g.type = std::string(parts[1]);
      g.count = *c;
    }
    return g;
  }
  // --gpus*: count or type:count; the name is always gpu.
  if (parts.size() > 2) return std::nullopt;
  const auto c = parse_uint(parts.back(), INT_MAX);
  if (!c) return std::nullopt;
  if (parts.size() == 2) {
    if (!valid_gres_word(parts[0]) || all_digits(parts[0])) return std::nullopt;
    g.type = std::string(parts[0]);
  }
  g.name = "gpu";
  g.count = *c;
  return g;
}

bool parse_sbatch_options(std::string_view args, const SourceLoc& loc, JobRequest& req,
                          Diagnostics& diags) {
  bool ok = true;
  const auto at = [&](size_t offset) {
    SourceLoc l = loc;
    if (loc.col > 0) l.col = loc.col + static_cast<int>(offset);
    return l;
  };
  const auto fail = [&](size_t offset, std::string message) {
    diags.error(at(offset), std::move(message));
    ok = false;
  };

  std::vector<Word> words;
  std::string split_error;
  size_t split_offset = 0;
  if (!split_words(args, words, split_error, split_offset)) {
    fail(split_offset, split_error + " in sbatch options");
    return false;
  }

  // An unknown option probably takes a value (most sbatch options do); when its
  // value is not attached, a following word that is not an option is taken to be
  // that value, so one misspelt option gives one error rather than two.
  const auto skip_unknown_value = [&](size_t& i, bool attached) {
    if (!attached && i + 1 < words.size() && !words[i + 1].text.starts_with('-')) ++i;
  };

  bool options_ended = false;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i].text;
    const size_t off = words[i].offset;

    if (options_ended || w.size() < 2 || w[0] != '-') {
      fail(off, "unexpected argument '" + w + "': sbatch options start with '-'");
      continue;
    }
    if (w == "--") {
      options_ended = true;
      continue;
    }

    const OptionSpec* spec = nullptr;
    std::string shown;                      // the option as written, for messages
    std::optional<std::string_view> value;  // nullopt = no value given
    if (w[1] == '-') {
      const std::string_view body = std::string_view(w).substr(2);
      const size_t eq = body.find('=');
      const std::string_view name = body.substr(0, eq);
      shown = "--" + std::string(name);
      spec = find_long(name);
      if (!spec) {
        fail(off, "unknown sbatch option '" + shown + "'");
        if (const auto s = suggest_long(name))
          diags.note(at(off), "did you mean '--" + std::string(*s) + "'?");
        skip_unknown_value(i, eq != std::string_view::npos);
        continue;
      }
      if (eq != std::string_view::npos) value = body.substr(eq + 1);
    } else {
      shown = std::string("-") + w[1];
      spec = find_short(w[1]);
      if (!spec) {
        fail(off, "unknown sbatch option '" + shown + "'");
        skip_unknown_value(i, w.size() > 2);
        continue;
      }
      if (w.size() > 2) value = std::string_view(w).substr(2);
    }

    // A required value not attached comes from the next word, whatever it is.
    if (!value && spec->arg == Arg::kRequired) {
      if (i + 1 >= words.size()) {
        fail(off, "option '" + shown + "' needs a value");
        continue;
      }
      value = words[++i].text;
    }
    if (value && value->empty() && spec->arg == Arg::kRequired) {
      fail(off, "option '" + shown + "' needs a value");
      continue;
    }

    if (const Reason why = spec->apply(value, req)) {
      fail(off, "invalid value '" + std::string(*value) + "' for '" + shown + "': " + *why);
      // `-ntasks=4` reads as `-n` with value `tasks=4`; point at the likely intent.
      if (w[1] != '-') {
        const std::string_view rest = std::string_view(w).substr(1);
        for (const auto& o : option_table()) {
          if (rest.substr(0, o.long_name.size()) == o.long_name &&
              (rest.size() == o.long_name.size() || rest[o.long_name.size()] == '=')) {
            diags.note(at(off), "did you mean '--" + std::string(o.long_name) + "'?");
            break;
          }
        }
      }
    }
  }
  return ok;
}

}  // namespace gcsim
