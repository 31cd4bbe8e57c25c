#include "sim/placement/job_shape.hpp"

#include <algorithm>

#include "sim/core/input_file.hpp"

namespace gcsim {

int64_t JobShape::requested_gpus() const {
  if (gpus_total > 0) return gpus_total;
  if (gpus_per_task > 0) return static_cast<int64_t>(gpus_per_task) * tasks;
  return static_cast<int64_t>(gpus_per_node) * nodes_min;
}

int64_t JobShape::requested_cpus() const {
  return std::max<int64_t>(static_cast<int64_t>(tasks) * cpus_per_task,
                           static_cast<int64_t>(cpus_per_gpu) * requested_gpus());
}

std::optional<JobShape> make_job_shape(const Job& job, const Cluster& cluster, std::string* why) {
  const JobRequest& r = job.req;
  JobShape s;
  auto fail = [&](std::string m) -> std::optional<JobShape> {
    if (why) *why = std::move(m);
    return std::nullopt;
  };

  // Partition: the job's own, else the request's (first of a comma list that
  // exists), else the default.
  std::string pname = !job.partition.empty() ? job.partition : r.partition;
  if (pname.empty()) {
    s.partition = cluster.default_partition();
    if (s.partition < 0) return fail("no partition specified and no default partition");
  } else {
    for (auto p : split(pname, ',')) {
      const int idx = cluster.find_partition(std::string(trim(p)));
      if (idx >= 0) {
        s.partition = idx;
        break;
      }
    }
    if (s.partition < 0) return fail("invalid partition name specified: '" + pname + "'");
  }
  const Partition& part = cluster.partitions[s.partition];

  s.cpus_per_task = r.cpus_per_task.value_or(1);
  s.cpus_per_gpu = r.cpus_per_gpu.value_or(0);
  s.tasks_per_node = r.ntasks_per_node.value_or(0);
  s.enforce_binding = r.gres_flags == "enforce-binding";
  s.switches = r.switches.value_or(0);
  s.switches_wait = r.switches_wait;
  s.cpu_bind = r.cpu_bind;
  s.gpu_bind = r.gpu_bind;
  s.distribution = r.distribution;
  // --exclusive=user|mcs share nodes with the same user or MCS label; only the bare
  // flag (and =topo) asks for whole nodes.
  s.exclusive = r.exclusive && (r.exclusive_mode.empty() || r.exclusive_mode == "topo");

  // GPUs: --gres=gpu[:type]:N (per node), --gpus-per-node, --gpus-per-task, --gpus.
  auto take_type = [&](const GresRequest& g) -> bool {
    if (!g.type.empty()) {
      if (!s.gpu_type.empty() && s.gpu_type != g.type) return false;
      s.gpu_type = g.type;
    }
    return true;
  };
  for (const auto& g : r.gres) {
    if (g.name != "gpu") return fail("gres '" + g.name + "' is not configured on any node");
    if (!take_type(g)) return fail("conflicting GPU types requested");
    s.gpus_per_node += static_cast<int>(g.count);
  }
  if (r.gpus_per_node) {
    if (!take_type(*r.gpus_per_node)) return fail("conflicting GPU types requested");
    s.gpus_per_node = static_cast<int>(r.gpus_per_node->count);
  }
  if (r.gpus_per_task) {
    if (!take_type(*r.gpus_per_task)) return fail("conflicting GPU types requested");
    s.gpus_per_task = static_cast<int>(r.gpus_per_task->count);
  }
  if (r.gpus) {
    if (!take_type(*r.gpus)) return fail("conflicting GPU types requested");
    s.gpus_total = static_cast<int>(r.gpus->count);
  }
  s.gpu_types_allowed = r.gpu_types_allowed;
  if (!s.gpu_types_allowed.empty()) {
    const auto types = cluster.gpu_types();
    if (std::none_of(types.begin(), types.end(), [&](const std::string& t) { return s.gpu_type_ok(t); }))
      return fail("none of the allowed GPU types is configured on any node");
  }
  if (!s.gpu_type.empty()) {
    const auto types = cluster.gpu_types();
    if (std::find(types.begin(), types.end(), s.gpu_type) == types.end())
      return fail("GPU type '" + s.gpu_type + "' is not configured on any node");
  }

  // Node and task counts, with sbatch's defaults.
  if (r.nodes_min) {
    s.nodes_min = *r.nodes_min;
    s.nodes_max = std::max(s.nodes_min, r.nodes_max.value_or(s.nodes_min));
    s.fixed_nodes = true;
    s.tasks = r.ntasks.value_or(s.nodes_min * std::max(1, s.tasks_per_node));
    if (s.tasks < s.nodes_min) return fail("fewer tasks than nodes requested");
  } else if (r.ntasks && s.tasks_per_node > 0) {
    s.tasks = *r.ntasks;
    s.nodes_min = s.nodes_max = (s.tasks + s.tasks_per_node - 1) / s.tasks_per_node;
    s.fixed_nodes = true;
  } else if (r.ntasks) {
    s.tasks = *r.ntasks;
    s.nodes_min = 1;
    s.nodes_max = s.tasks;
    s.fixed_nodes = false;
  } else {
    s.tasks = std::max(1, s.tasks_per_node);
    s.nodes_min = s.nodes_max = 1;
    s.fixed_nodes = true;
  }
  if (s.gpus_total > 0 && s.fixed_nodes && s.gpus_total < s.nodes_min)
    return fail("fewer GPUs than nodes requested");
  if (static_cast<size_t>(s.nodes_min) > part.nodes.size())
    return fail("node count specification invalid: partition '" + part.name + "' has " +
                std::to_string(part.nodes.size()) + " nodes");

  // Memory.
  if (r.mem_per_node_mb) {
    if (*r.mem_per_node_mb == 0)
      s.mem_whole_node = true;
    else
      s.mem_per_node_mb = *r.mem_per_node_mb;
  } else if (r.mem_per_cpu_mb) {
    s.mem_per_cpu_mb = *r.mem_per_cpu_mb;
  } else if (r.mem_per_gpu_mb) {
    s.mem_per_gpu_mb = *r.mem_per_gpu_mb;
  } else if (cluster.def_mem_per_gpu_mb && s.requested_gpus() > 0) {
    s.mem_per_gpu_mb = *cluster.def_mem_per_gpu_mb;
  } else if (cluster.def_mem_per_cpu_mb) {
    s.mem_per_cpu_mb = *cluster.def_mem_per_cpu_mb;
  }

  // Time limit: the job's, else the partition's DefaultTime, else its MaxTime.
  if (r.time_limit) {
    s.time_limit = *r.time_limit;
    if (s.time_limit > part.max_time) return fail("requested time limit is beyond the partition's MaxTime");
  } else {
    s.time_limit = part.default_time.value_or(part.max_time);
  }
  return s;
}

std::vector<int> partition_node_order(const Cluster& cluster, int partition) {
  std::vector<int> order = cluster.partitions[partition].nodes;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return cluster.nodes[a].weight < cluster.nodes[b].weight; });
  return order;
}

}  // namespace gcsim
