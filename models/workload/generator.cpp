#include "models/workload/generator.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>

#include "sim/core/diagnostics.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/yaml_check.hpp"
#include "sim/kernel/rng.hpp"
#include "sim/metrics/summary.hpp"
#include "sim/workload/job_request.hpp"
#include "sim/workload/slurm_time.hpp"

// The YAML schema (what generator_yaml writes and load_generator_yaml reads):
//
//   schema_version: 1
//   source: {path: "...", sha256: "...", format: "philly-json", jobs: 4206}   # optional
//   unix_start: 1505692800          # optional, epoch seconds of t=0, a whole hour
//   arrivals:
//     rate_per_hour: 2.04           # long-run mean, jobs per hour
//     hour_weights: [24 numbers]    # optional, hour 0 first (UTC); default flat
//     weekday_weights: [7 numbers]  # optional, Monday first; default flat
//   gpus_per_node: 8                # optional, default 8
//   gpu_mix:                        # exact GPU counts, relative weights
//     - {gpus: 4, weight: 1842}
//   durations:                      # by GPU size class, ascending max_gpus
//     - max_gpus: 2                 # omitted on the last class = no upper bound
//       lognormal: {mu: 7.9, sigma: 1.4}   # of ln(seconds)
//       fitted_jobs: 385            # optional
//       ln_quantiles: [...]         # optional empirical quantile function
//   users:                          # optional; or {count: N, accounts: M}
//     - {name: "u1", account: "a1", weight: 12}
//   time_limit: none                # or {factor: 1.5}
//   profiles:                       # optional; default 1gpu / 2-8gpu / multi-node
//     - {name: "1gpu", max_gpus: 1}

namespace gcsim {

namespace {

constexpr int64_t kHour = 3600;
constexpr int64_t kDay = 86400;
/// Default size-class bounds for fitting: 1, 2, 3-4, 5-8, 9-16, 17-32, more.
constexpr std::array<int64_t, 7> kClassBounds = {1, 2, 4, 8, 16, 32, 0};
/// Classes with fewer jobs keep only the log-normal: their quantiles are too noisy.
constexpr int64_t kMinJobsForQuantiles = 30;
constexpr int kQuantileKnots = 101;
/// Generated durations are capped at a year so a wide hand-written log-normal cannot
/// overflow simulated time.
constexpr double kMaxDurationSeconds = 365.0 * kDay;
constexpr double kPi = 3.14159265358979323846;

// --- shared by fit and generate ---------------------------------------------------------

/// Hour of day (0-23, UTC) and weekday (0 = Monday) of an absolute time in seconds.
/// Division rounding toward minus infinity, so times before the epoch fall into the right hour.
int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }
int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }
int hour_of(int64_t abs_s) { return static_cast<int>(floor_mod(floor_div(abs_s, kHour), 24)); }
int weekday_of(int64_t abs_s) {
  return static_cast<int>(floor_mod(floor_div(abs_s, kDay) + 3, 7));  // 1970-01-01 was a Thursday
}

/// The size class (or profile) index covering `gpus`: the first bound >= gpus, 0 = none.
template <typename T>
std::optional<size_t> covering(const std::vector<T>& items, int64_t gpus) {
  for (size_t i = 0; i < items.size(); ++i)
    if (items[i].max_gpus == 0 || gpus <= items[i].max_gpus) return i;
  return std::nullopt;
}

/// Fewest nodes N such that G splits evenly into N nodes of at most `per_node` GPUs.
int64_t nodes_for(int64_t gpus, int64_t per_node) {
  for (int64_t n = (gpus + per_node - 1) / per_node; n < gpus; ++n)
    if (gpus % n == 0 && gpus / n <= per_node) return n;
  return gpus;
}

