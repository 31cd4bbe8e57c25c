// The job model every trace reader fills in: what was requested (as sbatch would
// record it), when it was submitted, and how long it really ran.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/ids.hpp"
#include "sim/core/time.hpp"

namespace gcsim {

/// A generic resource request such as `gpu:a100:2`. `type` empty = any type.
struct GresRequest {
  std::string name = "gpu";
  std::string type;
  int64_t count = 0;
  auto operator<=>(const GresRequest&) const = default;
};

/// The request in sbatch's own terms. Unset options stay std::nullopt/empty so that a
/// policy can apply Slurm's defaults (DefMemPerCPU, partition DefaultTime, ...).
struct JobRequest {
  std::optional<int> nodes_min;  // --nodes=N or N-M
  std::optional<int> nodes_max;
  std::optional<int> ntasks;           // -n
  std::optional<int> ntasks_per_node;  // --ntasks-per-node
  std::optional<int> cpus_per_task;    // -c
  std::optional<int64_t> mem_per_node_mb;  // --mem (MB, Slurm's M = MiB)
  std::optional<int64_t> mem_per_cpu_mb;   // --mem-per-cpu
  std::optional<int64_t> mem_per_gpu_mb;   // --mem-per-gpu
  std::vector<GresRequest> gres;           // --gres, per node
  std::optional<GresRequest> gpus;           // --gpus / -G, per job
  std::optional<GresRequest> gpus_per_node;  // --gpus-per-node
  std::optional<GresRequest> gpus_per_task;  // --gpus-per-task
  std::optional<int> cpus_per_gpu;           // --cpus-per-gpu
  std::optional<SimTime> time_limit;         // --time / -t
  std::string partition;                     // -p (may be a comma list)
  std::string qos;                           // -q
  std::string account;                       // -A
  std::string job_name;                      // -J
  bool exclusive = false;                    // --exclusive
  std::string exclusive_mode;                // --exclusive=user|mcs
  std::string gres_flags;                    // --gres-flags=enforce-binding|disable-binding
  std::string cpu_bind;                      // --cpu-bind
  std::string gpu_bind;                      // --gpu-bind
  std::string distribution;                  // -m / --distribution
  std::optional<int> switches;               // --switches=N[@max-time]
  std::optional<SimTime> switches_wait;
  std::string dependency;                    // -d / --dependency (kept verbatim)
  std::string array;                         // -a / --array (kept verbatim)
  /// Share of one GPU the job needs when it asks for exactly one (Kubernetes GPU
  /// sharing, e.g. Alibaba v2023 gpu_milli/1000); 1.0 = a whole GPU. Slurm has no such
  /// request: it is meaningful only for sharing-aware policies. Added for the Alibaba reader.
  double gpu_fraction = 1.0;
  /// GPU types (lowercase GRES types) the job may run on, any one of them; empty = any.
  /// Alibaba v2023 gpu_spec "V100M16|V100M32" -> {"v100m16", "v100m32"}. Added for the Alibaba reader.
  std::vector<std::string> gpu_types_allowed;
};

enum class RecordedState { kUnknown, kCompleted, kFailed, kCancelled, kTimeout };

struct Job {
  JobId id;
  std::string name;
  std::string user;
  std::string account;
  std::string partition;
  SimTime submit;              // relative to the trace's start
  SimTime duration;            // how long it runs when not killed
  JobRequest req;
  RecordedState recorded_state = RecordedState::kUnknown;
  int source_line = 0;         // line in the trace, for diagnostics
  // Added for the GPU trace readers (Philly, Helios):
  int attempts = 0;            // scheduling attempts the trace records (Philly retries); 0 = not given
  int64_t recorded_gpus = 0;   // GPUs the job held according to the trace; 0 = not given / CPU job
  std::optional<SimTime> recorded_start;  // when the trace says it really started (replay report)
  // Job arrays (--array): every task is its own Job with the array's id; sacct prints id_task.
  int64_t array_task = -1;     // task id, -1 = not an array task
  int array_max_running = 0;   // the array's %N cap, 0 = none
  // Added for the runtime model: the workload profile a trace names for the job (an
  // sbatch-trace `profile` column, or the model/application a research trace gives);
  // empty = chosen by --profiles rules or the default by GPU count.
  std::string profile;
};

/// A trace as read: jobs in file order plus what the reader learned about the site.
struct Trace {
  std::string path;
  std::string format;                  // "swf", "sbatch-csv"
  std::optional<int64_t> unix_start;   // absolute time of t=0 (SWF UnixStartTime)
  std::vector<Job> jobs;
  // SWF header facts, for inferring a cluster.
  std::optional<int64_t> max_nodes;
  std::optional<int64_t> max_procs;
  std::string computer;
  std::vector<std::string> assumptions;  // what the reader had to assume; goes to the manifest
};

}  // namespace gcsim
