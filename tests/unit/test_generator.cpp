// The synthetic workload generator: fitted to the real Philly sample it reproduces the
// GPU-count mix, duration quantiles and arrival rate; seeded determinism; YAML round
// trip and diagnostics; the diurnal cycle.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "models/workload/generator.hpp"
#include "sim/core/diagnostics.hpp"
#include "sim/core/input_file.hpp"
#include "sim/workload/gpu_trace_readers.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;
using gcsim::test::src;
namespace fs = std::filesystem;

namespace {

const Trace& philly() {
  static const Trace t = [] {
    Diagnostics d;
    return read_philly_json(src("tests/data/traces/philly/philly_sampled_jobs_4206.json.gz"), d);
  }();
  return t;
}

/// GPUs a job asks for: --gpus, else --nodes x --gpus-per-node (the Philly reader's and
/// the generator's shape), else what the trace recorded.
int64_t request_gpus(const Job& j) {
  if (j.req.gpus) return j.req.gpus->count;
  if (j.req.gpus_per_node) return j.req.gpus_per_node->count * j.req.nodes_min.value_or(1);
  return j.recorded_gpus;
}

struct Bucket {
  const char* label;
  int64_t lo, hi;  // inclusive; hi 0 = no bound
};
const Bucket kBuckets[] = {{"1", 1, 1},     {"2", 2, 2},       {"3-4", 3, 4}, {"5-8", 5, 8},
                           {"9-16", 9, 16}, {"17-32", 17, 32}, {">32", 33, 0}};

std::vector<double> bucket_shares(const Trace& t) {
  std::vector<double> share(std::size(kBuckets), 0.0);
  for (const Job& j : t.jobs) {
    const int64_t g = request_gpus(j);
    for (size_t b = 0; b < std::size(kBuckets); ++b)
      if (g >= kBuckets[b].lo && (kBuckets[b].hi == 0 || g <= kBuckets[b].hi)) share[b] += 1;
  }
  for (double& s : share) s /= static_cast<double>(t.jobs.size());
  return share;
}

/// Linear-interpolation quantile (type 7) of the durations, in seconds.
double duration_quantile(const Trace& t, double p) {
  std::vector<double> d;
  for (const Job& j : t.jobs) d.push_back(j.duration.to_seconds());
  std::sort(d.begin(), d.end());
  const double h = p * static_cast<double>(d.size() - 1);
  const size_t lo = static_cast<size_t>(h);
  if (lo + 1 >= d.size()) return d.back();
  return d[lo] + (h - static_cast<double>(lo)) * (d[lo + 1] - d[lo]);
}

double jobs_per_day(const Trace& t) {
  SimTime first = t.jobs.front().submit, last = first;
  for (const Job& j : t.jobs) {
    first = std::min(first, j.submit);
    last = std::max(last, j.submit);
  }
  return static_cast<double>(t.jobs.size()) / ((last - first).to_seconds() / 86400.0);
}

/// Everything about each job the generator sets, one line per job.
std::string dump(const Trace& t) {
  std::string out;
  for (const Job& j : t.jobs) {
    out += std::to_string(j.id.value) + " " + j.name + " " + j.user + " " + j.account + " " +
           std::to_string(j.submit.count_us()) + " " + std::to_string(j.duration.count_us()) + " " +
           std::to_string(*j.req.nodes_min) + "x" + std::to_string(j.req.gpus_per_node->count) + " " +
           std::to_string(j.req.time_limit ? j.req.time_limit->count_us() : -1) + "\n";
  }
  return out;
}

std::string pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%6.2f%%", 100 * v);
  return buf;
}

std::string num(double v, int digits = 0) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%9.*f", digits, v);
  return buf;
}

/// The diagnostics a model text produces, formatted; "" when it loads.
std::string diagnostics_of(const std::string& text, const std::string& path) {
  try {
    (void)parse_generator_yaml(text, path);
  } catch (const InputError& e) {
    return e.diagnostics().format();
  }
  return "";
}

/// A small hand-made model: one GPU count, one log-normal class.
GenModel tiny_model() {
  GenModel m;
  m.rate_per_hour = 10;
  m.gpu_mix = {{1, 1.0}};
  DurationClass c;
  c.mu = std::log(600.0);
  c.sigma = 0.5;
  m.durations = {c};
  return m;
}

}  // namespace