std::string fmt_double(double v) {
  char buf[64];
  // Shortest text that reads back as the same double: exact round trips, readable files.
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string fmt_fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string size_class_label(int64_t lo, int64_t hi) {
  if (hi == 0) return ">" + std::to_string(lo - 1);
  if (lo == hi) return std::to_string(hi);
  return std::to_string(lo) + "-" + std::to_string(hi);
}

std::vector<GenProfile> profiles_of(const GenModel& m) {
  return m.profiles.empty() ? default_profiles(m.gpus_per_node) : m.profiles;
}

// --- fitting -----------------------------------------------------------------------------

struct FitJob {
  int64_t abs_s = 0;  // submit, seconds since the epoch (or since t=0 when unknown)
  int64_t gpus = 0;
  double ln_s = 0;    // ln of the duration in seconds, durations under 1 s read as 1 s
  const Job* job = nullptr;
};

template <size_t N>
std::array<double, N> normalised_rates(const std::array<double, N>& counts, const std::array<double, N>& exposure) {
  std::array<double, N> w{};
  double sum = 0;
  int seen = 0;
  for (size_t i = 0; i < N; ++i) {
    if (exposure[i] <= 0) continue;
    w[i] = counts[i] / exposure[i];
    sum += w[i];
    ++seen;
  }
  const double mean = sum / seen;
  for (size_t i = 0; i < N; ++i) w[i] = exposure[i] > 0 ? w[i] / mean : 1.0;
  return w;
}

void fit_arrivals(const Trace& t, const std::vector<FitJob>& jobs, GenModel& m, std::vector<std::string>& notes) {
  int64_t first = jobs.front().abs_s, last = first;
  for (const FitJob& j : jobs) {
    first = std::min(first, j.abs_s);
    last = std::max(last, j.abs_s);
  }
  const int64_t span = last - first;
  if (span < kHour)
    throw InputError(SourceLoc{t.path, 0, 0}, "cannot fit a generator: submit times span less than one hour");
  m.rate_per_hour = static_cast<double>(jobs.size()) * kHour / static_cast<double>(span);
  if (t.unix_start) m.unix_start = first - floor_mod(first, kDay);  // midnight UTC of the first day

  // Rate per hour of day and per weekday = submits there / time the trace spent there.
  std::array<double, 24> hour_n{}, hour_exp{};
  std::array<double, 7> day_n{}, day_exp{};
  for (int64_t s = first - floor_mod(first, kHour); s < last; s += kHour) {
    const double overlap = static_cast<double>(std::min(s + kHour, last) - std::max(s, first)) / kHour;
    hour_exp[hour_of(s)] += overlap;
    day_exp[weekday_of(s)] += overlap;
  }
  for (const FitJob& j : jobs) {
    hour_n[hour_of(j.abs_s)] += 1;
    day_n[weekday_of(j.abs_s)] += 1;
  }
  if (span >= 2 * kDay) {
    m.hour_weights = normalised_rates(hour_n, hour_exp);
  } else {
    notes.push_back("generator: the trace spans less than two days; hour-of-day weights are flat");
  }
  if (span >= 14 * kDay) {
    m.weekday_weights = normalised_rates(day_n, day_exp);
  } else {
    notes.push_back("generator: the trace spans less than two weeks; weekday weights are left out");
  }
}

void fit_gpu_mix(const std::vector<FitJob>& jobs, GenModel& m, std::vector<std::string>& notes) {
  std::map<int64_t, int64_t> counts;
  for (const FitJob& j : jobs) ++counts[j.gpus];
  for (const auto& [g, n] : counts) m.gpu_mix.push_back({g, static_cast<double>(n)});
  int64_t per_node = 0;
  for (const FitJob& j : jobs) per_node = std::max(per_node, job_gpus_per_node(*j.job));
  if (per_node > 0) {
    m.gpus_per_node = per_node;
  } else {
    notes.push_back("generator: no job names GPUs per node; gpus_per_node is 8");
  }
}

double mean_of(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / v.size(); }

/// Sample standard deviation; 0 for fewer than two values.
double sd_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double mu = mean_of(v);
  double ss = 0;
  for (double x : v) ss += (x - mu) * (x - mu);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

void fit_durations(const std::vector<FitJob>& jobs, GenModel& m, std::vector<std::string>& notes) {
  std::vector<std::vector<double>> by_class(kClassBounds.size());
  std::vector<double> all;
  for (const FitJob& j : jobs) {
    size_t c = 0;
    while (kClassBounds[c] != 0 && j.gpus > kClassBounds[c]) ++c;
    by_class[c].push_back(j.ln_s);
    all.push_back(j.ln_s);
  }
  const double pooled_sigma = sd_of(all);
  for (size_t c = 0; c < by_class.size(); ++c) {
    std::vector<double>& v = by_class[c];
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    DurationClass d;
    d.max_gpus = kClassBounds[c];
    d.mu = mean_of(v);
    d.sigma = v.size() >= 2 ? sd_of(v) : pooled_sigma;
    d.fitted_jobs = static_cast<int64_t>(v.size());
    if (d.fitted_jobs >= kMinJobsForQuantiles) {
      for (int i = 0; i < kQuantileKnots; ++i) d.ln_quantiles.push_back(quantile_sorted(v, i / 100.0));
    } else {
      const int64_t lo = m.durations.empty() ? 1 : m.durations.back().max_gpus + 1;
      notes.push_back("generator: GPU size class " + size_class_label(lo, d.max_gpus) + " has " +
                      std::to_string(d.fitted_jobs) + " jobs (< " + std::to_string(kMinJobsForQuantiles) +
                      "); its durations are a log-normal only" +
                      (v.size() < 2 ? ", with the whole trace's sigma" : ""));
    }
    m.durations.push_back(std::move(d));
  }
  m.durations.back().max_gpus = 0;  // the largest class takes any larger count
}

void fit_users(const std::vector<FitJob>& jobs, GenModel& m, std::vector<std::string>& notes) {
  std::map<std::string, std::map<std::string, int64_t>> per_user;  // user -> account -> jobs
  int64_t anonymous = 0;
  for (const FitJob& j : jobs) {
    if (j.job->user.empty()) {
      ++anonymous;
      continue;
    }
    ++per_user[j.job->user][j.job->account];
  }
  for (const auto& [user, accounts] : per_user) {
    // The user's most frequent account; ties go to the first name (map order).
    std::string account;
    int64_t best = -1, total = 0;
    for (const auto& [a, n] : accounts) {
      total += n;
      if (n > best) {
        best = n;
        account = a;
      }
    }
    m.users.push_back({user, account, static_cast<double>(total)});
  }
  if (anonymous > 0)
    notes.push_back("generator: " + std::to_string(anonymous) + " jobs have no user and do not shape the user mix");
  if (m.users.empty()) notes.push_back("generator: the trace names no users; generated jobs have none");
}

void fit_time_limit(const std::vector<FitJob>& jobs, GenModel& m, std::vector<std::string>& notes) {
  std::vector<double> ratios;
  for (const FitJob& j : jobs) {
    const auto& lim = j.job->req.time_limit;
    if (!lim || lim->is_infinite()) continue;
    ratios.push_back(lim->to_seconds() / std::max(1.0, j.job->duration.to_seconds()));
  }
  if (ratios.size() * 2 < jobs.size()) {
    notes.push_back("generator: " + std::to_string(ratios.size()) + " of " + std::to_string(jobs.size()) +
                    " jobs have a time limit; generated jobs ask for none");
    return;
  }
  std::sort(ratios.begin(), ratios.end());
  m.time_limit_factor = quantile_sorted(ratios, 0.5);
  notes.push_back("generator: time limit = duration x " + fmt_fixed(m.time_limit_factor, 3) +
                  " (the median limit/duration), rounded up to minutes");
}

// --- YAML writing -------------------------------------------------------------------------

std::string yaml_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

/// A flow list of numbers, eight to a line so quantile tables stay readable.
template <typename C>
std::string yaml_numbers(const C& values, const std::string& indent) {
  std::string out = "[";
  size_t i = 0;
  for (double v : values) {
    if (i > 0) out += (i % 8 == 0) ? ",\n" + indent : ", ";
    out += fmt_double(v);
    ++i;
  }
  return out + "]";
}

// --- YAML reading -------------------------------------------------------------------------

using Entry = YamlEntry;
using EntryMap = YamlMap;

const std::vector<std::string> kTopKeys = {"schema_version", "source",    "unix_start", "arrivals", "gpus_per_node",
                                           "gpu_mix",        "durations", "users",      "time_limit", "profiles"};
const std::vector<std::string> kSourceKeys = {"path", "sha256", "format", "jobs"};
const std::vector<std::string> kArrivalKeys = {"rate_per_hour", "hour_weights", "weekday_weights"};
const std::vector<std::string> kMixKeys = {"gpus", "weight"};
const std::vector<std::string> kClassKeys = {"max_gpus", "lognormal", "fitted_jobs", "ln_quantiles"};
const std::vector<std::string> kLognormalKeys = {"mu", "sigma"};
const std::vector<std::string> kUserKeys = {"name", "account", "weight"};
const std::vector<std::string> kUserCountKeys = {"count", "accounts"};
const std::vector<std::string> kTimeLimitKeys = {"factor"};
const std::vector<std::string> kProfileKeys = {"name", "max_gpus"};

class Loader : public YamlChecker {
 public:
  using YamlChecker::YamlChecker;

  void load(const YAML::Node& root, GenModel& m);

 private:
  bool scalar(const Entry& e, const std::string& expected) { return scalar_or_error(e, expected); }

  std::optional<std::string> get_string(const Entry& e, bool allow_empty) {
    if (!scalar(e, "a string")) return std::nullopt;
    if (!allow_empty && e.value.Scalar().empty()) {
      error(e.value, "empty value for " + quote(e.key));
      return std::nullopt;
    }
    return e.value.Scalar();
  }

  std::optional<int64_t> get_int(const Entry& e, int64_t min) {
    if (!scalar(e, "an integer")) return std::nullopt;
    const std::string& s = e.value.Scalar();
    int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || ptr != s.data() + s.size()) {
      error(e.value, "expected an integer for " + quote(e.key) + ", got " + quote(s));
      return std::nullopt;
    }
    if (v < min) {
      error(e.value, quote(e.key) + " must be at least " + std::to_string(min) + ", got " + s);
      return std::nullopt;
    }
    return v;
  }

  std::optional<double> parse_number(const YAML::Node& n, const std::string& key) {
    const std::string s = n.IsScalar() ? n.Scalar() : std::string();
    double v = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (!n.IsScalar() || s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v)) {
      error(n, "expected a number in " + quote(key) + ", got " + describe(n));
      return std::nullopt;
    }
    return v;
  }

  /// A number; `positive` rejects zero as well as negatives.
  std::optional<double> get_number(const Entry& e, bool non_negative, bool positive = false) {
    if (!scalar(e, "a number")) return std::nullopt;
    auto v = parse_number(e.value, e.key);
    if (!v) return std::nullopt;
    if ((positive && *v <= 0) || (non_negative && *v < 0)) {
      error(e.value, quote(e.key) + " must be " + (positive ? "positive" : "non-negative") + ", got " +
                         e.value.Scalar());
      return std::nullopt;
    }
    return v;
  }

  /// A list of numbers, exactly `n` of them (0 = any count).
  std::optional<std::vector<double>> get_numbers(const Entry& e, size_t n) {
    if (!e.value.IsSequence()) {
      error(at(e), "expected a list of numbers for " + quote(e.key) + ", got " + describe(e.value));
      return std::nullopt;
    }
    std::vector<double> out;
    for (const auto& item : e.value) {
      auto v = parse_number(item, e.key);
      if (!v) return std::nullopt;
      out.push_back(*v);
    }
    if (n != 0 && out.size() != n) {
      error(e.value, quote(e.key) + " needs " + std::to_string(n) + " numbers, got " + std::to_string(out.size()));
      return std::nullopt;
    }
    return out;
  }

  bool weights_ok(const Entry& e, const std::vector<double>& w) {
    double sum = 0;
    for (double x : w) {
      if (x < 0) {
        error(e.value, quote(e.key) + " must not be negative");
        return false;
      }
      sum += x;
    }
    if (sum <= 0) error(e.value, quote(e.key) + " must not be all zero");
    return sum > 0;
  }

  std::optional<std::vector<YAML::Node>> list_of(const Entry& e) {
    if (!e.value.IsSequence() || e.value.size() == 0) {
      error(at(e), "expected a non-empty list for " + quote(e.key) + ", got " + describe(e.value));
      return std::nullopt;
    }
    std::vector<YAML::Node> out;
    for (const auto& item : e.value) out.push_back(item);
    return out;
  }

  void load_source(const Entry& e, GenModel& m);
  void load_arrivals(const Entry& e, GenModel& m);
  void load_mix(const Entry& e, GenModel& m);
  void load_durations(const Entry& e, GenModel& m);
  void load_class(const YAML::Node& node, bool last, GenModel& m);
  void load_users(const Entry& e, GenModel& m);
  void load_time_limit(const Entry& e, GenModel& m);
  void load_profiles(const Entry& e, GenModel& m);
  /// Every GPU count of the mix must fall into a duration class and a profile.
  void check_coverage(const GenModel& m);

  std::vector<YAML::Node> mix_gpus_nodes_;  // the `gpus` value of each mix entry, for coverage errors
  bool durations_ok_ = false;
  bool profiles_ok_ = true;
};

