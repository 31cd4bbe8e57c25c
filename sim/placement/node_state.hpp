// Free resources per node (cores, memory, typed GPUs) and what a job holds on each
// of its nodes. The scheduler mechanism allocates and releases; placement reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cluster/cluster.hpp"
#include "sim/core/input_file.hpp"  // format_id_list

namespace gcsim {

/// What one job holds on one node. Core ids are Slurm's abstract core numbers;
/// CPU ids (threads) are core * threads_per_core + thread.
/// One task's binding on its node, as task/affinity and --gpu-bind would set it.
struct TaskBinding {
  std::vector<int> cores;  // Slurm abstract core ids
  std::vector<int> gpus;   // GPU indices on the node the task may use
  int mem_numa = -1;       // NUMA domain of its memory (--mem-bind=local)
};

struct NodeAlloc {
  int node = -1;
  int tasks = 0;
  std::vector<TaskBinding> bindings;  // per task, when the allocator computed them
  std::vector<int> cores;  // sorted
  std::vector<int> gpus;   // sorted GPU indices on the node
  int64_t mem_mb = 0;
  bool whole_node = false;  // --exclusive
};

struct Allocation {
  std::vector<NodeAlloc> nodes;  // sorted by node index
  [[nodiscard]] int64_t cores() const;
  [[nodiscard]] int64_t gpus() const;
  [[nodiscard]] int64_t tasks() const;
};

struct NodeState {
  std::vector<uint8_t> core_free;  // 1 = free, per core
  int free_cores = 0;
  int64_t free_mem_mb = 0;   // memory_mb == 0 in the template: not modelled
  uint64_t gpu_free = 0;     // bit i = GPU i free (at most 64 GPUs per node)
  int free_gpus = 0;
  int jobs = 0;              // jobs holding anything here
};

class ClusterState {
 public:
  explicit ClusterState(const Cluster& cluster);

  [[nodiscard]] const Cluster& cluster() const { return *cluster_; }
  [[nodiscard]] const NodeState& node(int i) const { return nodes_[i]; }
  [[nodiscard]] size_t size() const { return nodes_.size(); }
  [[nodiscard]] bool idle(int i) const { return nodes_[i].jobs == 0; }
  [[nodiscard]] int64_t free_cores_total() const { return free_cores_total_; }
  [[nodiscard]] int64_t free_gpus_total() const { return free_gpus_total_; }
  [[nodiscard]] int max_threads_per_core() const { return max_tpc_; }

  /// Takes the allocation's resources. The caller guarantees they are free
  /// (checked in debug builds; a violation is a bug, reported by exception).
  void allocate(const Allocation& a);
  void release(const Allocation& a);
  /// True when every resource of `a` is currently free.
  [[nodiscard]] bool fits(const Allocation& a) const;

 private:
  const Cluster* cluster_;
  std::vector<NodeState> nodes_;
  int64_t free_cores_total_ = 0;
  int64_t free_gpus_total_ = 0;
  int max_tpc_ = 1;
};


}  // namespace gcsim