TEST_CASE("generator fitted to the Philly sample reproduces its mix, durations and rate", "[generator]") {
  const Trace& real = philly();
  REQUIRE(real.jobs.size() == 4206);
  std::vector<std::string> notes;
  const GenModel m = fit_generator(real, notes);
  CHECK(m.source_sha256 == file_sha256(real.path));
  CHECK(m.gpus_per_node == 8);
  REQUIRE(m.unix_start.has_value());
  CHECK(*m.unix_start % 86400 == 0);
  REQUIRE(m.weekday_weights.has_value());
  // The 2-GPU to 16-GPU classes have hundreds of jobs: empirical; >32 GPUs has 17: log-normal.
  REQUIRE(m.durations.size() == 6);
  CHECK(m.durations.front().ln_quantiles.size() == 101);
  CHECK(m.durations.back().fitted_jobs == 17);
  CHECK(m.durations.back().ln_quantiles.empty());

  GenOptions o;
  o.seed = 1;
  o.jobs = 100000;
  const Trace gen = generate_trace(m, o);
  REQUIRE(gen.jobs.size() == 100000);
  CHECK(gen.format == "generated");

  // GPU-count mix. Rule: a bucket holding over 5% of the real jobs must be within 5%
  // (relative) of its real share; a smaller bucket within 1 percentage point, since 5%
  // of a share under 5% is within the sampling noise of a few thousand draws.
  const auto rs = bucket_shares(real);
  const auto gs = bucket_shares(gen);
  std::string table = "Philly sample (4,206 jobs) vs generated (100,000 jobs, seed 1)\n";
  table += "GPUs    real     generated\n";
  for (size_t b = 0; b < std::size(kBuckets); ++b)
    table += std::string(kBuckets[b].label) + std::string(8 - std::string(kBuckets[b].label).size(), ' ') +
             pct(rs[b]) + "  " + pct(gs[b]) + "\n";
  const double ps[] = {0.25, 0.50, 0.75, 0.90};
  table += "duration (s)  real       generated\n";
  for (double p : ps)
    table += "p" + std::to_string(static_cast<int>(p * 100)) + "          " + num(duration_quantile(real, p)) + "  " +
             num(duration_quantile(gen, p)) + "\n";
  table += "jobs/day      " + num(jobs_per_day(real), 2) + "  " + num(jobs_per_day(gen), 2) + "\n";
  WARN(table);

  for (size_t b = 0; b < std::size(kBuckets); ++b) {
    INFO("GPU bucket " << kBuckets[b].label << ": real " << rs[b] << ", generated " << gs[b]);
    if (rs[b] > 0.05) {
      CHECK(std::abs(gs[b] - rs[b]) <= 0.05 * rs[b]);
    } else {
      CHECK(std::abs(gs[b] - rs[b]) <= 0.01);
    }
  }
  for (double p : ps) {
    const double r = duration_quantile(real, p), g = duration_quantile(gen, p);
    INFO("duration p" << p * 100 << ": real " << r << " s, generated " << g << " s");
    CHECK(std::abs(g - r) <= 0.05 * r);
  }
  CHECK(std::abs(jobs_per_day(gen) - jobs_per_day(real)) <= 0.05 * jobs_per_day(real));

  // Every generated job carries a fitted user with that user's account.
  std::map<std::string, std::string> account_of;
  for (const GenUser& u : m.users) account_of[u.name] = u.account;
  for (const Job& j : gen.jobs) {
    REQUIRE(account_of.count(j.user) == 1);
    CHECK(j.account == account_of[j.user]);
  }
}

