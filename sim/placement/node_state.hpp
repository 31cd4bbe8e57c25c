// Free resources per node (cores, memory, typed GPUs) and what a job holds on each
// of its nodes. The scheduler mechanism allocates and releases; placement reads.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
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
};

/// A finished job's Allocation without its task bindings, packed into one array: a
/// run of consecutive nodes that hold the same (tasks, memory, cores, GPUs) is one
/// record, and its cores are runs of consecutive ids. A Curie job on 100 whole nodes
/// takes 32 bytes instead of about 18 KB of NodeAlloc and core lists; 15 million node
/// allocations kept to the end of a run cost 2.4 GB unpacked. Lossless: unpack()
/// gives back the nodes, cores and GPUs in their order.
class PackedAllocation {
 public:
  PackedAllocation() = default;
  explicit PackedAllocation(const Allocation& a);
  [[nodiscard]] bool empty() const { return words_.empty(); }
  /// Into `out`, without bindings.
  void unpack(Allocation& out) const;
  [[nodiscard]] size_t bytes() const { return words_.size() * sizeof(uint32_t); }

  /// One node as for_each_node hands it out, read in place.
  struct NodeView {
    int node = -1;
    int tasks = 0;
    int64_t mem_mb = 0;
    bool whole_node = false;
    const uint32_t* core_runs = nullptr;  // `runs` pairs (first core, count), maximal
    size_t runs = 0;
    int cores = 0;  // their total
    const uint32_t* gpu_words = nullptr;
    int gpus = 0;
    [[nodiscard]] int gpu(int g) const { return static_cast<int>(gpu_words[g / 4] >> (8 * (g % 4)) & 0xff); }
  };
  /// Calls f(const NodeView&) for each node, in the allocation's order.
  template <class F>
  void for_each_node(F&& f) const {
    NodeView v;
    for (size_t at = 0; at < words_.size();) {
      const uint32_t* w = words_.data() + at;
      v.tasks = static_cast<int>(w[2]);
      v.mem_mb = static_cast<int64_t>(static_cast<uint64_t>(w[4]) << 32 | w[3]);
      v.whole_node = (w[5] & 1U) != 0;
      v.gpus = static_cast<int>(w[5] >> 1 & 0xff);
      v.runs = w[5] >> 9;
      v.core_runs = w + 6;
      v.gpu_words = w + 6 + 2 * v.runs;
      v.cores = 0;
      for (size_t q = 0; q < v.runs; ++q) v.cores += static_cast<int>(v.core_runs[2 * q + 1]);
      for (uint32_t k = 0; k < w[1]; ++k) {
        v.node = static_cast<int>(w[0] + k);
        f(static_cast<const NodeView&>(v));
      }
      at += 6 + 2 * v.runs + (static_cast<size_t>(v.gpus) + 3) / 4;
    }
  }

 private:
  std::vector<uint32_t> words_;
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
  /// How many cores in [first, last) are free, a word at a time.
  [[nodiscard]] int count(int first, int last) const;
  /// Calls f(core) for each free core in [first, last), ascending.
  template <class F>
  void for_each(int first, int last, F&& f) const {
    for_words(first, last, [&](int w, uint64_t mask) {
      for (uint64_t bits = w_[w] & mask; bits != 0; bits &= bits - 1) f(w * 64 + std::countr_zero(bits));
      return false;
    });
  }

 private:
  // Calls f(word, mask of the bits of [first, last) in it) for each word the range
  // touches, until f returns true.
  template <class F>
  static void for_words(int first, int last, F&& f) {
    while (first < last) {
      const int w = first >> 6, lo = first & 63;
      const int hi = std::min(64, lo + (last - first));  // bits [lo, hi) of word w
      const uint64_t mask = (hi == 64 ? ~0ULL : (1ULL << hi) - 1) & ~((1ULL << lo) - 1);
      if (f(w, mask)) return;
      first += hi - lo;
    }
  }

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

/// Counters of one node. Trivial (no member initializers: value-initialize it,
/// NodeState{}, for zeros): the core bits live in the ClusterState's one flat array, so
/// copying a state (backfill's future states, millions per Curie run) is memcpys; with
/// initializers libstdc++ copied the vector element by element.
struct NodeState {
  uint32_t core_word;    // first word of this node's core bits in the state's array
  int free_cores;
  int64_t free_mem_mb;   // memory_mb == 0 in the template: not modelled
  uint64_t gpu_free;     // bit i = GPU i free (at most 64 GPUs per node)
  int free_gpus;
  int jobs;              // jobs holding anything here
};
static_assert(std::is_trivial_v<NodeState>);

/// Each partition's nodes in the order Slurm considers them (partition_node_order),
/// built once per ClusterState and shared by its copies. An allocator handed one of
/// these very vectors (ClusterState::partition_order) whose order is ascending node
/// ids can walk only the nodes with a free core, 64 nodes a word, instead of every node.
struct PartitionOrders {
  struct Part {
    std::vector<int> order;
    bool ascending = false;          // order is increasing node ids
    std::vector<uint64_t> members;   // bit n: node n is in the partition
  };
  std::vector<Part> parts;
};

class ClusterState {
 public:
  explicit ClusterState(const Cluster& cluster);

