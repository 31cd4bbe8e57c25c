#include "sim/placement/allocator.hpp"

#include <algorithm>

namespace gcsim {

namespace {

int cores_for_cpus(int64_t cpus, int tpc) { return static_cast<int>((cpus + tpc - 1) / tpc); }

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
  if (shape.exclusive && s.jobs > 0) return 0;
  const int per_task_cores = cores_for_cpus(shape.cpus_per_task, t.threads_per_core);
  int k = per_task_cores > 0 ? s.free_cores / per_task_cores : s.free_cores;
  if (shape.tasks_per_node > 0) k = std::min(k, shape.tasks_per_node);
  if (shape.gpus_per_task > 0)
    k = std::min(k, static_cast<int>(free_gpus_of_type(shape, state, node).size()) / shape.gpus_per_task);
  if (shape.gpus_per_node > 0 && static_cast<int>(free_gpus_of_type(shape, state, node).size()) < shape.gpus_per_node)
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
  for (int c = 0; c < t.cores() && static_cast<int>(na.cores.size()) < ncores; ++c)
    if (s.core_free[c]) na.cores.push_back(c);
  if (shape.exclusive) {
    for (size_t g = 0; g < t.gpus.size(); ++g) na.gpus.push_back(static_cast<int>(g));
  } else {
    na.gpus.assign(free_gpus.begin(), free_gpus.begin() + gpus);
  }
  return na;
}

bool totals_allow(const JobShape& shape, const ClusterState& state) {
  const int tpc = state.max_threads_per_core();
  const int64_t cores = (shape.requested_cpus() + tpc - 1) / tpc;
  return state.free_cores_total() >= cores && state.free_gpus_total() >= shape.requested_gpus();
}

std::optional<Allocation> NodeLoopAllocator::allocate(const JobShape& shape, const ClusterState& state,
                                                    const std::vector<int>& partition_order) const {
  if (!totals_allow(shape, state)) return std::nullopt;
  const std::vector<int> node_order = order_nodes(shape, state, partition_order);
  Allocation a;
  if (shape.fixed_nodes) {
    // Exactly nodes_min nodes; tasks and per-job GPUs spread evenly (block).
    const int n = shape.nodes_min;
    struct Need {
      int tasks, gpus;
    };
    std::vector<Need> needs(n);
    for (int i = 0; i < n; ++i) {
      if (shape.tasks_per_node > 0)
        needs[i].tasks = std::clamp(shape.tasks - i * shape.tasks_per_node, 1, shape.tasks_per_node);
      else
        needs[i].tasks = shape.tasks / n + (i < shape.tasks % n ? 1 : 0);
      if (shape.gpus_total > 0)
        needs[i].gpus = shape.gpus_total / n + (i < shape.gpus_total % n ? 1 : 0);
      else if (shape.gpus_per_task > 0)
        needs[i].gpus = shape.gpus_per_task * needs[i].tasks;
      else
        needs[i].gpus = shape.gpus_per_node;
    }
    // Largest needs first, so a node that only fits a small share is used for one.
    std::stable_sort(needs.begin(), needs.end(),
                     [](const Need& x, const Need& y) { return std::tie(x.tasks, x.gpus) > std::tie(y.tasks, y.gpus); });
    std::vector<bool> used(needs.size(), false);
    size_t placed = 0;
    for (int node : node_order) {
      if (placed == needs.size()) break;
      for (size_t i = 0; i < needs.size(); ++i) {
        if (used[i]) continue;
        if (i > 0 && !used[i - 1] && needs[i].tasks == needs[i - 1].tasks && needs[i].gpus == needs[i - 1].gpus)
          continue;  // same need as one already tried on this node
        auto na = take_on_node(shape, state, node, needs[i].tasks, needs[i].gpus);
        if (na) {
          a.nodes.push_back(std::move(*na));
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
    for (int node : node_order) {
      if (tasks_left == 0 && gpus_left == 0) break;
      if (static_cast<int>(a.nodes.size()) == shape.nodes_max) break;
      int k = std::min(tasks_left, max_tasks_on_node(shape, state, node));
      if (k == 0) continue;
      int g = shape.gpus_per_task > 0 ? k * shape.gpus_per_task : shape.gpus_per_node;
      if (gpus_left > 0) {
        const int avail = static_cast<int>(free_gpus_of_type(shape, state, node).size());
        g = std::min(gpus_left, avail);
        if (g == 0) continue;
        // Keep a task for each further node the remaining GPUs will need.
        if (tasks_left - k == 0 && gpus_left - g > 0) continue;
      }
      auto na = take_on_node(shape, state, node, k, g);
      if (!na) continue;
      tasks_left -= k;
      gpus_left -= g;
      a.nodes.push_back(std::move(*na));
    }
    if (tasks_left > 0 || gpus_left > 0) return std::nullopt;
  }
  std::sort(a.nodes.begin(), a.nodes.end(), [](const NodeAlloc& x, const NodeAlloc& y) { return x.node < y.node; });
  return a;
}

}  // namespace gcsim