void Loader::load(const YAML::Node& root, GenModel& m) {
  if (root.IsNull()) {
    diags_.error({path_, 0, 0}, "empty generator model");
    return;
  }
  if (!root.IsMap()) {
    error(root, "expected a map at the top level, got " + describe(root));
    return;
  }
  const EntryMap top = map_of(root, "generator model", kTopKeys);
  if (const Entry* e = require(top, root, "schema_version", "generator model"))
    if (auto v = get_int(*e, 0); v && *v != 1)
      error(e->value, "unsupported schema_version " + std::to_string(*v) + " (this gcsim reads 1)");
  if (const Entry* e = find(top, "source")) load_source(*e, m);
  if (const Entry* e = find(top, "unix_start")) {
    if (auto v = get_int(*e, 0)) {
      if (*v % kHour != 0)
        error(e->value, "'unix_start' must be a whole hour (UTC), got " + std::to_string(*v));
      else
        m.unix_start = *v;
    }
  }
  if (const Entry* e = require(top, root, "arrivals", "generator model")) load_arrivals(*e, m);
  if (const Entry* e = find(top, "gpus_per_node"))
    if (auto v = get_int(*e, 1)) m.gpus_per_node = *v;
  if (const Entry* e = require(top, root, "gpu_mix", "generator model")) load_mix(*e, m);
  if (const Entry* e = require(top, root, "durations", "generator model")) load_durations(*e, m);
  if (const Entry* e = find(top, "users")) load_users(*e, m);
  if (const Entry* e = find(top, "time_limit")) load_time_limit(*e, m);
  if (const Entry* e = find(top, "profiles")) load_profiles(*e, m);
  check_coverage(m);
}

