// The slurm policy against runs recorded on a real Slurm 22.05.8 (tests/oracle/CASE):
// gcsim replays each case's slurm.conf, gres.conf, topology.conf, trace (and accounts)
// with the controller timer phases measured from run1's log (CASE/gcsim.args, made by
// tools/oracle_timers.py), and is judged as a rerun of real Slurm would be (issue 4):
//   1. stable prefix: up to the first job where the two real runs diverge, the same
//      start (within 2 s), CPU ids and GPU indices;
//   2. |start difference| median and p90 against the real-vs-real figures;
//   3. mean wait, p90 wait, makespan and backfill share against the real spread.
// The table is printed for every case; the checks below are what gcsim holds today
// (see tests/oracle/README.md for the cases that still fall short and why).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <numeric>

#include "models/placement/placement.hpp"
#include "models/sched/slurm_policy.hpp"
#include "sim/cluster/import_slurm_conf.hpp"
#include "sim/core/input_file.hpp"
#include "sim/io/run_outputs.hpp"
#include "sim/sched/simulation.hpp"
#include "sim/workload/trace_readers.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;
namespace fs = std::filesystem;

namespace {

struct Rec {
  int64_t submit = 0, start = 0, end = 0;
  std::string cpus, gpus;
  bool backfill = false;
};
using Run = std::map<std::string, Rec>;

/// One real.csv row: fields may be double-quoted (hostlists such as "g[01,03]").
std::vector<std::string> csv_row(std::string_view line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= line.size()) {
    if (i < line.size() && line[i] == '"') {
      const size_t close = line.find('"', i + 1);
      out.emplace_back(line.substr(i + 1, close - i - 1));
      i = close + 2;  // past the quote and the comma
    } else {
      const size_t comma = std::min(line.find(',', i), line.size());
      out.emplace_back(line.substr(i, comma - i));
      i = comma + 1;
    }
  }
  return out;
}

Run read_real(const std::string& path) {
  const std::string text = read_input_file(path);
  auto lines = split_lines(text);
  const auto head = csv_row(lines.at(0));
  auto col = [&](const char* name) {
    return static_cast<size_t>(std::find(head.begin(), head.end(), name) - head.begin());
  };
  Run r;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (trim(lines[i]).empty()) continue;
    auto f = csv_row(lines[i]);
    if (f.at(col("start")).empty()) continue;  // CANCELLED_BY_CAP: never started in the capped run
    Rec x;
    x.submit = std::stoll(f.at(col("submit")));
    x.start = std::stoll(f.at(col("start")));
    x.end = std::stoll(f.at(col("end")));
    x.cpus = f.at(col("cpu_ids"));
    x.gpus = f.at(col("gpu_idx"));
    x.backfill = f.at(col("reason_flags")).find("Backfill") != std::string::npos;
    r[f.at(col("name"))] = x;
  }
  return r;
}

Run simulate_case(const fs::path& dir) {
  Diagnostics warn;
  const Cluster cluster = load_slurm_conf((dir / "slurm.conf").string(), warn);
  const Trace trace = read_trace((dir / "trace.csv").string(), warn);
  SlurmPolicyInputs in;
  in.cluster = &cluster;
  if (fs::exists(dir / "accounts.cfg")) in.accounts_path = (dir / "accounts.cfg").string();
  const std::string args = read_input_file((dir / "gcsim.args").string());
  const std::string first_line = args.substr(0, args.find('\n'));
  const auto toks = split_ws(first_line);
  for (size_t i = 0; i + 1 < toks.size(); ++i)
    if (toks[i] == "--set") {
      const std::string kv(toks[i + 1]);
      in.overrides[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
    }
  SlurmPolicy policy(in, warn);
  PlacementAllocator alloc(PlacementMode::kSlurm);
  Simulation sim(cluster, trace, policy, alloc);
  REQUIRE(sim.run().completed);
  // CPU ids and GPU indices exactly as jobs.sacct prints them
  const std::string sacct = format_sacct(cluster, trace, sim.outcomes());
  auto lines = split_lines(sacct);
  const auto head = split(lines.at(0), '|');
  auto col = [&](std::string_view name) {
    return static_cast<size_t>(std::find(head.begin(), head.end(), name) - head.begin());
  };
  Run r;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (trim(lines[i]).empty()) continue;
    const auto f = split(lines[i], '|');
    const std::string name(f.at(col("JobName")));
    size_t j = 0;
    while (trace.jobs[j].name != name) ++j;
    const auto& o = sim.outcomes()[j];
    Rec x;
    x.submit = trace.jobs[j].submit.count_us() / 1000000;
    x.start = static_cast<int64_t>(std::floor(o.start.to_seconds()));
    x.end = static_cast<int64_t>(std::floor(o.end.to_seconds()));
    x.cpus = std::string(f.at(col("CPU_IDs")));
    x.gpus = std::string(f.at(col("GRES_IDX")));
    x.backfill = o.started_by == StartedBy::kBackfill;
    r[name] = x;
  }
  return r;
}

