#include "sim/workload/job_request.hpp"

#include <algorithm>

namespace gcsim {

namespace {

// sbatch's task and node defaults, as make_job_shape applies them (without a cluster,
// so without its partition checks): `nodes` is the minimum node count.
struct TaskLayout {
  int64_t tasks = 1;
  int64_t nodes = 1;
};

TaskLayout task_layout(const JobRequest& r) {
  const int64_t per_node = r.ntasks_per_node.value_or(0);
  TaskLayout l;
  if (r.nodes_min) {
    l.nodes = std::max(1, *r.nodes_min);
    l.tasks = r.ntasks ? *r.ntasks : l.nodes * std::max<int64_t>(1, per_node);
  } else if (r.ntasks && per_node > 0) {
    l.tasks = *r.ntasks;
    l.nodes = (l.tasks + per_node - 1) / per_node;
  } else if (r.ntasks) {
    l.tasks = *r.ntasks;  // 1..ntasks nodes: the minimum is one
  } else {
    l.tasks = std::max<int64_t>(1, per_node);
  }
  return l;
}

int64_t count_of(const std::optional<GresRequest>& g) { return g ? std::max<int64_t>(0, g->count) : 0; }

}  // namespace

int64_t job_min_nodes(const Job& job) { return task_layout(job.req).nodes; }
int64_t job_tasks(const Job& job) { return task_layout(job.req).tasks; }

int64_t job_gpus_per_node(const Job& job) {
  if (job.req.gpus_per_node) return count_of(job.req.gpus_per_node);
  int64_t per_node = 0;
  for (const auto& g : job.req.gres)
    if (g.name == "gpu") per_node += std::max<int64_t>(0, g.count);
  return per_node;
}

int64_t job_gpus(const Job& job) {
  const JobRequest& r = job.req;
  if (const int64_t total = count_of(r.gpus); total > 0) return total;
  const TaskLayout l = task_layout(r);
  if (const int64_t per_task = count_of(r.gpus_per_task); per_task > 0) return per_task * l.tasks;
  if (const int64_t per_node = job_gpus_per_node(job); per_node > 0) return per_node * l.nodes;
  return std::max<int64_t>(0, job.recorded_gpus);
}

int64_t job_cpus(const Job& job) {
  const JobRequest& r = job.req;
  const int64_t by_task = task_layout(r).tasks * std::max(1, r.cpus_per_task.value_or(1));
  const int64_t by_gpu = static_cast<int64_t>(std::max(0, r.cpus_per_gpu.value_or(0))) * job_gpus(job);
  return std::max(by_task, by_gpu);
}

}  // namespace gcsim
