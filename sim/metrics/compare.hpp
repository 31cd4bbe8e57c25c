// What `gcsim compare` reports: per-variant headline figures, breakdowns by partition
// and GPU count, distributions, time series on a shared axis, and differences against
// the first variant with bootstrap confidence intervals. Pure functions of the job
// outcomes; the bootstrap draws from the named stream "compare.bootstrap".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cluster/cluster.hpp"
#include "sim/metrics/summary.hpp"
#include "sim/sched/simulation.hpp"

namespace gcsim {

/// One job as the report sees it. Times in seconds from the trace's start.
struct JobRow {
  bool started = false;    // ran (finished or timed out); false: rejected or never started
  bool rejected = false;
  double submit = 0, start = 0, end = 0;
  double wait = 0;         // start - submit
  double bsld = 1;         // bounded slowdown, 10 s bound
  double inflation = -1;   // simulated / trace run time; -1 when not defined (timed out, no duration)
  int64_t gpus = 0;
  std::string partition;
  bool not_numa_local = false;  // some task's cores or memory off its GPUs' NUMA domains
};

struct VariantMetrics {
  std::string name;
  std::string settings;      // "binding=unbound,policy=easy": what the variant changed
  Summary summary;
  int64_t nodes = 0;            // of the cluster as the variant ran it
  double throughput_per_h = 0;  // finished jobs per hour of makespan
  double inflation_mean = 1, inflation_p95 = 1;
  int64_t gpu_jobs = 0;         // started jobs holding a GPU
  int64_t not_numa_local = 0;   // of those, placed with cores or memory off their GPUs' domains
  std::vector<JobRow> jobs;     // in trace order
};

[[nodiscard]] VariantMetrics variant_metrics(const std::string& name, const std::string& settings,
                                             const Cluster& cluster, const Trace& trace,
                                             const std::vector<JobOutcome>& outcomes);

/// Per-group figures over started jobs: the rows of the breakdown tables.
struct GroupRow {
  std::string group;
  int64_t jobs = 0;
  double wait_mean = 0, wait_p95 = 0, bsld_mean = 0, inflation_mean = 1;
};
/// GPU-count buckets: 0, 1, 2, 3-4, 5-8, 9-16, 17-64, >64 (empty ones left out).
[[nodiscard]] std::vector<GroupRow> by_gpu_count(const VariantMetrics& v);
[[nodiscard]] std::vector<GroupRow> by_partition(const VariantMetrics& v);
[[nodiscard]] std::string gpu_bucket(int64_t gpus);

/// Queue length (pending jobs) and GPU utilization averaged over each of `bins` equal
/// bins of [t0, t1).
struct TimeSeries {
  double t0 = 0, t1 = 0;
  std::vector<double> queue;     // time-averaged pending jobs per bin
  std::vector<double> gpu_util;  // time-averaged share of GPUs allocated per bin
};
[[nodiscard]] TimeSeries time_series(const VariantMetrics& v, double t0, double t1, int bins);

/// Empirical CDF of `values` at up to `points` evenly spaced ranks: (value, share <= value).
[[nodiscard]] std::vector<std::pair<double, double>> ecdf(std::vector<double> values, int points);

/// A difference (variant - baseline) with its 95% bootstrap interval.
struct Difference {
  std::string variant, metric;
  double baseline = 0, value = 0, diff = 0, lo = 0, hi = 0;
  bool paired = false;  // resampled the same jobs in both (same trace)
};
/// Metrics: wait mean, wait p95, bounded slowdown mean, inflation mean; over started
/// jobs. Paired resampling of job indices when both runs have the same jobs, else each
/// run resampled on its own. `resamples` 0: no intervals (lo = hi = diff). Variants are
/// resampled on up to `threads` workers; the result does not depend on how many.
[[nodiscard]] std::vector<Difference> differences(const std::vector<VariantMetrics>& variants, int resamples,
                                                  uint64_t seed, int threads = 1);

}  // namespace gcsim