std::vector<std::string> submit_order(const Run& r) {
  std::vector<std::string> o;
  for (const auto& [n, x] : r) o.push_back(n);
  std::stable_sort(o.begin(), o.end(), [&](const auto& a, const auto& b) {
    return std::tie(r.at(a).submit, a) < std::tie(r.at(b).submit, b);
  });
  return o;
}

int prefix(const std::vector<std::string>& order, const Run& a, const Run& b) {
  int k = 0;
  for (const auto& n : order) {
    const Rec &x = a.at(n), &y = b.at(n);
    if (std::llabs(x.start - y.start) > 2 || x.cpus != y.cpus || x.gpus != y.gpus) {
      if (std::getenv("GCSIM_DEBUG_ORACLE"))
        std::printf("  first difference %s: %lld %s %s vs %lld %s %s\n", n.c_str(), (long long)x.start, x.cpus.c_str(),
                    x.gpus.c_str(), (long long)y.start, y.cpus.c_str(), y.gpus.c_str());
      break;
    }
    ++k;
  }
  return k;
}

std::pair<double, double> deviation(const Run& a, const Run& b) {
  std::vector<double> d;
  for (const auto& [n, x] : a) d.push_back(static_cast<double>(std::llabs(x.start - b.at(n).start)));
  std::sort(d.begin(), d.end());
  const size_t m = d.size();
  const double med = m % 2 ? d[m / 2] : (d[m / 2 - 1] + d[m / 2]) / 2;
  return {med, d[static_cast<size_t>(0.9 * static_cast<double>(m - 1))]};
}

struct Agg {
  double mean_wait, p90_wait, makespan, backfill;
};
Agg aggregates(const Run& r) {
  std::vector<double> w;
  int64_t first = INT64_MAX, last = 0;
  double bf = 0;
  for (const auto& [n, x] : r) {
    w.push_back(static_cast<double>(x.start - x.submit));
    first = std::min(first, x.submit);
    last = std::max(last, x.end);
    bf += x.backfill;
  }
  std::sort(w.begin(), w.end());
  return {std::accumulate(w.begin(), w.end(), 0.0) / static_cast<double>(w.size()),
          w[static_cast<size_t>(0.9 * static_cast<double>(w.size() - 1))], static_cast<double>(last - first),
          bf / static_cast<double>(r.size())};
}

/// Within the real runs' spread or 5% of their mean, whichever is wider.
bool within(double v, double a, double b) {
  const double lo = std::min(a, b), hi = std::max(a, b), tol = 0.05 * (a + b) / 2;
  return v >= std::min(lo, (a + b) / 2 - tol) - 1e-9 && v <= std::max(hi, (a + b) / 2 + tol) + 1e-9;
}

struct CaseResult {
  int stable, prefix1, prefix2;
  std::pair<double, double> real_dev, dev1, dev2;
  Agg sim, r1, r2;
};

CaseResult judge_runs(const std::string& name, const Run& r1, const Run& r2, const Run& s);

