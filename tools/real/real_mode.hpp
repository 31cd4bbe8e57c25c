// The real mode (`gcsim real`): the simulator's placement library on live hardware.
// This machine is discovered with hwloc into the same NodeTemplate the simulator uses,
// made a one-node cluster, and a job's placement is asked of the same PlacementAllocator
// the simulator calls, on a state where every CPU this process may not use is taken.
// What it returns is then bound: sched_setaffinity, libnuma's local allocation
// (--mem-bind=local), CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES.
//
//  place  prints each task's OS CPU ids, GPU indices and memory NUMA domain;
//  exec   starts one bound child per task with srun's task environment and gathers their
//         output and exit codes as srun does;
//  bind   under srun: this task's cores and GPU closest to each other inside what Slurm
//         gave it, the ranks PyTorch Distributed and DeepSpeed read, then exec.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/placement/placement.hpp"
#include "sim/cluster/cluster.hpp"
#include "sim/core/diagnostics.hpp"
#include "sim/workload/job.hpp"

namespace gcsim::real {

/// One machine: this one (live) or an hwloc XML, and what this process may use of it.
struct Machine {
  Cluster cluster;                          // one node, one default partition
  std::vector<int> allowed_pus;             // OS PU ids this process may use, sorted
  std::vector<int> allowed_gpus;            // GPU indices it may use, sorted
  bool live = true;                         // false: --topology-file (nothing is bound)
  std::string source;                       // "hwloc discovery of HOST" or the XML path
  std::vector<std::string> notes;           // what the user should know (CPU-only, restrictions)

  [[nodiscard]] const NodeTemplate& tmpl() const { return cluster.templates.front(); }
  /// OS PU ids of an abstract core that this process may use.
  [[nodiscard]] std::vector<int> allowed_pus_of_core(int core) const;
};

/// The OS CPU ids of this process's affinity (sched_getaffinity), sorted.
[[nodiscard]] std::vector<int> current_affinity();

/// This machine (`topology_file` empty) or the machine an hwloc XML describes. The live
/// machine's allowed CPUs are hwloc's allowed cpuset (the cgroup) and this process's
/// affinity; its GPUs are restricted to CUDA_VISIBLE_DEVICES when that lists indices.
/// An XML machine allows everything. Throws InputError for an unreadable file.
[[nodiscard]] Machine load_machine(const std::string& topology_file, Diagnostics& warnings);

/// Keeps only the listed OS PUs (and GPUs) allowed: `--cpuset`, or a cpuset Slurm gave.
void restrict_pus(Machine& m, const std::vector<int>& pus);
void restrict_gpus(Machine& m, const std::vector<int>& gpus);

/// One task's placement.
struct TaskPlan {
  int task = 0;
  std::vector<int> cores;    // Slurm abstract core ids
  std::vector<int> os_cpus;  // OS PU ids to bind, all allowed
  std::vector<int> gpus;     // GPU indices of the node
  int mem_numa = -1;         // NUMA domain of its memory (the domain of its cores)
};

struct Plan {
  bool fits = false;
  std::string reason;                                  // when !fits
  PlacementMode mode = PlacementMode::kSlurm;
  Allocation alloc;                                    // what the simulator would hold
  std::vector<TaskPlan> tasks;
  std::vector<std::map<std::string, std::string>> env; // srun's task environment, per task
};

/// Parses sbatch options (what `sbatch`/`srun` take) into a one-node job. Errors go to
/// `diags` at "<command line>".
[[nodiscard]] std::optional<Job> job_from_options(const std::vector<std::string>& options, Diagnostics& diags);

/// Places `job` on the machine with `mode`: the simulator's PlacementAllocator on the
/// machine's one-node cluster with every disallowed core and GPU already taken. A job
/// for more than one node, or one that does not fit, gives fits = false and a reason.
[[nodiscard]] Plan plan_job(const Machine& m, const Job& job, PlacementMode mode);

/// The plan as a table: task, OS CPUs, GPUs (index and bus id), memory domain.
[[nodiscard]] std::string format_plan(const Machine& m, const Plan& p);

/// Binds the calling process to `t` (affinity; local memory allocation) and execs `cmd`
/// with `env` set; returns only on failure (message in `error`).
void exec_bound(const TaskPlan& t, const std::map<std::string, std::string>& env, const std::vector<std::string>& cmd,
                std::string& error);

struct ExecOptions {
  bool label = false;  // prefix each output line with "TASK: " (srun --label)
};

/// Starts one bound child per task of `p` running `cmd`, forwards their output line by
/// line, and returns srun's exit status: the largest task exit code, 128 + signal for a
/// task killed by a signal. Task 0 keeps stdin; the others read /dev/null.
[[nodiscard]] int exec_tasks(const Machine& m, const Plan& p, const std::vector<std::string>& cmd,
                             const ExecOptions& o);

/// What `gcsim real bind` decides for one task under srun.
struct BindDecision {
  TaskPlan task;                                  // this task's cores, GPUs, memory
  std::map<std::string, std::string> exports;     // RANK, LOCAL_RANK, ..., CUDA_VISIBLE_DEVICES
  std::vector<std::string> notes;
};

/// From srun's environment (SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS, SLURM_NODEID,
/// SLURM_JOB_NODELIST, SLURM_JOB_ID, SLURM_STEP_TASKS_PER_NODE / SLURM_TASKS_PER_NODE,
/// SLURM_CPUS_PER_TASK, SLURM_STEP_GPUS / SLURM_JOB_GPUS / CUDA_VISIBLE_DEVICES) and the
/// machine's allowed CPUs (the cpuset srun gave this task): when that cpuset holds the
/// cores of every task of the node, all of them are placed (every task computes the same
/// plan) and this one takes its own; when it is this task's alone, the task is placed in
/// it. `mode` first (numa-bound by default), Slurm's order when it does not fit. Throws
/// InputError for a missing or malformed variable, or when nothing fits.
[[nodiscard]] BindDecision decide_bind(const Machine& m, const std::map<std::string, std::string>& env,
                                       PlacementMode mode);

/// MASTER_PORT from a job id: 10000 + id mod 20000, so that jobs sharing a first node
/// rarely collide and the port stays out of the ephemeral range.
[[nodiscard]] int master_port(int64_t job_id);

/// "2(x3),1" (SLURM_TASKS_PER_NODE) -> {2, 2, 2, 1}; std::nullopt when malformed.
[[nodiscard]] std::optional<std::vector<int>> expand_tasks_per_node(const std::string& s);

/// Sorted ids as "0-3,8,10-11" (format_id_list), "-" when empty. CPU lists are read
/// with parse_cpu_list (sim/cluster/import_nvidia_smi.hpp).
[[nodiscard]] std::string format_id_ranges(const std::vector<int>& ids);

}  // namespace gcsim::real
