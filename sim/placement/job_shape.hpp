// A job's request normalised against one cluster: sbatch's defaults applied
// (node counts from tasks, partition, time limit, memory defaults), ready for
// an allocator. Built once per job; an impossible request gets a reason instead.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/cluster.hpp"
#include "sim/workload/job.hpp"

namespace gcsim {

struct JobShape {
  int partition = -1;
  bool fixed_nodes = true;   // true: exactly nodes_min nodes; false: 1..nodes_max
  int nodes_min = 1;
  int nodes_max = 1;
  int tasks = 1;
  int tasks_per_node = 0;    // 0 = not given
  int cpus_per_task = 1;
  int cpus_per_gpu = 0;
  std::string gpu_type;      // empty = any type
  /// GPU types the job may use, any one of them (Alibaba gpu_spec); empty = any.
  std::vector<std::string> gpu_types_allowed;
  /// Whether a GPU of this GRES type may serve the job.
  [[nodiscard]] bool gpu_type_ok(const std::string& type) const {
    if (!gpu_type.empty() && type != gpu_type) return false;
    return gpu_types_allowed.empty() ||
           std::find(gpu_types_allowed.begin(), gpu_types_allowed.end(), type) != gpu_types_allowed.end();
  }
  int gpus_per_node = 0;
  int gpus_per_task = 0;
  int gpus_total = 0;
  int64_t mem_per_node_mb = -1;  // -1 = not given
  int64_t mem_per_cpu_mb = -1;
  int64_t mem_per_gpu_mb = -1;
  bool mem_whole_node = false;   // --mem=0
  bool exclusive = false;
  bool enforce_binding = false;  // --gres-flags=enforce-binding
  std::string cpu_bind;          // --cpu-bind, verbatim
  std::string gpu_bind;          // --gpu-bind, verbatim
  std::string distribution;      // -m, verbatim ("block:cyclic")
  SimTime time_limit = SimTime::infinite();
  int switches = 0;                       // --switches=N (0 = not given)
  std::optional<SimTime> switches_wait;   // --switches=N@wait

  /// Total GPUs the job asks for (for ReqTRES).
  [[nodiscard]] int64_t requested_gpus() const;
  [[nodiscard]] int64_t requested_cpus() const;
  /// No GPU of any kind and no --cpus-per-gpu: tasks need cores (and memory) only.
  [[nodiscard]] bool cpu_only() const {
    return gpus_total == 0 && gpus_per_node == 0 && gpus_per_task == 0 && cpus_per_gpu == 0;
  }
  /// Field by field (a key for per-shape memos).
  auto operator<=>(const JobShape&) const = default;
};

/// Normalises `job` for `cluster`. On failure returns std::nullopt and sets `why`
/// to the message Slurm would give (e.g. "invalid partition name specified").
[[nodiscard]] std::optional<JobShape> make_job_shape(const Job& job, const Cluster& cluster, std::string* why);

/// Nodes of a partition in the order Slurm considers them: lowest Weight first,
/// then node order.
[[nodiscard]] std::vector<int> partition_node_order(const Cluster& cluster, int partition);

}  // namespace gcsim