TEST_CASE("generator output: order, ids, names, request shape, provenance", "[generator]") {
  std::vector<std::string> notes;
  const GenModel m = fit_generator(philly(), notes);
  GenOptions o;
  o.jobs = 2000;
  o.seed = 7;
  const Trace t = generate_trace(m, o);
  REQUIRE(t.jobs.size() == 2000);
  CHECK(t.unix_start == m.unix_start);
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    const Job& j = t.jobs[i];
    REQUIRE(j.id.value == static_cast<int64_t>(i) + 1);
    if (i > 0) REQUIRE(t.jobs[i - 1].submit <= j.submit);
    const int64_t g = request_gpus(j);
    CHECK(j.recorded_gpus == g);
    CHECK(j.req.ntasks == g);
    CHECK(j.req.nodes_max == j.req.nodes_min);
    CHECK(j.req.gpus_per_node->count <= 8);
    const std::string profile(generated_profile(j));
    CHECK(j.name == "gen-" + std::to_string(i + 1) + ":" + profile);
    CHECK(profile == (g == 1 ? "1gpu" : g <= 8 ? "2-8gpu" : "multi-node"));
    CHECK_FALSE(j.req.time_limit.has_value());  // Philly has no time limits
  }
  const auto prov = generator_provenance(m, o);
  REQUIRE(prov.size() >= 4);
  CHECK(prov[0].find("philly_sampled_jobs_4206.json.gz") != std::string::npos);
  CHECK(prov[0].find(file_sha256(philly().path)) != std::string::npos);
  CHECK(prov[1] == "generator: seed 7, 2000 jobs");
  CHECK(std::find(t.assumptions.begin(), t.assumptions.end(), "generated 2000 jobs") != t.assumptions.end());

  // A span instead of a count: every arrival before it.
  GenOptions by_span;
  by_span.span = SimTime::seconds(7 * 86400);
  const Trace week = generate_trace(m, by_span);
  REQUIRE_FALSE(week.jobs.empty());
  CHECK(week.jobs.back().submit < by_span.span);
  CHECK(std::abs(static_cast<double>(week.jobs.size()) - 7 * 24 * m.rate_per_hour) <= 0.2 * 7 * 24 * m.rate_per_hour);
}

TEST_CASE("generator: requests split GPUs evenly over the fewest nodes", "[generator]") {
  GenModel m = tiny_model();
  m.gpu_mix = {{9, 1}, {12, 1}, {16, 1}, {7, 1}};
  GenOptions o;
  o.jobs = 200;
  std::map<int64_t, std::pair<int, int64_t>> shape;  // GPUs -> nodes x GPUs per node
  for (const Job& j : generate_trace(m, o).jobs)
    shape[request_gpus(j)] = {*j.req.nodes_min, j.req.gpus_per_node->count};
  CHECK(shape[7] == std::pair<int, int64_t>{1, 7});
  CHECK(shape[9] == std::pair<int, int64_t>{3, 3});   // not 8 + 1
  CHECK(shape[12] == std::pair<int, int64_t>{2, 6});  // not 8 + 4
  CHECK(shape[16] == std::pair<int, int64_t>{2, 8});
}

TEST_CASE("generator: same seed same trace, another seed another, streams independent", "[generator]") {
  std::vector<std::string> notes;
  GenModel m = fit_generator(philly(), notes);
  GenOptions o;
  o.jobs = 3000;
  const std::string a = dump(generate_trace(m, o));
  CHECK(a == dump(generate_trace(m, o)));
  o.seed = 2;
  const std::string b = dump(generate_trace(m, o));
  CHECK(a != b);
  o.seed = 1;

  // Changing the user mix leaves arrivals, sizes and durations as they were.
  GenModel fewer_users = m;
  fewer_users.users.resize(3);
  const Trace base = generate_trace(m, o);
  const Trace other = generate_trace(fewer_users, o);
  REQUIRE(other.jobs.size() == base.jobs.size());
  bool users_differ = false;
  for (size_t i = 0; i < base.jobs.size(); ++i) {
    REQUIRE(other.jobs[i].submit == base.jobs[i].submit);
    REQUIRE(other.jobs[i].duration == base.jobs[i].duration);
    REQUIRE(request_gpus(other.jobs[i]) == request_gpus(base.jobs[i]));
    users_differ = users_differ || other.jobs[i].user != base.jobs[i].user;
  }
  CHECK(users_differ);
}