void Loader::load_source(const Entry& e, GenModel& m) {
  const EntryMap s = map_of(e.value, "'source'", kSourceKeys);
  if (const Entry* x = find(s, "path"))
    if (auto v = get_string(*x, true)) m.source_path = *v;
  if (const Entry* x = find(s, "sha256"))
    if (auto v = get_string(*x, true)) m.source_sha256 = *v;
  if (const Entry* x = find(s, "format"))
    if (auto v = get_string(*x, true)) m.source_format = *v;
  if (const Entry* x = find(s, "jobs"))
    if (auto v = get_int(*x, 0)) m.source_jobs = *v;
}

void Loader::load_arrivals(const Entry& e, GenModel& m) {
  const EntryMap a = map_of(e.value, "'arrivals'", kArrivalKeys);
  if (const Entry* x = require(a, e.value, "rate_per_hour", "'arrivals'"))
    if (auto v = get_number(*x, true, true)) m.rate_per_hour = *v;
  if (const Entry* x = find(a, "hour_weights"))
    if (auto w = get_numbers(*x, 24); w && weights_ok(*x, *w)) std::copy(w->begin(), w->end(), m.hour_weights.begin());
  if (const Entry* x = find(a, "weekday_weights")) {
    if (auto w = get_numbers(*x, 7); w && weights_ok(*x, *w)) {
      m.weekday_weights.emplace();
      std::copy(w->begin(), w->end(), m.weekday_weights->begin());
    }
  }
}

void Loader::load_mix(const Entry& e, GenModel& m) {
  const auto items = list_of(e);
  if (!items) return;
  std::map<int64_t, int> first_line;
  for (const YAML::Node& item : *items) {
    const EntryMap x = map_of(item, "a 'gpu_mix' entry", kMixKeys);
    if (!item.IsMap()) continue;
    const Entry* g = require(x, item, "gpus", "a 'gpu_mix' entry");
    const Entry* w = require(x, item, "weight", "a 'gpu_mix' entry");
    if (!g || !w) continue;
    auto gpus = get_int(*g, 1);
    auto weight = get_number(*w, true, true);
    if (!gpus || !weight) continue;
    if (auto prev = first_line.find(*gpus); prev != first_line.end()) {
      error(g->value, "GPU count " + std::to_string(*gpus) + " is listed twice in 'gpu_mix' (first at line " +
                          std::to_string(prev->second) + ")");
      continue;
    }
    first_line[*gpus] = g->value.Mark().line + 1;
    m.gpu_mix.push_back({*gpus, *weight});
    mix_gpus_nodes_.push_back(g->value);
  }
}

void Loader::load_durations(const Entry& e, GenModel& m) {
  const auto items = list_of(e);
  if (!items) return;
  const size_t before = diags_.error_count();
  for (size_t i = 0; i < items->size(); ++i) load_class((*items)[i], i + 1 == items->size(), m);
  durations_ok_ = diags_.error_count() == before;
}

void Loader::load_class(const YAML::Node& node, bool last, GenModel& m) {
  const std::string what = "a 'durations' class";
  const EntryMap x = map_of(node, what, kClassKeys);
  if (!node.IsMap()) return;
  DurationClass c;
  if (const Entry* b = find(x, "max_gpus")) {
    auto v = get_int(*b, 1);
    if (!v) return;
    if (!m.durations.empty() && (m.durations.back().max_gpus == 0 || *v <= m.durations.back().max_gpus)) {
      error(b->value, "'max_gpus' must grow from class to class, got " + std::to_string(*v) + " after " +
                          std::to_string(m.durations.back().max_gpus));
      return;
    }
    c.max_gpus = *v;
  } else if (!last) {
    error(node, "missing required key 'max_gpus' in " + what + " (only the last class may omit it)");
    return;
  }
  if (const Entry* l = require(x, node, "lognormal", what)) {
    const EntryMap ln = map_of(l->value, "'lognormal'", kLognormalKeys);
    const Entry* mu = require(ln, l->value, "mu", "'lognormal'");
    const Entry* sigma = require(ln, l->value, "sigma", "'lognormal'");
    if (mu)
      if (auto v = get_number(*mu, false)) c.mu = *v;
    if (sigma)
      if (auto v = get_number(*sigma, true)) c.sigma = *v;
  }
  if (const Entry* f = find(x, "fitted_jobs"))
    if (auto v = get_int(*f, 0)) c.fitted_jobs = *v;
  if (const Entry* q = find(x, "ln_quantiles")) {
    if (auto v = get_numbers(*q, 0)) {
      if (v->size() < 2) {
        error(q->value, "'ln_quantiles' needs at least 2 numbers, got " + std::to_string(v->size()));
      } else if (!std::is_sorted(v->begin(), v->end())) {
        error(q->value, "'ln_quantiles' must not decrease");
      } else {
        c.ln_quantiles = std::move(*v);
      }
    }
  }
  m.durations.push_back(std::move(c));
}