CaseResult judge(const std::string& name) {
  const fs::path dir = test::src("tests/oracle/" + name);
  const Run r1 = read_real((dir / "run1/real.csv").string());
  const Run r2 = read_real((dir / "run2/real.csv").string());
  Run s = simulate_case(dir);
  // compare the jobs both real runs started (capped runs cancel the last few)
  std::erase_if(s, [&](const auto& kv) { return !r1.count(kv.first) || !r2.count(kv.first); });
  Run a = r1, b = r2;
  std::erase_if(a, [&](const auto& kv) { return !s.count(kv.first); });
  std::erase_if(b, [&](const auto& kv) { return !s.count(kv.first); });
  REQUIRE(s.size() >= r1.size() - 10);
  return judge_runs(name, a, b, s);
}

CaseResult judge_runs(const std::string& name, const Run& r1, const Run& r2, const Run& s) {
  const auto order = submit_order(r1);
  CaseResult c{prefix(order, r1, r2), prefix(order, s, r1), prefix(order, s, r2), deviation(r1, r2),
               deviation(s, r1), deviation(s, r2), aggregates(s), aggregates(r1), aggregates(r2)};
  std::printf("oracle %-12s prefix stable %d, gcsim %d/%d | |dstart| med/p90 real %.1f/%.0f gcsim %.1f/%.0f, "
              "%.1f/%.0f | mean wait %.1f (real %.1f, %.1f) p90 %.0f (%.0f, %.0f) makespan %.0f (%.0f, %.0f) "
              "backfill %.2f (%.2f, %.2f)\n",
              name.c_str(), c.stable, c.prefix1, c.prefix2, c.real_dev.first, c.real_dev.second, c.dev1.first,
              c.dev1.second, c.dev2.first, c.dev2.second, c.sim.mean_wait, c.r1.mean_wait, c.r2.mean_wait,
              c.sim.p90_wait, c.r1.p90_wait, c.r2.p90_wait, c.sim.makespan, c.r1.makespan, c.r2.makespan,
              c.sim.backfill, c.r1.backfill, c.r2.backfill);
  return c;
}

}  // namespace

// What each case meets today is asserted; the misses are in tests/oracle/README.md and
// are guarded against regressions (each within a factor of what it measures now).
TEST_CASE("oracle gpu-sockets: stable prefix, deviations, aggregates", "[oracle]") {
  const auto c = judge("gpu-sockets");
  CHECK(c.prefix1 >= c.stable);
  CHECK(c.prefix2 >= c.stable);
  // gcsim follows run1 through j053 (p90 |dstart| 0 s): a plan that overlaps a
  // reservation is retried from its own start (j032 at 107 s; 20 jobs without)
  CHECK(c.prefix1 >= 53);
  CHECK(c.dev1.first <= c.real_dev.first);
  CHECK(c.dev1.second <= c.real_dev.second);
  CHECK(c.dev2.first <= c.real_dev.first);
  CHECK(c.dev2.second <= c.real_dev.second);
  CHECK(within(c.sim.mean_wait, c.r1.mean_wait, c.r2.mean_wait));
  CHECK(within(c.sim.p90_wait, c.r1.p90_wait, c.r2.p90_wait));
  CHECK(within(c.sim.makespan, c.r1.makespan, c.r2.makespan));
  CHECK(within(c.sim.backfill, c.r1.backfill, c.r2.backfill));
}

TEST_CASE("oracle two-types: stable prefix, deviations, aggregates", "[oracle]") {
  const auto c = judge("two-types");
  CHECK(c.prefix1 >= c.stable);
  CHECK(c.prefix2 >= c.stable);
  // all 80 jobs as in run1: GPU jobs choose nodes in Slurm's first pass, GPUs with free
  // cores on their own socket, before any second pass (26 jobs without)
  CHECK(c.prefix1 >= 80);
  CHECK(c.dev1.first <= c.real_dev.first);
  CHECK(c.dev1.second <= c.real_dev.second);
  CHECK(c.dev2.first <= c.real_dev.first);
  CHECK(c.dev2.second <= c.real_dev.second);
  CHECK(within(c.sim.mean_wait, c.r1.mean_wait, c.r2.mean_wait));
  CHECK(within(c.sim.p90_wait, c.r1.p90_wait, c.r2.p90_wait));
  CHECK(within(c.sim.makespan, c.r1.makespan, c.r2.makespan));
  CHECK(within(c.sim.backfill, c.r1.backfill, c.r2.backfill));
}