  /// A copy of `o`'s counters only (free cores per node and per node word, open nodes,
  /// totals, memory share), without its per-node records and core bits: a tenth of a
  /// full copy on Curie. It answers what free cores alone decide (open_bits,
  /// free_cores_by_node, word_free_cores, the totals, memory_follows_cores) and follows
  /// allocate() and release() like a full copy; node(), core_free() and idle() are not
  /// for it (summary() says which it is). Backfill's future states for the shapes
  /// whose selection free cores decide (SlurmSelector::plan_nodes).
  [[nodiscard]] static ClusterState summary_of(const ClusterState& o);
  [[nodiscard]] bool summary() const { return nodes_.empty() && !free_of_.empty(); }

  [[nodiscard]] const Cluster& cluster() const { return *cluster_; }
  [[nodiscard]] const NodeState& node(int i) const { return nodes_[i]; }
  [[nodiscard]] size_t size() const { return nodes_.size(); }
  [[nodiscard]] bool idle(int i) const { return nodes_[i].jobs == 0; }
  /// Node i's free cores, one bit per Slurm abstract core.
  [[nodiscard]] CoreBits core_free(int i) const {
    return {core_words_.data() + nodes_[i].core_word, cluster_->tmpl(i).cores()};
  }
  /// Partition p's nodes in Slurm's order (what partition_node_order gives).
  [[nodiscard]] const std::vector<int>& partition_order(int p) const { return orders_->parts[p].order; }
  /// When `order` is this state's partition_order(p) (the same vector) and ascending:
  /// the partition's member bits, which with open_bits() give its nodes with a free
  /// core in order. nullptr otherwise.
  [[nodiscard]] const uint64_t* scannable_members(const std::vector<int>& order, int p) const {
    if (p < 0 || static_cast<size_t>(p) >= orders_->parts.size()) return nullptr;
    const auto& part = orders_->parts[p];
    return &order == &part.order && part.ascending ? part.members.data() : nullptr;
  }
  /// Bit n set: node n has a free core. node_words() words.
  [[nodiscard]] const uint64_t* open_bits() const { return open_.data(); }
  [[nodiscard]] size_t node_words() const { return open_.size(); }
  /// Calls f(node) for every node with a free core (and, given `members`, with its bit
  /// set there; node_words() words), by increasing id, visiting a word of 64 nodes at
  /// a time (a busy cluster's full nodes cost nothing).
  template <class F>
  void for_each_open(F&& f, const uint64_t* members = nullptr) const {
    for (size_t w = 0; w < open_.size(); ++w)
      for (uint64_t bits = members ? open_[w] & members[w] : open_[w]; bits != 0; bits &= bits - 1)
        f(static_cast<int>(w * 64 + static_cast<size_t>(std::countr_zero(bits))));
  }
  /// Every node's free cores, by node id (nodes_[i].free_cores, packed: sums over runs
  /// of nodes read 16 to a cache line rather than 2).
  [[nodiscard]] const int32_t* free_cores_by_node() const { return free_of_.data(); }
  /// The free cores of nodes [64 w, 64 w + 64).
  [[nodiscard]] int64_t word_free_cores(size_t w) const { return word_free_[w]; }
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
  /// True when every resource of `a` is currently free (a summary: enough free cores
  /// on each of its nodes, and GPUs in all).
  [[nodiscard]] bool fits(const Allocation& a) const;
  /// How many allocate() and release() calls this state has had (its copies carry
  /// the count on): lets a cache of derived states tell whether it missed one.
  [[nodiscard]] uint64_t changes() const { return changes_; }

 private:
  struct Summary {};
  ClusterState(const ClusterState& o, Summary tag);
  /// allocate() (sign -1) and release() (+1) of a summary: its counters only.
  void count(const Allocation& a, int sign);

  const Cluster* cluster_;
  std::vector<NodeState> nodes_;
  std::vector<uint64_t> core_words_;  // every node's core bits, node after node
  std::vector<uint64_t> open_;        // bit n: nodes_[n].free_cores > 0
  std::vector<int64_t> word_free_;    // free cores of each word's 64 nodes
  std::vector<int32_t> free_of_;      // nodes_[n].free_cores, packed
  std::shared_ptr<const PartitionOrders> orders_;
  int64_t free_cores_total_ = 0;
  int64_t free_gpus_total_ = 0;
  int max_tpc_ = 1;
  int64_t mem_heavy_ = 0;  // node allocations held for which memory_heavy()
  int64_t mem_per_core_floor_ = INT64_MAX;  // min over nodes with memory: MB / (cores x threads)
  uint64_t changes_ = 0;
};


}  // namespace gcsim