void Loader::load_users(const Entry& e, GenModel& m) {
  if (e.value.IsMap()) {  // {count: N, accounts: M}: users u1..uN, accounts round robin
    const EntryMap x = map_of(e.value, "'users'", kUserCountKeys);
    const Entry* c = require(x, e.value, "count", "'users'");
    const std::optional<int64_t> count = c ? get_int(*c, 1) : std::nullopt;
    int64_t accounts = 1;
    if (const Entry* a = find(x, "accounts")) {
      auto v = get_int(*a, 1);
      if (!v) return;
      accounts = *v;
    }
    const int64_t n = count.value_or(0);
    for (int64_t i = 0; i < n; ++i)
      m.users.push_back({"u" + std::to_string(i + 1), "a" + std::to_string(i % accounts + 1), 1.0});
    return;
  }
  const auto items = list_of(e);
  if (!items) return;
  std::map<std::string, int> first_line;
  for (const YAML::Node& item : *items) {
    const EntryMap x = map_of(item, "a 'users' entry", kUserKeys);
    if (!item.IsMap()) continue;
    GenUser u;
    const Entry* n = require(x, item, "name", "a 'users' entry");
    if (!n) continue;
    auto name = get_string(*n, false);
    if (!name) continue;
    if (auto prev = first_line.find(*name); prev != first_line.end()) {
      error(n->value, "user " + quote(*name) + " is listed twice (first at line " + std::to_string(prev->second) + ")");
      continue;
    }
    first_line[*name] = n->value.Mark().line + 1;
    u.name = *name;
    if (const Entry* a = find(x, "account"))
      if (auto v = get_string(*a, true)) u.account = *v;
    if (const Entry* w = find(x, "weight")) {
      auto v = get_number(*w, true, true);
      if (!v) continue;
      u.weight = *v;
    }
    m.users.push_back(std::move(u));
  }
}

void Loader::load_time_limit(const Entry& e, GenModel& m) {
  if (e.value.IsScalar()) {
    if (e.value.Scalar() != "none")
      error(e.value, "expected 'none' or {factor: F} for 'time_limit', got " + describe(e.value));
    return;
  }
  const EntryMap x = map_of(e.value, "'time_limit'", kTimeLimitKeys);
  if (const Entry* f = require(x, e.value, "factor", "'time_limit'"))
    if (auto v = get_number(*f, true, true)) m.time_limit_factor = *v;
}

void Loader::load_profiles(const Entry& e, GenModel& m) {
  const auto items = list_of(e);
  if (!items) {
    profiles_ok_ = false;
    return;
  }
  const size_t before = diags_.error_count();
  for (size_t i = 0; i < items->size(); ++i) {
    const YAML::Node& node = (*items)[i];
    const EntryMap x = map_of(node, "a 'profiles' entry", kProfileKeys);
    if (!node.IsMap()) continue;
    GenProfile p;
    if (const Entry* n = require(x, node, "name", "a 'profiles' entry")) {
      auto v = get_string(*n, false);
      if (!v) continue;
      p.name = *v;
    }
    if (const Entry* b = find(x, "max_gpus")) {
      auto v = get_int(*b, 1);
      if (!v) continue;
      if (!m.profiles.empty() && (m.profiles.back().max_gpus == 0 || *v <= m.profiles.back().max_gpus)) {
        error(b->value, "'max_gpus' must grow from profile to profile, got " + std::to_string(*v) + " after " +
                            std::to_string(m.profiles.back().max_gpus));
        continue;
      }
      p.max_gpus = *v;
    } else if (i + 1 != items->size()) {
      error(node, "missing required key 'max_gpus' in a 'profiles' entry (only the last may omit it)");
      continue;
    }
    m.profiles.push_back(std::move(p));
  }
  profiles_ok_ = diags_.error_count() == before;
}

void Loader::check_coverage(const GenModel& m) {
  const std::vector<GenProfile> profiles = profiles_of(m);
  for (size_t i = 0; i < m.gpu_mix.size(); ++i) {
    const int64_t g = m.gpu_mix[i].gpus;
    if (durations_ok_ && !covering(m.durations, g))
      error(mix_gpus_nodes_[i], "no duration class covers " + std::to_string(g) + " GPUs (the last ends at " +
                                    std::to_string(m.durations.back().max_gpus) +
                                    "; omit its 'max_gpus' to take any larger count)");
    if (profiles_ok_ && !covering(profiles, g))
      error(mix_gpus_nodes_[i], "no profile covers " + std::to_string(g) + " GPUs (the last ends at " +
                                    std::to_string(profiles.back().max_gpus) +
                                    "; omit its 'max_gpus' to take any larger count)");
  }
}

// --- generation --------------------------------------------------------------------------

