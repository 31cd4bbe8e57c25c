// select/cons_tres as the `slurm` policy uses it (slurm_internals.md 4.1-4.7): which
// nodes a job gets and how many tasks and GPUs on each; cores and GPU indices inside
// each node then come from the placement library in slurm mode.
//
// Node choice: each usable node gets sched_weight = Weight << 8 | (0xff - near GPUs);
// without topology, consecutive runs of equal weight in node order, the lowest weight,
// the tightest sufficient run (else the largest), best fit (fewest free CPUs) for the
// last node, index order otherwise; with topology/tree, weight tiers, then leaf
// switches by fit, nodes of a leaf in index order, and --switches enforced until the
// job has waited min(--switches wait, max_switch_wait).
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "models/placement/placement.hpp"
#include "models/sched/slurm_config.hpp"
#include "sim/placement/job_shape.hpp"
#include "sim/placement/node_state.hpp"

namespace gcsim {

class SlurmSelector {
 public:
  SlurmSelector(const Cluster& cluster, const SlurmSchedConfig& cfg);

  /// An allocation on nodes with allowed[node] != 0, or std::nullopt. `waited` is how
  /// long the job has been eligible (for --switches). `leaves_used` (when not null)
  /// gets the number of leaf switches of the result. With `place` false the result may
  /// be a plan: nodes and task counts without cores where placing cannot fail (CPU-only
  /// shapes), which is all a backfill reservation reads.
  [[nodiscard]] std::optional<Allocation> select(const JobShape& shape, const ClusterState& state,
                                                 const std::vector<uint8_t>& allowed, SimTime waited,
                                                 int* leaves_used = nullptr, bool place = true) const;
  /// Whether select() on these arguments could succeed, from free totals and one pass
  /// over the allowed nodes' free cores, without choosing. False means select() fails.
  /// `*exact` is set when true also means it succeeds (CPU-only packed shapes, memory
  /// following cores, no topology); otherwise true means only that it may.
  [[nodiscard]] bool may_select(const JobShape& shape, const ClusterState& state, const std::vector<uint8_t>& allowed,
                                bool* exact) const;
  /// may_select() with the allowed nodes as bits (state.node_words() words).
  [[nodiscard]] bool may_select(const JobShape& shape, const ClusterState& state, const uint64_t* allowed,
                                bool* exact) const;
  /// may_select() for a shape free_core_sum_decides_bound() accepts, from the allowed
  /// nodes' free cores as the caller summed them (`allowed_free`): the same answer
  /// without the pass over the nodes.
  [[nodiscard]] bool may_select_counted(const JobShape& shape, const ClusterState& state, int64_t allowed_free,
                                        bool* exact) const;
  /// Shapes for which may_select() is false whenever the allowed nodes' free cores sum
  /// below the tasks (one-core tasks, no per-node limit, not one node): a caller that
  /// knows that sum by counting can refuse without calling it.
  [[nodiscard]] static bool free_core_sum_decides_bound(const JobShape& shape);
  /// Shapes for which may_select()'s true means select() succeeds once the free cores
  /// hold the tasks (CPU-only packed shapes, memory following cores, no topology).
  [[nodiscard]] bool select_is_exact(const JobShape& shape, const ClusterState& state) const;
  /// The nodes select(shape, state, allowed, ..., place = false) would give, as
  /// [first, last] runs by increasing id, for a shape select_is_exact() accepts
  /// (logic_error otherwise), with the allowed nodes as bits (state.node_words() words):
  /// what a backfill reservation reads, without building an Allocation. std::nullopt
  /// where select() fails. Into the caller's `ranges` (false where select() fails):
  /// backfill plans a million reservations in a mid-Curie run.
  [[nodiscard]] std::optional<std::vector<std::pair<int, int>>> plan_nodes(const JobShape& shape,
                                                                           const ClusterState& state,
                                                                           const uint64_t* allowed) const;
  [[nodiscard]] bool plan_nodes(const JobShape& shape, const ClusterState& state, const uint64_t* allowed,
                                std::vector<std::pair<int, int>>& ranges) const;
  [[nodiscard]] const PlacementAllocator& placer() const { return placer_; }
  /// Whether select() builds the capacities of may_select-exact shapes from free core
  /// counts alone (on by default; tests turn it off to compare with capacity()).
  void set_count_caps(bool on) { count_caps_ = on; }
  [[nodiscard]] bool uses_topology(const JobShape& shape) const;

 private:
  struct Cap {
    int node = -1;
    int tasks = 0;          // most tasks it can take now
    int gpus = 0;           // GPUs of the job's type it can give (per-job --gpus)
    int avail_cpus = 0;
    int64_t weight = 0;     // sched_weight
  };
  /// `first_pass`: Slurm's first pass, GPUs only with free cores on their sockets
  /// (NodeRequest::first_pass).
  [[nodiscard]] std::optional<Cap> capacity(const JobShape& shape, const ClusterState& state, int node,
                                            bool first_pass) const;
  [[nodiscard]] std::optional<Allocation> finish(const JobShape& shape, const ClusterState& state,
                                                 const std::vector<Cap>& chosen, bool place, bool first_pass) const;
  [[nodiscard]] std::vector<Cap> choose_flat(const JobShape& shape, const std::vector<Cap>& caps) const;
  [[nodiscard]] std::vector<Cap> choose_topo(const JobShape& shape, const std::vector<Cap>& caps) const;
  /// choose_flat() for select_is_exact() shapes, with the capacities taken from the free
  /// cores as it goes: sets are runs of consecutive allowed open nodes, summed as they
  /// are found, and a taken set is walked by node id. `allowed_word(w)` gives the
  /// allowed bits of node word w. The chosen nodes go to `ranges` as [first, last]
  /// runs in id order; false (and no ranges) where choose_flat finds none.
  template <class AllowedWord>
  [[nodiscard]] bool may_select_in(const JobShape& shape, const ClusterState& state, AllowedWord allowed_word,
                                   bool* exact) const;
  template <class AllowedWord>
  bool choose_exact(const JobShape& shape, const ClusterState& state, AllowedWord allowed_word,
                    std::vector<std::pair<int, int>>& ranges) const;
  [[nodiscard]] int leaf_count(const std::vector<Cap>& chosen) const;

  const Cluster* cluster_;
  SlurmSchedConfig cfg_;
  PlacementAllocator placer_{PlacementMode::kSlurm};
  std::vector<int> leaf_of_;                 // node -> leaf switch index, -1 = none
  std::vector<std::vector<int>> leaf_nodes_; // leaf switch -> nodes
  std::vector<int64_t> cpu_weight_;          // node -> sched_weight of a CPU-only job
  std::vector<int> tpc_;                     // node -> threads per core
  /// A node word whose 64 nodes all exist and share weight and threads per core: when
  /// a job's tasks and CPUs reach max_cores on each, choose_exact sums the word's free
  /// cores (ClusterState::word_free_cores) instead of its nodes'.
  struct PlainWord {
    bool plain = false;
    int64_t weight = 0;
    int tpc = 1;
    int max_cores = 0;
  };
  std::vector<PlainWord> words_;
  int max_cores_ = 0;                        // most cores of any node
  bool count_caps_ = true;
};

}  // namespace gcsim
