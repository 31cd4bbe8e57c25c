// Placement changes runtime: a job is a loop of training steps, and a step's time
// depends on where the job landed and on whom it shares links with.
//
//   step = max(compute + (1 - overlap) x comm, loader / loader_factor + input / h2d)
//   comm = NCCL time of the step's collective on the job's GPUs (models/collective)
//          / staging_factor (GPU pairs NCCL routes through host memory, models/host)
//          x contention slowdown (max-min share of shared links, models/network)
//
// A trace's duration is the runtime at a reference placement (`ideal`: the same request
// placed numa-bound on an empty cluster; `as-recorded`: the job's own first placement
// with no other job running), so simulated runtime = duration x step(actual) /
// step(reference): the speed the Simulation is given is step(reference) / step(now).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "models/collective/nccl_model.hpp"
#include "models/collective/nccl_tuning.hpp"
#include "models/host/host_model.hpp"
#include "models/network/contention.hpp"
#include "models/placement/placement.hpp"
#include "sim/sched/runtime.hpp"

namespace gcsim {

/// What one step of a job does. Defaults by GPU count: default_profile().
struct WorkloadProfile {
  std::string name;
  double compute_s = 0.25;      // GPU compute per step
  int64_t grad_bytes = 0;       // bytes of the step's collective (data-parallel gradients)
  Collective collective = Collective::kAllReduce;
  double overlap = 0.5;         // share of the collective hidden behind compute
  int64_t input_bytes = 0;      // host-to-device bytes per GPU per step
  double loader_s = 0;          // data-loader CPU time per step with GPU-local cores (runs alongside)
  double loader_rho = -1;       // loader sensitivity to remote cores/memory; < 0: the host model's memory-bound figure
};

/// The documented default by GPU count (see the table in step_runtime.cpp).
[[nodiscard]] WorkloadProfile default_profile(int64_t gpus);

/// Named profiles and how a job gets one: the profile its trace names (Job::profile: an
/// sbatch-trace `profile` column, Gavel's job type, Pollux's application, Tiresias and
/// Chronus model names, the generator's size class) when defined here; else the first
/// matching rule; else the default by GPU count. Read from YAML:
///   profiles:
///     bert-large: {compute_s: 0.35, grad_bytes: 1.34GB, overlap: 0.6, input_bytes: 2MB, loader_s: 0.1}
///   rules:
///     - {name: "bert*", profile: bert-large}          # glob on the job name
///     - {min_gpus: 16, profile: bert-large}           # GPU-count range
struct ProfileRule {
  std::string name_glob;  // empty = any
  int64_t min_gpus = 0;
  int64_t max_gpus = INT64_MAX;
  std::string profile;
};
struct ProfileSet {
  std::map<std::string, WorkloadProfile> profiles;
  std::vector<ProfileRule> rules;
  [[nodiscard]] WorkloadProfile for_job(const Job& job) const;
};
[[nodiscard]] ProfileSet load_profiles(const std::string& path);
[[nodiscard]] ProfileSet parse_profiles(const std::string& text, const std::string& path);

enum class ReferencePlacement { kIdeal, kAsRecorded };

struct StepRuntimeOptions {
  ReferencePlacement reference = ReferencePlacement::kIdeal;
  bool contention = true;
  HostJobOptions host;  // memory binding and loader rho overrides
};

/// A step's parts at one placement, for reports and tests.
struct StepBreakdown {
  double compute_s = 0, comm_s = 0, load_s = 0, step_s = 0;
  double loader_factor = 1, staging_factor = 1, contention_slowdown = 1;
  std::string algo;
};

class StepRuntimeModel final : public RuntimeModel {
 public:
  /// `cluster`, `tuning`, `host` and `profiles` must outlive the model.
  StepRuntimeModel(const Cluster& cluster, const NcclTuning& tuning, const HostParams& host,
                   const ProfileSet& profiles, StepRuntimeOptions opt = {});
  ~StepRuntimeModel() override;

  [[nodiscard]] std::string name() const override { return "step"; }
  void job_started(int j, const Job& job, const JobShape& shape, const Allocation& a) override;
  void job_ended(int j) override;
  void changed_speeds(std::vector<std::pair<int, double>>& out) override;

  /// A job's step at an allocation, without contention (slowdown 1) unless it is running.
  [[nodiscard]] StepBreakdown step(const Job& job, const Allocation& a, int running_job = -1) const;
  /// Jobs started so far whose communication could not be modelled (no NICs between their nodes).
  [[nodiscard]] int64_t unmodelled_comm_jobs() const { return unmodelled_comm_; }
  /// The reference step time of a job with this shape (cached per job).
  [[nodiscard]] double reference_step_s(const Job& job, const JobShape& shape, const Allocation& actual) const;

 private:
  struct Running;
  [[nodiscard]] const NcclModel* nccl_for(const Allocation& a) const;
  [[nodiscard]] const HostModel& host_model(int node) const;
  [[nodiscard]] double speed_of(const Running& r) const;

  const Cluster* cluster_;
  const NcclTuning* tuning_;
  const ProfileSet* profiles_;
  StepRuntimeOptions opt_;
  std::vector<NodeTopology> topo_by_template_;
  std::vector<std::unique_ptr<HostModel>> host_by_template_;
  std::unique_ptr<LinkRegistry> links_;
  std::unique_ptr<ContentionSolver> solver_;
  std::unique_ptr<ClusterState> empty_;
  PlacementAllocator ideal_alloc_{PlacementMode::kNumaBound};
  mutable std::map<std::vector<std::pair<int, int>>, std::unique_ptr<NcclModel>> nccl_cache_;
  /// reference_step_s under --reference ideal depends on the shape (time limit aside)
  /// and the profile's numbers only: computed once per distinct pair (it placed every
  /// job on an empty cluster: 13% of a 100k-job GPU run). std::nullopt: no ideal
  /// placement, the job's own is used.
  using IdealKey = std::pair<JobShape, std::tuple<double, int64_t, int, double, int64_t, double, double>>;
  mutable std::map<IdealKey, std::optional<double>> ideal_cache_;
  /// What step() reads of HostModel::host_effects, per (node template, loader rho, the
  /// node's GPUs, cores and task bindings): the same node shapes recur across a GPU
  /// trace, and the host model was 14% of a 100k-job run. Cleared when it grows large.
  struct HostFigures {
    double loader_factor, staging_factor, h2d_Bps;
    bool host_staged;
  };
  mutable std::map<std::vector<int>, HostFigures> host_cache_;
  mutable std::vector<int> host_key_;  // scratch
  [[nodiscard]] const HostFigures& host_figures(const NodeAlloc& n, const HostJobOptions& ho) const;
  std::map<int, std::unique_ptr<Running>> running_;
  std::vector<int> started_;  // jobs started since the last changed_speeds()
  std::vector<int> visit_;    // changed_speeds() scratch: the jobs it revisits
  int64_t unmodelled_comm_ = 0;
};

}  // namespace gcsim
