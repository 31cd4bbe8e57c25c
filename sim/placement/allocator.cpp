#include "sim/placement/allocator.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <tuple>

namespace gcsim {

int cores_for_cpus(int64_t cpus, int tpc) { return static_cast<int>((cpus + tpc - 1) / tpc); }

namespace {

int64_t mem_needed(const JobShape& shape, const NodeTemplate& t, int cores, int gpus) {
  if (shape.exclusive || shape.mem_whole_node) return t.memory_mb;
  if (shape.mem_per_node_mb >= 0) return shape.mem_per_node_mb;
  if (shape.mem_per_cpu_mb >= 0) return shape.mem_per_cpu_mb * cores * t.threads_per_core;
  if (shape.mem_per_gpu_mb >= 0) return shape.mem_per_gpu_mb * gpus;
  return 0;
}

}  // namespace

std::vector<int> free_gpus_of_type(const JobShape& shape, const ClusterState& state, int node) {
  std::vector<int> out;
  const auto& t = state.cluster().tmpl(node);
  const auto& s = state.node(node);
  for (size_t g = 0; g < t.gpus.size(); ++g)
    if ((s.gpu_free >> g & 1) && shape.gpu_type_ok(t.gpus[g].gres_type))
      out.push_back(static_cast<int>(g));
  return out;
}

int count_free_gpus_of_type(const JobShape& shape, const ClusterState& state, int node) {
  const auto& s = state.node(node);
  if (shape.gpu_type.empty() && shape.gpu_types_allowed.empty()) return s.free_gpus;
  const auto& t = state.cluster().tmpl(node);
  int n = 0;
  for (uint64_t bits = s.gpu_free; bits != 0; bits &= bits - 1) {
    const auto g = static_cast<size_t>(std::countr_zero(bits));
    n += g < t.gpus.size() && shape.gpu_type_ok(t.gpus[g].gres_type);
  }
  return n;
}

int cores_needed(const JobShape& shape, const NodeTemplate& t, int tasks, int gpus) {
  if (shape.exclusive) return t.cores();
  int64_t cpus = static_cast<int64_t>(tasks) * shape.cpus_per_task;
  if (shape.cpus_per_gpu > 0) cpus = std::max<int64_t>(cpus, static_cast<int64_t>(shape.cpus_per_gpu) * gpus);
  // Each task gets whole cores (CR_Core): round each task up separately.
  return std::max(cores_for_cpus(cpus, t.threads_per_core),
                  tasks * cores_for_cpus(shape.cpus_per_task, t.threads_per_core));
}

int64_t node_memory_mb(const JobShape& shape, const NodeTemplate& t, int tasks, int gpus) {
  return mem_needed(shape, t, cores_needed(shape, t, tasks, gpus), gpus);
}

int max_tasks_on_node(const JobShape& shape, const ClusterState& state, int node) {
  const auto& t = state.cluster().tmpl(node);
  const auto& s = state.node(node);
  if (s.free_cores == 0 || (shape.exclusive && s.jobs > 0)) return 0;  // every task takes a core
  const int per_task_cores = cores_for_cpus(shape.cpus_per_task, t.threads_per_core);
  int k = per_task_cores > 0 ? s.free_cores / per_task_cores : s.free_cores;
  if (shape.tasks_per_node > 0) k = std::min(k, shape.tasks_per_node);
  if (shape.gpus_per_task > 0)
    k = std::min(k, count_free_gpus_of_type(shape, state, node) / shape.gpus_per_task);
  if (shape.gpus_per_node > 0 && count_free_gpus_of_type(shape, state, node) < shape.gpus_per_node)
    return 0;
  if (t.memory_mb > 0 && !shape.exclusive && !shape.mem_whole_node) {
    if (shape.mem_per_cpu_mb > 0) {
      const int64_t per_task = shape.mem_per_cpu_mb * per_task_cores * t.threads_per_core;
      k = std::min<int64_t>(k, s.free_mem_mb / per_task);
    } else if (shape.mem_per_node_mb > s.free_mem_mb) {
      return 0;
    }
  }
  if ((shape.exclusive || shape.mem_whole_node) && t.memory_mb > 0 && s.free_mem_mb < t.memory_mb) return 0;
  return std::max(k, 0);
}

std::optional<NodeAlloc> take_on_node_linear(const JobShape& shape, const ClusterState& state, int node, int tasks,
                                             int gpus) {
  const auto& t = state.cluster().tmpl(node);
  const auto& s = state.node(node);
  if (shape.exclusive && s.jobs > 0) return std::nullopt;
  NodeAlloc na;
  na.node = node;
  na.tasks = tasks;
  na.whole_node = shape.exclusive;
  const int ncores = cores_needed(shape, t, tasks, gpus);
  if (ncores > s.free_cores) return std::nullopt;
  const auto free_gpus = free_gpus_of_type(shape, state, node);
  if (gpus > static_cast<int>(free_gpus.size())) return std::nullopt;
  na.mem_mb = mem_needed(shape, t, ncores, gpus);
  if (t.memory_mb > 0 && na.mem_mb > s.free_mem_mb) return std::nullopt;
  const CoreBits free = state.core_free(node);
  for (int c = 0; c < t.cores() && static_cast<int>(na.cores.size()) < ncores; ++c)
    if (free[c]) na.cores.push_back(c);
  if (shape.exclusive) {
    for (size_t g = 0; g < t.gpus.size(); ++g) na.gpus.push_back(static_cast<int>(g));
  } else {
    na.gpus.assign(free_gpus.begin(), free_gpus.begin() + gpus);
  }
  return na;
}

int64_t min_cores(const JobShape& shape, const ClusterState& state) {
  const int tpc = state.max_threads_per_core();
  return (shape.requested_cpus() + tpc - 1) / tpc;
}

bool totals_allow(const JobShape& shape, const ClusterState& state) {
  return state.free_cores_total() >= min_cores(shape, state) && state.free_gpus_total() >= shape.requested_gpus();
}

namespace {

// What node `i` of a fixed node count holds: tasks and per-job GPUs spread evenly
// (block). Node n-1's share is the smallest.
std::pair<int, int> fixed_share(const JobShape& shape, int i) {
  const int n = std::max(shape.nodes_min, 1);
  int tasks = 0, gpus = 0;
  if (shape.tasks_per_node > 0)
    tasks = std::clamp(shape.tasks - i * shape.tasks_per_node, 1, shape.tasks_per_node);
  else
    tasks = shape.tasks / n + (i < shape.tasks % n ? 1 : 0);
  if (shape.gpus_total > 0)
    gpus = shape.gpus_total / n + (i < shape.gpus_total % n ? 1 : 0);
  else if (shape.gpus_per_task > 0)
    gpus = shape.gpus_per_task * tasks;
  else
    gpus = shape.gpus_per_node;
  return {tasks, gpus};
}

std::pair<int, int> smallest_share(const JobShape& shape) { return fixed_share(shape, std::max(shape.nodes_min, 1) - 1); }

// One node's share of the bound: packed shapes, the tasks it could take (and then its
// free GPUs); fixed node counts, 1 when it could hold the smallest share: idle for
// --exclusive, else the cores, memory and GPUs every take_on_node needs for it.
FitBound::Term bound_term(const JobShape& shape, const ClusterState& state, int node, std::pair<int, int> share) {
  FitBound::Term t;
  if (shape.fixed_nodes) {
    const auto& tm = state.cluster().tmpl(node);
    const auto& s = state.node(node);
    if (shape.exclusive) {
      t.tasks = s.jobs == 0 ? 1 : 0;
      return t;
    }
    const auto [tasks, gpus] = share;
    if (cores_needed(shape, tm, tasks, gpus) > s.free_cores) return t;
    if (tm.memory_mb > 0 && node_memory_mb(shape, tm, tasks, gpus) > s.free_mem_mb) return t;
    if (gpus > 0 && count_free_gpus_of_type(shape, state, node) < gpus) return t;
    t.tasks = 1;
    return t;
  }
  t.tasks = std::min(shape.tasks, max_tasks_on_node(shape, state, node));
  if (t.tasks > 0 && shape.gpus_total > 0) t.gpus = count_free_gpus_of_type(shape, state, node);
  return t;
}

bool bound_allows(const JobShape& shape, int64_t tasks, int64_t gpus) {
  if (shape.fixed_nodes) return tasks >= shape.nodes_min;
  return tasks >= shape.tasks && gpus >= shape.gpus_total;
}

}  // namespace

namespace {

// The part of decided_by_free_cores that does not depend on what is allocated.
bool free_cores_decide_shape(const JobShape& shape, const ClusterState& state, const std::vector<int>& node_order) {
  const bool cpu_only = shape.cpu_only();
  return cpu_only && !shape.fixed_nodes && !shape.exclusive && !shape.mem_whole_node && shape.cpus_per_task <= 1 &&
         shape.tasks_per_node <= 0 && shape.mem_per_node_mb <= 0 && node_order.size() == state.size();
}

}  // namespace

// Every node's term is then its free cores (memory, when asked per CPU, never limits
// it: ClusterState::memory_follows_cores), and min(tasks, free) summed over every node
// reaches the tasks exactly when the free cores do: the bound is kept without visiting
// a node.
bool FitBound::decided_by_free_cores(const JobShape& shape, const ClusterState& state,
                                     const std::vector<int>& node_order) {
  return free_cores_decide_shape(shape, state, node_order) &&
         (shape.mem_per_cpu_mb <= 0 || state.memory_follows_cores(shape.mem_per_cpu_mb));
}

namespace {

bool bound_allows_now(const JobShape& shape, const ClusterState& state, const std::vector<int>& node_order) {
  if (FitBound::decided_by_free_cores(shape, state, node_order)) return state.free_cores_total() >= shape.tasks;
  const auto share = shape.fixed_nodes ? smallest_share(shape) : std::pair<int, int>{0, 0};
  int64_t tasks = 0, gpus = 0;
  for (int n : node_order) {
    const FitBound::Term t = bound_term(shape, state, n, share);
    tasks += t.tasks;
    gpus += t.gpus;
    if (bound_allows(shape, tasks, gpus)) return true;
  }
  return false;
}

}  // namespace

FitBound::FitBound(const JobShape& shape, const ClusterState& state, const std::vector<int>& node_order)
    // Only where no allocation can change it: a bound kept while the state changes
    // cannot rely on memory_follows_cores() staying true.
    : shape_(&shape),
      state_(&state),
      free_cores_only_(free_cores_decide_shape(shape, state, node_order) && shape.mem_per_cpu_mb <= 0) {
  if (free_cores_only_) return;
  pos_.assign(state.size(), 0);
  terms_.resize(state.size());
  if (shape.fixed_nodes) share_ = smallest_share(shape);
  for (int n : node_order) {
    pos_[n] = 1;
    const FitBound::Term t = bound_term(shape, state, n, share_);
    terms_[n] = t;
    sum_.tasks += t.tasks;
    sum_.gpus += t.gpus;
  }
}

void FitBound::refresh(int node) {
  if (free_cores_only_ || !pos_[node]) return;
  const FitBound::Term t = bound_term(*shape_, *state_, node, share_);
  sum_.tasks += t.tasks - terms_[node].tasks;
  sum_.gpus += t.gpus - terms_[node].gpus;
  terms_[node] = t;
}

namespace {

bool ranked_after(const NodeOrder::Ranked& a, const NodeOrder::Ranked& b) {
  if (a.key1 != b.key1) return a.key1 > b.key1;
  if (a.key2 != b.key2) return a.key2 > b.key2;
  return a.pos > b.pos;
}

}  // namespace

int NodeOrder::pop_ranked() {
  if (ranked_.empty()) return -1;
  std::pop_heap(ranked_.begin(), ranked_.end(), ranked_after);
  const int node = ranked_.back().node;
  ranked_.pop_back();
  return node;
}

// The full ranked list, less the best already handed out (its least key).
int NodeOrder::after_best() {
  const Ranked best = best_;
  const Refill refill = refill_;
  mode_ = Mode::kRanked;
  ranked_.clear();
  refill(*shape_, *state_, *list_, ranked_);
  std::make_heap(ranked_.begin(), ranked_.end(), ranked_after);
  if (ranked_.empty() || ranked_.front().node != best.node || ranked_.front().pos != best.pos)
    throw std::logic_error("node order: the node handed out first is not the least key");
  std::pop_heap(ranked_.begin(), ranked_.end(), ranked_after);
  ranked_.pop_back();
  return pop_ranked();
}

bool node_may_hold_one_node_job(const JobShape& shape, const ClusterState& state, int node) {
  if (shape.fixed_nodes) return bound_term(shape, state, node, smallest_share(shape)).tasks > 0;
  // Packed onto one node: every task and every GPU there.
  const FitBound::Term t = bound_term(shape, state, node, {0, 0});
  return t.tasks >= shape.tasks && t.gpus >= shape.gpus_total;
}

bool Allocator::fits(const JobShape& shape, const ClusterState& state, const std::vector<int>& node_order) const {
  if (bound_is_exact(shape)) return totals_allow(shape, state) && bound_allows_now(shape, state, node_order);
  return allocate(shape, state, node_order).has_value();
}

bool NodeLoopAllocator::bound_is_exact(const JobShape& shape) const {
  const bool cpu_only = shape.cpu_only();
  return cpu_only && !shape.fixed_nodes && shape.nodes_max >= shape.tasks && takes_any_cpu_count();
}

bool FitBound::may_fit() const {
  if (free_cores_only_) return state_->free_cores_total() >= shape_->tasks;
  return totals_allow(*shape_, *state_) && bound_allows(*shape_, sum_.tasks, sum_.gpus);
}

std::optional<Allocation> NodeLoopAllocator::allocate(const JobShape& shape, const ClusterState& state,
                                                    const std::vector<int>& partition_order) const {
  if (!totals_allow(shape, state)) return std::nullopt;
  // Placing inside nodes is the costly part: first the node-by-node bound, which
  // fails much sooner on a busy cluster and never refuses what the loop would place.
  if (!bound_allows_now(shape, state, partition_order)) return std::nullopt;
  thread_local NodeOrder order;
  order_nodes(shape, state, partition_order, order);
  // A node with no free core takes no task of a packed shape (max_tasks_on_node) and
  // no share of a fixed one (each task takes a whole core, or --exclusive an idle
  // node): where the order allows, only nodes with a free core are walked.
  if (order.lists(partition_order) && (!shape.fixed_nodes || shape.cpus_per_task >= 1 || shape.exclusive))
    if (const uint64_t* members = state.scannable_members(partition_order, shape.partition))
      order.use_scan(members, state.open_bits(), state.node_words());
  // Node allocations are gathered in preference order in a per-thread scratch list,
  // then moved once, in node order, into an exactly sized result (growing and sorting
  // the result itself moved each 96-byte NodeAlloc several times: 11% of a Curie run).
  thread_local std::vector<NodeAlloc> scratch;
  scratch.clear();
  Allocation a;
  if (shape.fixed_nodes) {
    // Exactly nodes_min nodes; tasks and per-job GPUs spread evenly (block).
    const int n = shape.nodes_min;
    struct Need {
      int tasks, gpus;
    };
    std::vector<Need> needs(n);
    for (int i = 0; i < n; ++i) std::tie(needs[i].tasks, needs[i].gpus) = fixed_share(shape, i);
    // Largest needs first, so a node that only fits a small share is used for one.
    std::stable_sort(needs.begin(), needs.end(),
                     [](const Need& x, const Need& y) { return std::tie(x.tasks, x.gpus) > std::tie(y.tasks, y.gpus); });
    std::vector<bool> used(needs.size(), false);
    size_t placed = 0;
    // The stop tests come before next(): asking for a node past the last one needed
    // would make a ranked order build its heap.
    while (placed < needs.size()) {
      const int node = order.next();
      if (node < 0) break;
      for (size_t i = 0; i < needs.size(); ++i) {
        if (used[i]) continue;
        if (i > 0 && !used[i - 1] && needs[i].tasks == needs[i - 1].tasks && needs[i].gpus == needs[i - 1].gpus)
          continue;  // same need as one already tried on this node
        auto na = take_on_node(shape, state, node, needs[i].tasks, needs[i].gpus);
        if (na) {
          scratch.push_back(std::move(*na));
          used[i] = true;
          ++placed;
          break;
        }
      }
    }
    if (placed < needs.size()) return std::nullopt;
  } else {
    // Tasks packed onto as few nodes as possible, in preference order.
    int tasks_left = shape.tasks;
    int gpus_left = shape.gpus_total;
    while (tasks_left > 0 || gpus_left > 0) {
      if (static_cast<int>(scratch.size()) == shape.nodes_max) break;
      const int node = order.next();
      if (node < 0) break;
      int k = std::min(tasks_left, max_tasks_on_node(shape, state, node));
      if (k == 0) continue;
      int g = shape.gpus_per_task > 0 ? k * shape.gpus_per_task : shape.gpus_per_node;
      if (gpus_left > 0) {
        const int avail = count_free_gpus_of_type(shape, state, node);
        g = std::min(gpus_left, avail);
        if (g == 0) continue;
        // Keep a task for each further node the remaining GPUs will need.
        if (tasks_left - k == 0 && gpus_left - g > 0) continue;
      }
      auto na = take_on_node(shape, state, node, k, g);
      if (!na) continue;
      tasks_left -= k;
      gpus_left -= g;
      scratch.push_back(std::move(*na));
    }
    if (tasks_left > 0 || gpus_left > 0) return std::nullopt;
  }
  thread_local std::vector<std::pair<int, size_t>> by_node;
  by_node.clear();
  for (size_t i = 0; i < scratch.size(); ++i) by_node.emplace_back(scratch[i].node, i);
  std::sort(by_node.begin(), by_node.end());
  a.nodes.reserve(scratch.size());
  for (const auto& [node, i] : by_node) a.nodes.push_back(std::move(scratch[i]));
  return a;
}

}  // namespace gcsim
