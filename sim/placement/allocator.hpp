// The seam between scheduling and placement: given a job's shape and the free
// state, choose nodes, cores, GPUs and memory, or say why it does not fit now.
// `LinearAllocator` is the baseline (lowest free ids); the placement library in
// models/placement provides Slurm's cons_tres order and the NUMA-aware modes.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/placement/job_shape.hpp"
#include "sim/placement/node_state.hpp"

namespace gcsim {

class Allocator {
 public:
  virtual ~Allocator() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  /// Chooses an allocation from `state` over `node_order` (candidate nodes in
  /// preference order). std::nullopt = does not fit now.
  [[nodiscard]] virtual std::optional<Allocation> allocate(const JobShape& shape, const ClusterState& state,
                                                           const std::vector<int>& node_order) const = 0;
  /// True when allocate() succeeds for `shape` exactly when FitBound::may_fit() holds,
  /// so a scheduler that only asks "would it fit" may trust the bound and not place.
  [[nodiscard]] virtual bool bound_is_exact(const JobShape& shape) const {
    (void)shape;
    return false;
  }
  /// Whether allocate() would succeed: the bound alone where it is exact, else placing.
  [[nodiscard]] bool fits(const JobShape& shape, const ClusterState& state, const std::vector<int>& node_order) const;
};

/// Per-node building block shared by allocators: what `tasks` tasks with `gpus`
/// GPUs of the shape need on node `node`, taken lowest-id-first; std::nullopt when
/// the node cannot hold them now.
[[nodiscard]] std::optional<NodeAlloc> take_on_node_linear(const JobShape& shape, const ClusterState& state,
                                                           int node, int tasks, int gpus);

/// Whole cores that `cpus` CPUs take at `tpc` threads per core (rounded up).
[[nodiscard]] int cores_for_cpus(int64_t cpus, int tpc);
/// GPUs of the shape's type that are free on `node`, lowest index first.
[[nodiscard]] std::vector<int> free_gpus_of_type(const JobShape& shape, const ClusterState& state, int node);
/// How many there are (free_gpus_of_type(...).size(), without building the list).
[[nodiscard]] int count_free_gpus_of_type(const JobShape& shape, const ClusterState& state, int node);
/// Whole cores `tasks` tasks with `gpus` GPUs of the shape take on a node of template `t`
/// (CR_Core: each task rounded up to whole cores; --cpus-per-gpu; all for --exclusive).
[[nodiscard]] int cores_needed(const JobShape& shape, const NodeTemplate& t, int tasks, int gpus);
/// Memory (MiB) the shape charges on such a node: --mem, --mem-per-cpu x CPUs,
/// --mem-per-gpu x GPUs, or the whole node for --exclusive / --mem=0.
[[nodiscard]] int64_t node_memory_mb(const JobShape& shape, const NodeTemplate& t, int tasks, int gpus);

/// How many of the shape's tasks (each with gpus_per_task GPUs) node `node` can take now.
[[nodiscard]] int max_tasks_on_node(const JobShape& shape, const ClusterState& state, int node);

/// The fewest cores the shape's CPUs take anywhere in `state` (at its most threads per core).
[[nodiscard]] int64_t min_cores(const JobShape& shape, const ClusterState& state);

/// A necessary condition, in O(1): the cluster-wide free cores and GPUs could hold
/// the shape. Lets a scheduler skip node-by-node searches that cannot succeed.
[[nodiscard]] bool totals_allow(const JobShape& shape, const ClusterState& state);

/// A necessary condition for NodeLoopAllocator::allocate to succeed, from node-by-node
/// upper bounds on what the shape could hold, kept current as single nodes change:
/// packed shapes sum min(tasks, max_tasks_on_node) and the free GPUs of the nodes that
/// could take a task; fixed node counts count the nodes that could hold the smallest
/// share. allocate() fails whenever may_fit() is false (it tests this first), so a
/// scheduler that releases or takes jobs one by one (EASY's shadow search) refreshes
/// the nodes they touch and places only when the bound allows it.
class FitBound {
 public:
  FitBound(const JobShape& shape, const ClusterState& state, const std::vector<int>& node_order);
  /// Recomputes `node`'s bound after its free resources changed in the state.
  void refresh(int node);
  void refresh(const Allocation& a) {
    if (free_cores_only_) return;
    for (const auto& na : a.nodes) refresh(na.node);
  }
  [[nodiscard]] bool may_fit() const;
  /// Packed CPU-only shapes of one core per task with no per-node or exclusive limit,
  /// over every node, asking no memory or memory the state shows cannot bind
  /// (ClusterState::memory_follows_cores): the bound is then the free-core total alone.
  /// With memory, true of the state as it is now: taking a memory-heavy allocation
  /// can make it false.
  [[nodiscard]] static bool decided_by_free_cores(const JobShape& shape, const ClusterState& state,
                                                  const std::vector<int>& node_order);

