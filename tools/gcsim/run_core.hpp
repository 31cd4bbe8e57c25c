// One simulation from its command-line description to its run directory, shared by
// `gcsim run`, `gcsim compare` and `gcsim sweep`: prepare_run reads and checks every
// input (nothing is written yet), execute_run simulates and writes the run directory.
// A PreparedRun owns everything one simulation touches, so several run at once on
// threads without sharing mutable state.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/collective/nccl_tuning.hpp"
#include "models/host/host_model.hpp"
#include "models/placement/placement.hpp"
#include "models/runtime/step_runtime.hpp"
#include "sim/cluster/cluster.hpp"
#include "sim/io/run_outputs.hpp"
#include "sim/metrics/summary.hpp"
#include "sim/sched/simulation.hpp"
#include "tools/gcsim/cli_common.hpp"

namespace gcsim {

/// What `gcsim run` takes; `compare` and `sweep` variants change fields of a copy.
struct RunSpec {
  std::string cluster, trace, policy = "easy", start, binding = "slurm";
  uint64_t seed = 1;
  int nodes = 0, cores_per_node = 0;
  std::string gpu_model;
  std::string accounts;
  std::map<std::string, std::string> overrides;  // --set KEY=VALUE (slurm policy)
  WindowArgs window;
  std::string runtime_model = "none", profiles, reference = "ideal", nccl_tuning, host_params;
  std::vector<std::string> host_calibration;
  bool no_contention = false;
  bool reverse_ties = false;  // determinism check: simultaneous equal events in reverse order
  // Cluster changes a variant may ask for (compare/sweep): nodes=N, nodes+=N, nic=RATE.
  std::optional<int> node_count;
  int node_delta = 0;
  std::optional<double> nic_bps;
};

/// Inputs read once and shared read-only by every variant of a compare or sweep.
struct SharedInputs {
  std::optional<Trace> trace;      // as read, before any window or arrival scaling
  std::optional<Cluster> cluster;  // as read, before any node-count or NIC change
  std::string cluster_path;        // what `cluster` was read from (a variant may name another)
};

struct PreparedRun {
  RunSpec spec;
  Trace trace;
  Cluster cluster;
  bool inferred = false;
  std::unique_ptr<Policy> policy;
  std::unique_ptr<PlacementAllocator> allocator;
  std::optional<NcclTuning> tuning;
  std::optional<HostParams> host;
  ProfileSet profiles;
  std::unique_ptr<StepRuntimeModel> runtime;
  ManifestInfo manifest;
  Diagnostics warnings;
};

struct RunOutput {
  SimulationResult result;
  Summary summary;
  std::vector<JobOutcome> outcomes;
  std::vector<double> start_deviation_s;  // |simulated - recorded start|, sorted
  std::vector<double> runtime_ratio;      // step model: simulated / recorded run time, sorted
  int64_t unmodelled_comm_jobs = 0;
  double wall_seconds = 0;
};

/// The options `gcsim run` and `gcsim compare` share (--cluster, --trace, --policy, ...).
void add_run_spec_options(CLI::App* c, RunSpec& spec, std::vector<std::string>& set, bool trace_required = true);
/// --set KEY=VALUE into spec.overrides.
void apply_set_options(RunSpec& spec, const std::vector<std::string>& set);

/// Reads and checks every input of `spec`; throws InputError on bad input. `shared`,
/// when given, holds the trace and cluster already read (same paths as the spec).
[[nodiscard]] std::unique_ptr<PreparedRun> prepare_run(const RunSpec& spec, const std::vector<std::string>& argv,
                                                       const SharedInputs* shared = nullptr);
/// Reads the trace and cluster `spec` names, once, for prepare_run.
[[nodiscard]] SharedInputs read_shared_inputs(const RunSpec& spec);

/// Node-count and NIC changes of a variant on a copy of the cluster: a node count of N
/// (node_count, else the cluster's, plus node_delta) keeps the first N nodes or appends copies of the last one (same template, partitions and leaf,
/// names continuing its numbering).
void apply_cluster_changes(Cluster& c, const RunSpec& spec);

/// Simulates and writes `out`: manifest.json first with completed: false, then jobs.sacct,
/// summary.json, rejected.txt, replay.json (when the trace has recorded starts) and the
/// final manifest.
RunOutput execute_run(PreparedRun& p, const std::string& out,
                      const std::function<void(size_t, size_t)>& progress = {},
                      const std::atomic<bool>* stop = nullptr);

/// The lines `gcsim run` prints.
void print_run_summary(const PreparedRun& p, const RunOutput& r, const std::string& out);

[[nodiscard]] std::string fmt_duration(double seconds);

/// A one-line progress bar on stderr, redrawn at most ten times a second.
class ProgressBar {
 public:
  explicit ProgressBar(bool enabled, std::string unit = "jobs") : enabled_(enabled), unit_(std::move(unit)) {}
  void update(size_t done, size_t total);

 private:
  bool enabled_;
  std::string unit_;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace gcsim
