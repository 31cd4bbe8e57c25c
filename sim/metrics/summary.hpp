// Run summary: waits, bounded slowdown, makespan and utilisation, computed from
// the job outcomes. Deterministic: a pure function of the outcomes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cluster/cluster.hpp"
#include "sim/sched/simulation.hpp"

namespace gcsim {

struct Quantiles {
  double mean = 0, median = 0, p95 = 0, max = 0;
};

struct Summary {
  int64_t jobs = 0;           // jobs in the trace
  int64_t finished = 0;       // ran to completion or time limit
  int64_t timed_out = 0;
  int64_t rejected = 0;       // could never run on this cluster
  int64_t unfinished = 0;     // still pending/running when the run stopped
  int64_t backfilled = 0;
  double makespan_s = 0;      // last end - first submit
  Quantiles wait_s;
  double bounded_slowdown_mean = 0;  // max(1, (wait+run)/max(run, 10 s))
  double cpu_utilization = 0;        // allocated CPU-seconds / (CPUs x makespan)
  double gpu_utilization = 0;
  int64_t total_cpus = 0;
  int64_t total_gpus = 0;
};

/// Linear-interpolation quantile (numpy's default) of a sorted vector; 0 for empty.
[[nodiscard]] double quantile_sorted(const std::vector<double>& v, double q);

/// "42 s", "3.5 min", "1.25 h", "2.50 d": how reports and the CLI print durations.
[[nodiscard]] std::string human_duration(double seconds);

[[nodiscard]] Summary summarize(const Cluster& cluster, const Trace& trace, const std::vector<JobOutcome>& out);

}  // namespace gcsim