  /// One node's part: tasks it could take (packed) or 1 if it could hold a share (fixed), and GPUs.
  struct Term {
    int64_t tasks = 0, gpus = 0;
  };

 private:
  const JobShape* shape_;
  const ClusterState* state_;
  bool free_cores_only_;      // one core per task, nothing else limits: the free-core total decides
  std::vector<uint8_t> pos_;  // per node: 1 when in the node order
  std::vector<Term> terms_;   // per node
  Term sum_;
  std::pair<int, int> share_{0, 0};  // fixed node counts: tasks and GPUs of the smallest share
};

/// Candidate nodes in preference order, handed out one at a time: a list as given,
/// the open member nodes by id, or a one-node job's best candidate first and then, only
/// if asked, the others from a heap of their keys. Keys are unique (they end in the
/// node's position), so the order is total and the same as sorting them.
class NodeOrder {
 public:
  struct Ranked {
    int64_t key1 = 0;
    int64_t key2 = 0;
    size_t pos = 0;
    int node = -1;
  };
  /// Hands out `list` in its order (kept by reference: it must outlive the cursor's use).
  void use_list(const std::vector<int>& list) {
    mode_ = Mode::kList;
    list_ = &list;
    next_ = 0;
  }
  /// Hands out, by increasing id, the nodes whose bits are set in both `members` and
  /// `open` (`words` words each; kept by pointer).
  void use_scan(const uint64_t* members, const uint64_t* open, size_t words) {
    mode_ = Mode::kScan;
    members_ = members;
    open_ = open;
    words_ = words;
    next_ = 0;
    bits_ = words > 0 ? members[0] & open[0] : 0;
  }
  /// Fills `keys` with every candidate's key.
  using Refill = void (*)(const JobShape& shape, const ClusterState& state, const std::vector<int>& node_order,
                          std::vector<Ranked>& keys);
  /// Hands out `best` (the least key of every candidate, node -1 for none) first. Asked
  /// for more, calls `refill` and goes on in ranked order. A one-node job nearly always
  /// takes the first node it tries, so the search for it may skip every node whose key
  /// cannot be the least, and the full list is built only in the rare other case. The
  /// arguments are kept by pointer until the cursor is set up again.
  void use_best(const Ranked& best, Refill refill, const JobShape& shape, const ClusterState& state,
                const std::vector<int>& node_order) {
    mode_ = Mode::kBest;
    best_ = best;
    best_given_ = false;
    refill_ = refill;
    shape_ = &shape;
    state_ = &state;
    list_ = &node_order;
  }
  /// Whether the cursor hands out `list` as given (use_list(list) was the last set-up).
  [[nodiscard]] bool lists(const std::vector<int>& list) const { return mode_ == Mode::kList && list_ == &list; }
  /// The next node, or -1 when none is left.
  int next() {
    switch (mode_) {
      case Mode::kList:
        return next_ < list_->size() ? (*list_)[next_++] : -1;
      case Mode::kScan:
        while (bits_ == 0) {
          if (++next_ >= words_) return -1;
          bits_ = members_[next_] & open_[next_];
        }
        {
          const int node = static_cast<int>(next_ * 64 + static_cast<size_t>(std::countr_zero(bits_)));
          bits_ &= bits_ - 1;
          return node;
        }
      case Mode::kRanked:
        return pop_ranked();
      case Mode::kBest:
        if (!best_given_) {
          best_given_ = true;
          return best_.node;
        }
        return best_.node < 0 ? -1 : after_best();
    }
    return -1;
  }

