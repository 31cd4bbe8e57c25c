// What a job's request adds up to without a cluster: its GPUs, CPUs and minimum node
// count with sbatch's task defaults and make_job_shape's precedence. Trace statistics,
// writers and the generator count with these, so they agree with what a replay allocates.
#pragma once

#include <cstdint>

#include "sim/workload/job.hpp"

namespace gcsim {

/// Nodes the request needs at least: --nodes, else ceil(--ntasks / --ntasks-per-node), else 1.
[[nodiscard]] int64_t job_min_nodes(const Job& job);
/// Tasks: --ntasks, else nodes x --ntasks-per-node (1 per node when not given).
[[nodiscard]] int64_t job_tasks(const Job& job);
/// GPUs: --gpus (per job), else --gpus-per-task x tasks, else per-node GPUs
/// (--gpus-per-node, else the sum of --gres=gpu) x job_min_nodes; when the request names
/// no GPUs, what the trace recorded (Job::recorded_gpus). 0 = a CPU-only job.
[[nodiscard]] int64_t job_gpus(const Job& job);
/// GPUs per node the request names (--gpus-per-node, else --gres=gpu), 0 when none.
[[nodiscard]] int64_t job_gpus_per_node(const Job& job);
/// CPUs: max(tasks x cpus_per_task, cpus_per_gpu x job_gpus).
[[nodiscard]] int64_t job_cpus(const Job& job);

}  // namespace gcsim