/// What makes a model unusable, "" when it is fine (models built in code skip the loader).
std::string model_problem(const GenModel& m) {
  if (!(m.rate_per_hour > 0) || !std::isfinite(m.rate_per_hour)) return "rate_per_hour must be positive";
  auto bad_weights = [](const auto& w) {
    double sum = 0;
    for (double x : w) {
      if (!(x >= 0) || !std::isfinite(x)) return true;
      sum += x;
    }
    return !(sum > 0);
  };
  if (bad_weights(m.hour_weights)) return "hour weights must be non-negative and not all zero";
  if (m.weekday_weights && bad_weights(*m.weekday_weights)) return "weekday weights must be non-negative and not all zero";
  if (m.unix_start && *m.unix_start % kHour != 0) return "unix_start must be a whole hour";
  if (m.gpus_per_node < 1) return "gpus_per_node must be at least 1";
  if (m.gpu_mix.empty()) return "the GPU mix is empty";
  const std::vector<GenProfile> profiles = profiles_of(m);
  for (const GpuShare& s : m.gpu_mix) {
    if (s.gpus < 1 || !(s.weight > 0)) return "GPU mix entries need gpus >= 1 and a positive weight";
    if (!covering(m.durations, s.gpus)) return "no duration class covers " + std::to_string(s.gpus) + " GPUs";
    if (!covering(profiles, s.gpus)) return "no profile covers " + std::to_string(s.gpus) + " GPUs";
  }
  for (const DurationClass& c : m.durations)
    if (!(c.sigma >= 0) || c.ln_quantiles.size() == 1) return "a duration class has sigma < 0 or one quantile";
  for (const GenUser& u : m.users)
    if (!(u.weight > 0)) return "user weights must be positive";
  if (!(m.time_limit_factor >= 0)) return "time_limit_factor must not be negative";
  return "";
}

/// Piecewise-constant Poisson arrivals, exact: a unit exponential is spent across
/// hour slots at each slot's rate, so no thinning and one draw per arrival.
class ArrivalClock {
 public:
  ArrivalClock(const GenModel& m, double scale) : origin_(m.unix_start.value_or(0)) {
    const double hour_mean = std::accumulate(m.hour_weights.begin(), m.hour_weights.end(), 0.0) / 24;
    double day_mean = 1;
    std::array<double, 7> days{1, 1, 1, 1, 1, 1, 1};
    if (m.weekday_weights) {
      days = *m.weekday_weights;
      day_mean = std::accumulate(days.begin(), days.end(), 0.0) / 7;
    }
    for (int d = 0; d < 7; ++d)
      for (int h = 0; h < 24; ++h)
        rate_[d][h] = m.rate_per_hour * scale * (m.hour_weights[h] / hour_mean) * (days[d] / day_mean);
  }

  /// The next arrival, in whole seconds since t=0 (rounded down so it stays in its hour).
  int64_t next(RngStream& rng) {
    double budget = rng.exponential(1.0);
    while (true) {
      const int64_t abs = origin_ + slot_ * kHour;
      const double rate = rate_[weekday_of(abs)][hour_of(abs)];
      const double room = rate * (1.0 - frac_);
      if (budget < room) {
        frac_ = std::min(frac_ + budget / rate, std::nextafter(1.0, 0.0));
        break;
      }
      budget -= room;
      ++slot_;
      frac_ = 0;
    }
    return slot_ * kHour + std::min<int64_t>(kHour - 1, static_cast<int64_t>(frac_ * kHour));
  }

 private:
  int64_t origin_;
  int64_t slot_ = 0;   // hour slot since t=0
  double frac_ = 0;    // position inside the slot, [0, 1)
  double rate_[7][24]; // jobs per hour by weekday and hour
};

/// Index drawn from cumulative weights.
size_t pick(const std::vector<double>& cumulative, double u) {
  const double x = u * cumulative.back();
  const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), x);
  return std::min<size_t>(static_cast<size_t>(it - cumulative.begin()), cumulative.size() - 1);
}

template <typename T, typename F>
std::vector<double> cumulative_of(const std::vector<T>& items, F weight) {
  std::vector<double> out;
  double sum = 0;
  for (const T& x : items) out.push_back(sum += weight(x));
  return out;
}

/// ln(seconds) for the class. Two uniforms are drawn for every job whatever the form,
/// so editing one class never shifts the duration draws of later jobs.
double draw_ln_seconds(const DurationClass& c, RngStream& rng) {
  const double u1 = rng.uniform();
  const double u2 = rng.uniform();
  if (c.ln_quantiles.size() >= 2) {
    const double h = u1 * static_cast<double>(c.ln_quantiles.size() - 1);
    const size_t i = std::min(static_cast<size_t>(h), c.ln_quantiles.size() - 2);
    return c.ln_quantiles[i] + (h - static_cast<double>(i)) * (c.ln_quantiles[i + 1] - c.ln_quantiles[i]);
  }
  // Box-Muller; 1 - u1 lies in (0, 1], so the log is finite.
  const double z = std::sqrt(-2.0 * std::log1p(-u1)) * std::cos(2.0 * kPi * u2);
  return c.mu + c.sigma * z;
}

/// Model seconds to simulated time: whole seconds, rounded up, at least one second.
SimTime duration_from_ln(double ln_s) {
  const double s = std::exp(std::min(ln_s, std::log(kMaxDurationSeconds)));
  return SimTime::from_seconds_ceil(std::max(1.0, std::ceil(s)));
}

/// --time: duration x factor, rounded up to whole minutes.
SimTime time_limit_for(SimTime duration, double factor) {
  const double minutes = std::ceil(duration.to_seconds() * factor / 60.0);
  return SimTime::minutes(std::max<int64_t>(1, static_cast<int64_t>(minutes)));
}

Job make_job(int64_t n, int64_t submit_s, int64_t gpus, const GenModel& m, const std::string& profile) {
  Job j;
  j.id = JobId(n);
  j.name = "gen-" + std::to_string(n) + ":" + profile;
  j.profile = profile;
  j.submit = SimTime::seconds(submit_s);
  // The Philly reader's shape: --nodes=N --gpus-per-node=G/N --ntasks=G.
  const int64_t nodes = nodes_for(gpus, m.gpus_per_node);
  j.req.nodes_min = j.req.nodes_max = static_cast<int>(nodes);
  j.req.gpus_per_node = GresRequest{"gpu", "", gpus / nodes};
  j.req.ntasks = static_cast<int>(gpus);
  j.recorded_gpus = gpus;
  return j;
}