 private:
  enum class Mode { kList, kScan, kRanked, kBest };
  int pop_ranked();
  int after_best();
  Mode mode_ = Mode::kList;
  const std::vector<int>* list_ = nullptr;  // list; best: the node order refill gets
  size_t next_ = 0;  // list: next position; scan: current word
  const uint64_t* members_ = nullptr;
  const uint64_t* open_ = nullptr;
  size_t words_ = 0;
  uint64_t bits_ = 0;           // scan: the current word's nodes not yet handed out
  std::vector<Ranked> ranked_;  // a heap with the least key on top
  Ranked best_;  // best: handed out first
  bool best_given_ = false;
  Refill refill_ = nullptr;
  const JobShape* shape_ = nullptr;
  const ClusterState* state_ = nullptr;
};

/// Calls f(node, key) for each node of `order` with a free core, in order; `key`
/// increases along the order (the position, or the node id where order is ascending).
/// Where `order` is state.partition_order(partition) and ascending, only words of nodes
/// with a free core are visited.
template <class F>
void for_each_open_node(const ClusterState& state, const std::vector<int>& order, int partition, F&& f) {
  if (const uint64_t* members = state.scannable_members(order, partition)) {
    state.for_each_open([&](int n) { f(n, static_cast<size_t>(n)); }, members);
    return;
  }
  for (size_t i = 0; i < order.size(); ++i)
    if (state.node(order[i]).free_cores > 0) f(order[i], i);
}

/// Whether node `node` could hold the whole of a one-node shape now (a necessary
/// condition for take_on_node to succeed there; the node-by-node bound of FitBound).
[[nodiscard]] bool node_may_hold_one_node_job(const JobShape& shape, const ClusterState& state, int node);

/// Chooses nodes in preference order (fixed node counts spread tasks evenly, free
/// counts pack tasks onto as few nodes as possible) and asks `take_on_node` what to
/// hold on each. Placement policies override only the per-node choice.
class NodeLoopAllocator : public Allocator {
 public:
  [[nodiscard]] std::optional<Allocation> allocate(const JobShape& shape, const ClusterState& state,
                                                   const std::vector<int>& node_order) const final;
  /// What `tasks` tasks with `gpus` GPUs hold on `node`, or std::nullopt.
  [[nodiscard]] virtual std::optional<NodeAlloc> take_on_node(const JobShape& shape, const ClusterState& state,
                                                              int node, int tasks, int gpus) const = 0;
  /// Packed CPU-only shapes that may spread over as many nodes as they have tasks: the
  /// loop then takes min(left, max_tasks_on_node) from every node in turn, so it
  /// succeeds exactly when the bound's sum reaches the tasks, provided take_on_node
  /// always holds any count up to max_tasks_on_node (takes_any_cpu_count()).
  [[nodiscard]] bool bound_is_exact(const JobShape& shape) const final;
  /// Whether take_on_node holds any k <= max_tasks_on_node tasks of a CPU-only shape
  /// (true for lowest-id and Slurm's order; not for modes that keep a task in one domain).
  [[nodiscard]] virtual bool takes_any_cpu_count() const { return false; }
  /// The order in which nodes are tried, into `out`; the default keeps the partition's
  /// order (lowest Weight first, then node order).
  virtual void order_nodes(const JobShape& shape, const ClusterState& state, const std::vector<int>& node_order,
                           NodeOrder& out) const {
    (void)shape;
    (void)state;
    out.use_list(node_order);
  }
};

/// The baseline: lowest free core ids and GPU indices, no affinity.
class LinearAllocator final : public NodeLoopAllocator {
 public:
  [[nodiscard]] std::string name() const override { return "linear"; }
  [[nodiscard]] std::optional<NodeAlloc> take_on_node(const JobShape& shape, const ClusterState& state, int node,
                                                      int tasks, int gpus) const override {
    return take_on_node_linear(shape, state, node, tasks, gpus);
  }
  [[nodiscard]] bool takes_any_cpu_count() const override { return true; }
};

}  // namespace gcsim
