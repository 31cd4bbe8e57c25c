// Statistics of a job trace as read, before any simulation: job and GPU-count mix,
// durations, waits, final states, users, GPU-hours and the load the trace offers a
// cluster. Definitions follow the scripts that computed the published figures
// (shared/data/traces/tools/trace_stats.py, swf_stats.py), so the two can be compared.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "sim/cluster/cluster.hpp"
#include "sim/workload/job.hpp"
#include "sim/workload/job_request.hpp"

namespace gcsim {

/// The GPU-count buckets of STATS_gpu.txt: 0, 1, 2, 3-4, 5-8, 9-16, 17-32, 33-64, >64.
inline constexpr int kGpuBuckets = 9;
[[nodiscard]] int gpu_bucket(int64_t gpus);
[[nodiscard]] const char* gpu_bucket_label(int bucket);

/// Decade bins of a duration in seconds: <1, 1-10, ..., 1e6-1e7, >=1e7 (the SVG's log axis).
inline constexpr int kDurationBins = 9;
[[nodiscard]] int duration_bin(double seconds);
[[nodiscard]] const char* duration_bin_label(int bin);

/// One sample summarised. Quantiles interpolate linearly between order statistics
/// (quantile_sorted in summary.hpp: numpy's and pandas' default, statistics.median at 0.5).
struct SampleStats {
  int64_t n = 0;
  double mean = 0, p25 = 0, p50 = 0, p75 = 0, p90 = 0, p99 = 0, max = 0;
};

inline constexpr int kRecordedStates = 5;  // RecordedState values, in enum order
/// Slurm's name of a final state ("COMPLETED", ...), "UNKNOWN" when the trace has none.
[[nodiscard]] const char* trace_state_label(RecordedState s);

struct TraceStats {
  std::string path;
  std::string format;
  int64_t jobs = 0;
  int64_t gpu_jobs = 0;       // job_gpus > 0
  int64_t cpu_only_jobs = 0;  // job_gpus == 0

  // Time span, seconds from the trace's t=0. A job's end is recorded_start + duration
  // when the trace records the start, else submit + duration.
  double first_submit_s = 0, last_submit_s = 0, last_end_s = 0;

  // GPUs per job from the request (job_gpus): counts per bucket and per exact value.
  std::array<int64_t, kGpuBuckets> gpu_buckets{};
  std::map<int64_t, int64_t> gpu_counts;
  double gpus_per_gpu_job_mean = 0;
  // GPUs per job as the trace recorded them (recorded_gpus when > 0, else the request):
  // differs from the request where a reader had to round up an uneven spread over nodes
  // (Philly, Helios ask for nodes x most-GPUs-on-one-node).
  std::array<int64_t, kGpuBuckets> recorded_gpu_buckets{};
  int64_t request_exceeds_recorded = 0;  // jobs with recorded_gpus > 0 and job_gpus > it
  int64_t fractional_gpu_jobs = 0;       // GPU jobs with JobRequest::gpu_fraction < 1

  SampleStats duration_s;      // every job: what a replay runs
  SampleStats run_started_s;   // jobs with a recorded start: what the trace saw run
  SampleStats wait_s;          // recorded_start - submit, jobs with a recorded start
  SampleStats cpus_per_job;    // job_cpus over every job
  SampleStats gpu_hours;       // job_gpus x duration / 3600 over GPU jobs
  std::array<int64_t, kDurationBins> duration_bins{};

  std::array<int64_t, kRecordedStates> states{};  // indexed by RecordedState
  int64_t users = 0;     // distinct non-empty Job::user
  int64_t accounts = 0;  // distinct non-empty Job::account (Philly/Helios: VCs)

  // Against a cluster (when one was given). Work = sum(job_gpus x duration) and
  // sum(job_cpus x duration); fractional GPU requests count as whole GPUs, as a Slurm
  // replay allocates them.
  bool has_cluster = false;
  int64_t cluster_nodes = 0, cluster_gpus = 0, cluster_cpus = 0;
  double gpu_seconds = 0, cpu_seconds = 0;
  // Offered load = work / (capacity x (last submit - first submit)): the arrival window,
  // a property of the trace alone (arrival rate x work per job / capacity); the last end
  // depends on how the recorded scheduler stretched the tail. Unset when the window is 0.
  std::optional<double> gpu_offered_load, cpu_offered_load;
  // Utilisation as swf_stats.py defines it: work / (capacity x (last end - first submit)).
  std::optional<double> gpu_utilization_to_last_end, cpu_utilization_to_last_end;
};

[[nodiscard]] TraceStats compute_trace_stats(const Trace& t, const Cluster* cluster);

/// A human-readable table, one figure per line.
[[nodiscard]] std::string trace_stats_text(const TraceStats& s);
/// JSON with a fixed key order and fixed number formatting (same stats, same bytes).
[[nodiscard]] std::string trace_stats_json(const TraceStats& s);
/// A self-contained SVG (no scripts, no external references): a GPU-count histogram and
/// a duration histogram on a log (decade) axis, with axis labels and bar values.
[[nodiscard]] std::string trace_stats_svg(const TraceStats& s);

}  // namespace gcsim