std::string mix_summary(const GenModel& m) {
  double total = 0;
  for (const GpuShare& s : m.gpu_mix) total += s.weight;
  std::vector<GpuShare> top = m.gpu_mix;
  std::stable_sort(top.begin(), top.end(), [](const GpuShare& a, const GpuShare& b) { return a.weight > b.weight; });
  std::string out = std::to_string(m.gpu_mix.size()) + " GPU counts";
  for (size_t i = 0; i < top.size() && i < 4; ++i)
    out += (i == 0 ? ", most common " : ", ") + std::to_string(top[i].gpus) + " (" +
           fmt_fixed(100.0 * top[i].weight / total, 1) + "%)";
  return out;
}

std::string durations_summary(const GenModel& m) {
  std::string out = "durations by GPU size class:";
  int64_t lo = 1;
  for (const DurationClass& c : m.durations) {
    out += " " + size_class_label(lo, c.max_gpus) + ": ";
    out += c.ln_quantiles.size() >= 2 ? "empirical quantiles (median " + fmt_fixed(std::exp(c.ln_quantiles[c.ln_quantiles.size() / 2]), 0) + " s)"
                                      : "log-normal mu=" + fmt_fixed(c.mu, 3) + " sigma=" + fmt_fixed(c.sigma, 3);
    if (c.fitted_jobs > 0) out += " from " + std::to_string(c.fitted_jobs) + " jobs";
    out += ";";
    lo = c.max_gpus + 1;
  }
  out.pop_back();
  return out;
}

}  // namespace

std::vector<GenProfile> default_profiles(int64_t gpus_per_node) {
  return {{"1gpu", 1}, {"2-" + std::to_string(gpus_per_node) + "gpu", std::max<int64_t>(2, gpus_per_node)}, {"multi-node", 0}};
}

GenModel fit_generator(const Trace& t, std::vector<std::string>& notes) {
  GenModel m;
  m.source_path = t.path;
  m.source_format = t.format;
  m.source_jobs = static_cast<int64_t>(t.jobs.size());
  if (!t.path.empty()) {
    try {
      m.source_sha256 = file_sha256(t.path);
    } catch (const InputError&) {
      notes.push_back("generator: cannot read " + t.path + " to record its SHA-256");
    }
  }
  if (!t.unix_start) notes.push_back("generator: the trace has no absolute start; hours and weekdays count from t=0");

  std::vector<FitJob> jobs;
  int64_t cpu_only = 0, sub_second = 0;
  for (const Job& j : t.jobs) {
    FitJob f;
    f.gpus = job_gpus(j);
    if (f.gpus <= 0) {
      ++cpu_only;
      continue;
    }
    f.abs_s = t.unix_start.value_or(0) + j.submit.whole_seconds();
    const double s = j.duration.to_seconds();
    if (s < 1) ++sub_second;
    f.ln_s = std::log(std::max(1.0, s));
    f.job = &j;
    jobs.push_back(f);
  }
  if (jobs.empty()) throw InputError(SourceLoc{t.path, 0, 0}, "cannot fit a generator: the trace has no GPU jobs");
  if (cpu_only > 0) notes.push_back("generator: " + std::to_string(cpu_only) + " jobs without GPUs are left out of the model");
  if (sub_second > 0)
    notes.push_back("generator: " + std::to_string(sub_second) + " jobs ran under a second; their durations count as 1 s");

  fit_arrivals(t, jobs, m, notes);
  fit_gpu_mix(jobs, m, notes);
  fit_durations(jobs, m, notes);
  fit_users(jobs, m, notes);
  fit_time_limit(jobs, m, notes);
  m.profiles = default_profiles(m.gpus_per_node);
  return m;
}

std::string generator_yaml(const GenModel& m) {
  std::string y = "# gcsim workload generator model (gcsim trace gen); schema in models/workload/generator.cpp\n";
  y += "schema_version: 1\n";
  if (!m.source_path.empty() || !m.source_sha256.empty() || !m.source_format.empty() || m.source_jobs != 0) {
    y += "source:\n";
    y += "  path: " + yaml_string(m.source_path) + "\n";
    y += "  sha256: " + yaml_string(m.source_sha256) + "\n";
    y += "  format: " + yaml_string(m.source_format) + "\n";
    y += "  jobs: " + std::to_string(m.source_jobs) + "\n";
  }
  if (m.unix_start)
    y += "unix_start: " + std::to_string(*m.unix_start) + "  # " + slurm_time::format_iso(*m.unix_start) + " UTC\n";
  y += "arrivals:\n";
  y += "  rate_per_hour: " + fmt_double(m.rate_per_hour) + "\n";
  y += "  hour_weights: " + yaml_numbers(m.hour_weights, "    ") + "\n";
  if (m.weekday_weights) y += "  weekday_weights: " + yaml_numbers(*m.weekday_weights, "    ") + "\n";
  y += "gpus_per_node: " + std::to_string(m.gpus_per_node) + "\n";
  y += "gpu_mix:\n";
  for (const GpuShare& s : m.gpu_mix)
    y += "  - {gpus: " + std::to_string(s.gpus) + ", weight: " + fmt_double(s.weight) + "}\n";
  y += "durations:\n";
  for (const DurationClass& c : m.durations) {
    y += "  - ";
    if (c.max_gpus != 0) y += "max_gpus: " + std::to_string(c.max_gpus) + "\n    ";
    y += "lognormal: {mu: " + fmt_double(c.mu) + ", sigma: " + fmt_double(c.sigma) + "}\n";
    if (c.fitted_jobs != 0) y += "    fitted_jobs: " + std::to_string(c.fitted_jobs) + "\n";
    if (!c.ln_quantiles.empty()) y += "    ln_quantiles: " + yaml_numbers(c.ln_quantiles, "      ") + "\n";
  }
  if (!m.users.empty()) {
    y += "users:\n";
    for (const GenUser& u : m.users)
      y += "  - {name: " + yaml_string(u.name) + ", account: " + yaml_string(u.account) +
           ", weight: " + fmt_double(u.weight) + "}\n";
  }
  y += m.time_limit_factor > 0 ? "time_limit: {factor: " + fmt_double(m.time_limit_factor) + "}\n" : "time_limit: none\n";
  if (!m.profiles.empty()) {
    y += "profiles:\n";
    for (const GenProfile& p : m.profiles) {
      y += "  - {name: " + yaml_string(p.name);
      if (p.max_gpus != 0) y += ", max_gpus: " + std::to_string(p.max_gpus);
      y += "}\n";
    }
  }
  return y;
}

