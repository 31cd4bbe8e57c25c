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
  /// Whether every task with GPUs has its cores and memory on NUMA domains of its GPUs
  /// (from the bindings; true when there are none).
  [[nodiscard]] bool gpu_tasks_numa_local(const Cluster& cluster) const;
  /// Frees the per-task bindings (what a finished job no longer needs).
  void drop_bindings();
};

/// The free cores of one node as bits (bit c % 64 of word c / 64 set: core c is free).
/// A view into storage its owner keeps: a ClusterState or a CoreMask.
class CoreBits {
 public:
  CoreBits() = default;
  CoreBits(const uint64_t* words, int cores) : w_(words), n_(cores) {}
  [[nodiscard]] bool operator[](int c) const { return (w_[c >> 6] >> (c & 63)) & 1U; }
  [[nodiscard]] int size() const { return n_; }
  [[nodiscard]] int count() const;
  [[nodiscard]] bool all() const { return count() == n_; }
  /// Whether any core in [first, last) is free, a word at a time.
  [[nodiscard]] bool any(int first, int last) const;

 private:
  const uint64_t* w_ = nullptr;
  int n_ = 0;
};

/// An owned free-core mask, for callers that place without a ClusterState (the
/// real mode, tests).
class CoreMask {
 public:
  explicit CoreMask(int cores = 0, bool free = true);
  void set(int c, bool free);
  [[nodiscard]] bool operator[](int c) const { return bits()[c]; }
  [[nodiscard]] CoreBits bits() const { return {w_.data(), n_}; }
  operator CoreBits() const { return bits(); }  // NOLINT: a mask reads as its bits

 private:
  std::vector<uint64_t> w_;
  int n_ = 0;
};

/// Words needed for `cores` bits.
[[nodiscard]] constexpr size_t core_words(int cores) { return (static_cast<size_t>(cores) + 63) / 64; }

/// Counters of one node. Trivially copyable: the core bits live in the ClusterState's
/// one flat array, so copying a state (the backfill shadow) is two memcpys.
struct NodeState {
  uint32_t core_word = 0;    // first word of this node's core bits in the state's array
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
  /// Node i's free cores, one bit per Slurm abstract core.
  [[nodiscard]] CoreBits core_free(int i) const {
    return {core_words_.data() + nodes_[i].core_word, cluster_->tmpl(i).cores()};
  }
  [[nodiscard]] int64_t free_cores_total() const { return free_cores_total_; }
  [[nodiscard]] int64_t free_gpus_total() const { return free_gpus_total_; }
  [[nodiscard]] int max_threads_per_core() const { return max_tpc_; }
  /// True when no node's free memory can limit a job asking `mem_per_cpu_mb` per CPU
  /// below its free cores: every allocation held has at most its cores' share of its
  /// node's memory (then free memory keeps at least the free cores' share), and that
  /// share covers `mem_per_cpu_mb` on every node.
  [[nodiscard]] bool memory_follows_cores(int64_t mem_per_cpu_mb) const {
    return mem_heavy_ == 0 && mem_per_cpu_mb <= mem_per_core_floor_;
  }
  /// True when `na` holds more than its cores' share of its node's memory.
  [[nodiscard]] bool memory_heavy(const NodeAlloc& na) const;

  /// Takes the allocation's resources. The caller guarantees they are free
  /// (checked in debug builds; a violation is a bug, reported by exception).
  void allocate(const Allocation& a);
  void release(const Allocation& a);
  /// True when every resource of `a` is currently free.
  [[nodiscard]] bool fits(const Allocation& a) const;

 private:
  const Cluster* cluster_;
  std::vector<NodeState> nodes_;
  std::vector<uint64_t> core_words_;  // every node's core bits, node after node
  int64_t free_cores_total_ = 0;
  int64_t free_gpus_total_ = 0;
  int max_tpc_ = 1;
  int64_t mem_heavy_ = 0;  // node allocations held for which memory_heavy()
  int64_t mem_per_core_floor_ = INT64_MAX;  // min over nodes with memory: MB / (cores x threads)
};


}  // namespace gcsim