TEST_CASE("oracle fairshare: stable prefix and aggregates", "[oracle]") {
  const auto c = judge("fairshare");
  CHECK(c.prefix1 >= c.stable);
  CHECK(c.prefix2 >= c.stable);
  CHECK(c.dev1.first <= c.real_dev.first);
  CHECK(c.dev1.second <= c.real_dev.second);
  CHECK(c.dev2.first <= c.real_dev.first);
  CHECK(c.dev2.second <= c.real_dev.second);
  CHECK(within(c.sim.mean_wait, c.r1.mean_wait, c.r2.mean_wait));
  CHECK(within(c.sim.p90_wait, c.r1.p90_wait, c.r2.p90_wait));
  CHECK(within(c.sim.makespan, c.r1.makespan, c.r2.makespan));
  // 0.39 with a straight-line main tick: the line put a tick at 36.946 s, 4 ms before
  // the controller's second turned (run1's passes show it after), so the passes after
  // it came a tick early and started j008 and j009 at 45 s, which both runs backfilled
  // (main_tick_times)
  CHECK(within(c.sim.backfill, c.r1.backfill, c.r2.backfill));
}

TEST_CASE("oracle binding: stable prefix, deviations, aggregates", "[oracle]") {
  const auto c = judge("binding");
  CHECK(c.prefix1 >= c.stable);
  CHECK(c.prefix2 >= c.stable);
  CHECK(c.dev1.first <= c.real_dev.first);
  CHECK(c.dev1.second <= c.real_dev.second);
  CHECK(c.dev2.first <= c.real_dev.first);
  // enforce-binding lets cores spill past the GPU's socket (run1 j030 on g01:6-7,12-15
  // with GPU 1): p90 against run2 47 s -> 34 s, and 0 s/2 s against run1; through
  // j045 as run1 with its main ticks (j016 started a tick late without)
  CHECK(c.prefix1 >= 45);
  CHECK(c.dev1.second <= 5);
  CHECK(c.dev2.second <= c.real_dev.second);
  CHECK(within(c.sim.mean_wait, c.r1.mean_wait, c.r2.mean_wait));
  CHECK(within(c.sim.p90_wait, c.r1.p90_wait, c.r2.p90_wait));
  CHECK(within(c.sim.makespan, c.r1.makespan, c.r2.makespan));
  CHECK(within(c.sim.backfill, c.r1.backfill, c.r2.backfill));
}

TEST_CASE("oracle topo-tree: stable prefix and aggregates", "[oracle]") {
  const auto c = judge("topo-tree");
  CHECK(c.prefix1 >= c.stable);
  CHECK(c.prefix2 >= c.stable);
  // gcsim follows run1 through j035: the will-run walk (j013 planned at 113 s on
  // n[05-06] in the cycle at 45 s, so j021 backfilled on n07), later_start at the first
  // slot end that frees a node, and leaves weighed by their nodes alone (j044). It parts
  // at a tie: run1's cycle at 135.205 s began 62 ms before j020's end reached the
  // controller (0.186 s after its run time; gcsim's exit latency, for two jobs started
  // together, is 0.108 s), so
  // j018 waited for the main pass at 137.4 s; gcsim backfilled it at 135.2 s.
  CHECK(c.prefix1 >= 35);
  CHECK(c.dev1.first <= 1);
  CHECK(c.dev1.first <= c.real_dev.first);
  CHECK(c.dev1.second <= c.real_dev.second);
  CHECK(c.dev2.second <= c.real_dev.second);
  CHECK(within(c.sim.mean_wait, c.r1.mean_wait, c.r2.mean_wait));
  CHECK(within(c.sim.p90_wait, c.r1.p90_wait, c.r2.p90_wait));
  CHECK(within(c.sim.backfill, c.r1.backfill, c.r2.backfill));
  // a miss (median 8.5 s against 6 s; tools/oracle_jitter.py: in every variant), where
  // gcsim follows run1 (median 0 s); guarded
  CHECK(c.dev2.first <= 2 * c.real_dev.first);
}