GenModel parse_generator_yaml(const std::string& text, const std::string& path) {
  GenModel m;
  load_yaml_checked(text, path, [&](const YAML::Node& root, Diagnostics& diags) { Loader(path, diags).load(root, m); });
  return m;
}

GenModel load_generator_yaml(const std::string& path) { return parse_generator_yaml(read_input_file(path), path); }

Trace generate_trace(const GenModel& m, const GenOptions& o) {
  if (const std::string p = model_problem(m); !p.empty()) throw std::invalid_argument("generator model: " + p);
  if (o.jobs <= 0 && o.span <= SimTime{}) throw std::invalid_argument("generate_trace: set a job count or a span");
  if (!(o.scale_arrivals > 0) || !std::isfinite(o.scale_arrivals))
    throw std::invalid_argument("generate_trace: scale_arrivals must be positive");

  RngStream arrivals(o.seed, "gen.arrivals"), size(o.seed, "gen.size"), duration(o.seed, "gen.duration"),
      user(o.seed, "gen.user");
  ArrivalClock clock(m, o.scale_arrivals);
  const auto mix_cum = cumulative_of(m.gpu_mix, [](const GpuShare& s) { return s.weight; });
  const auto user_cum = cumulative_of(m.users, [](const GenUser& u) { return u.weight; });
  const std::vector<GenProfile> profiles = profiles_of(m);

  Trace t;
  t.path = "<generated>";
  t.format = "generated";
  t.unix_start = m.unix_start;
  for (int64_t n = 1; o.jobs <= 0 || n <= o.jobs; ++n) {
    const int64_t submit_s = clock.next(arrivals);
    if (o.span > SimTime{} && SimTime::seconds(submit_s) >= o.span) break;
    const int64_t gpus = m.gpu_mix[pick(mix_cum, size.uniform())].gpus;
    Job j = make_job(n, submit_s, gpus, m, profiles[*covering(profiles, gpus)].name);
    j.duration = duration_from_ln(draw_ln_seconds(m.durations[*covering(m.durations, gpus)], duration));
    if (m.time_limit_factor > 0) j.req.time_limit = time_limit_for(j.duration, m.time_limit_factor);
    if (!m.users.empty()) {
      const GenUser& u = m.users[pick(user_cum, user.uniform())];
      j.user = u.name;
      j.account = j.req.account = u.account;
    }
    t.jobs.push_back(std::move(j));
  }
  t.assumptions = generator_provenance(m, o);
  t.assumptions.push_back("generated " + std::to_string(t.jobs.size()) + " jobs");
  return t;
}

std::vector<std::string> generator_provenance(const GenModel& m, const GenOptions& o) {
  std::vector<std::string> out;
  if (!m.source_path.empty()) {
    out.push_back("fitted from " + m.source_path + " (" + (m.source_format.empty() ? "" : m.source_format + ", ") +
                  std::to_string(m.source_jobs) + " jobs, sha256 " +
                  (m.source_sha256.empty() ? "unknown" : m.source_sha256) + ")");
  } else {
    out.push_back("model written by hand (no source trace)");
  }
  std::string what = "seed " + std::to_string(o.seed);
  if (o.jobs > 0) what += ", " + std::to_string(o.jobs) + " jobs";
  if (o.span > SimTime{}) what += ", span " + std::to_string(o.span.whole_seconds()) + " s";
  if (o.scale_arrivals != 1.0) what += ", arrivals scaled x" + fmt_double(o.scale_arrivals);
  out.push_back("generator: " + what);
  out.push_back("arrivals: Poisson, mean " + fmt_fixed(m.rate_per_hour * o.scale_arrivals, 4) +
                " jobs/hour, hour-of-day weights" + (m.weekday_weights ? " x weekday weights" : "") +
                (m.unix_start ? ", t=0 is " + slurm_time::format_iso(*m.unix_start) + " UTC"
                              : ", t=0 is read as 1970-01-01 00:00 UTC"));
  out.push_back("GPU mix: " + mix_summary(m));
  out.push_back("requests: --nodes=N --gpus-per-node=G/N --ntasks=G with the fewest nodes of at most " +
                std::to_string(m.gpus_per_node) + " GPUs that split G evenly");
  out.push_back(durations_summary(m));
  std::map<std::string, int> accounts;
  for (const GenUser& u : m.users) ++accounts[u.account];
  out.push_back("users: " + std::to_string(m.users.size()) + " users in " + std::to_string(accounts.size()) +
                " accounts");
  out.push_back(m.time_limit_factor > 0
                    ? "time limit: duration x " + fmt_double(m.time_limit_factor) + ", rounded up to minutes"
                    : "time limit: none requested");
  std::string prof = "profiles (by GPU count, name suffix after ':'):";
  for (const GenProfile& p : profiles_of(m))
    prof += " " + p.name + (p.max_gpus ? " <= " + std::to_string(p.max_gpus) : std::string(" otherwise")) + ";";
  prof.pop_back();
  out.push_back(prof);
  return out;
}

std::string_view generated_profile(const Job& j) {
  const std::string_view name = j.name;
  const size_t colon = name.find(':');
  return colon == std::string_view::npos ? std::string_view() : name.substr(colon + 1);
}

}  // namespace gcsim