TEST_CASE("generator YAML round trip: same model, same trace", "[generator]") {
  std::vector<std::string> notes;
  const GenModel m = fit_generator(philly(), notes);
  const std::string text = generator_yaml(m);
  const GenModel back = parse_generator_yaml(text, "fitted.yaml");
  CHECK(back == m);
  CHECK(generator_yaml(back) == text);
  GenOptions o;
  o.jobs = 2000;
  CHECK(dump(generate_trace(back, o)) == dump(generate_trace(m, o)));

  // Hand-made models round-trip too (defaults, unbounded class, no users, a time limit).
  GenModel t = tiny_model();
  t.time_limit_factor = 1.5;
  t.unix_start = 1505692800;
  CHECK(parse_generator_yaml(generator_yaml(t), "t.yaml") == t);
}

TEST_CASE("generator: the hand-written log-normal example generates", "[generator]") {
  const GenModel m = load_generator_yaml(src("tests/data/generator/example.yaml"));
  REQUIRE(m.durations.size() == 3);
  CHECK(m.durations[0].ln_quantiles.empty());
  REQUIRE(m.users.size() == 12);  // users: {count: 12, accounts: 3}
  CHECK(m.users[3].account == "a1");
  GenOptions o;
  o.jobs = 4000;
  const Trace t = generate_trace(m, o);
  REQUIRE(t.jobs.size() == 4000);
  std::set<int64_t> sizes;
  std::vector<double> one_gpu;
  for (const Job& j : t.jobs) {
    sizes.insert(request_gpus(j));
    REQUIRE(j.req.time_limit.has_value());
    CHECK(*j.req.time_limit >= j.duration);
    CHECK(j.req.time_limit->count_us() % SimTime::minutes(1).count_us() == 0);
    if (request_gpus(j) == 1) one_gpu.push_back(j.duration.to_seconds());
  }
  CHECK(sizes == std::set<int64_t>{1, 2, 4, 8, 16});
  // The 1-GPU class is log-normal with mu = ln(1800): its median is about 30 minutes.
  std::sort(one_gpu.begin(), one_gpu.end());
  const double median = one_gpu[one_gpu.size() / 2];
  CHECK(median > 1800 * 0.9);
  CHECK(median < 1800 * 1.1);
  CHECK(generator_provenance(m, o)[0] == "model written by hand (no source trace)");
}

TEST_CASE("generator YAML: invalid models give exact diagnostics", "[generator]") {
  // Paths in the diagnostics are written as given, relative to the repo root.
  const std::string dir = "tests/inputs/invalid/generator";
  std::vector<std::string> cases;
  for (const auto& entry : fs::directory_iterator(src(dir)))
    if (entry.path().extension() == ".yaml") cases.push_back(entry.path().filename().string());
  std::sort(cases.begin(), cases.end());
  CHECK(cases.size() >= 2);
  for (const auto& name : cases) {
    const std::string rel = dir + "/" + name;
    INFO(rel);
    const std::string expected_path = src(rel + ".expected");
    REQUIRE(fs::exists(expected_path));
    const std::string got = diagnostics_of(read_input_file(src(rel)), rel);
    CHECK(!got.empty());
    CHECK(got == read_input_file(expected_path));
  }
  CHECK(diagnostics_of("", "e.yaml") == "e.yaml: error: empty generator model\n");
}

TEST_CASE("generator: all weight on hour 10 gives submits only in hour 10", "[generator]") {
  GenModel m = tiny_model();
  m.hour_weights.fill(0);
  m.hour_weights[10] = 1;
  GenOptions o;
  o.jobs = 3000;
  const Trace t = generate_trace(m, o);
  REQUIRE(t.jobs.size() == 3000);
  std::set<int64_t> days;
  for (const Job& j : t.jobs) {
    const int64_t s = j.submit.whole_seconds();
    REQUIRE((s / 3600) % 24 == 10);
    days.insert(s / 86400);
  }
  // The daily mean is 10 jobs/hour x 24 h, all of them inside hour 10: about 240 a day.
  CHECK(days.size() >= 11);
  CHECK(days.size() <= 14);

  // Weekday weights: only Mondays, t=0 a Monday midnight (2017-09-18).
  m.unix_start = 1505692800;
  m.weekday_weights = std::array<double, 7>{1, 0, 0, 0, 0, 0, 0};
  const Trace mondays = generate_trace(m, o);
  for (const Job& j : mondays.jobs) {
    const int64_t s = j.submit.whole_seconds();
    REQUIRE((s / 3600) % 24 == 10);
    REQUIRE((s / 86400) % 7 == 0);
  }
}
