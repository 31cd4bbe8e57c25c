// Readers for public GPU-cluster job traces:
//  - Microsoft Philly `cluster_job_log` (JSON array; original `attempts[]` records or
//    the flattened single-attempt form with `runtime_min`);
//  - SenseTime Helios Slurm job logs (`cluster_log.csv`: job_id,user,vc,gpu_num,...).
// Errors are `file:line:col: error: ...`, collected and thrown as InputError;
// skipped records are warnings; what the reader assumed goes to Trace::assumptions.
#pragma once

#include <string>

#include "sim/core/diagnostics.hpp"
#include "sim/workload/job.hpp"

namespace gcsim {

/// Philly jobs: GPUs = sum of len(gpus) over the final attempt's `detail`, nodes = its
/// distinct machines; `--nodes=<machines> --gpus-per-node=<most GPUs on one machine>`
/// with one task per GPU; account = vc; submit relative to the earliest submitted_time
/// (UTC, Trace::unix_start); no time limit (the trace has none).
[[nodiscard]] Trace read_philly_json(const std::string& path, Diagnostics& diags);
[[nodiscard]] Trace parse_philly_json(const std::string& text, const std::string& path, Diagnostics& diags);

/// Helios jobs, columns found by header name in any order: submit_time, state, gpu_num
/// and duration (or start_time + end_time) are required; job_id, user, vc, cpu_num,
/// node_num, queue and unknown columns are optional. Times are `YYYY-MM-DD HH:MM:SS`
/// or epoch seconds.
[[nodiscard]] Trace read_helios_csv(const std::string& path, Diagnostics& diags);
[[nodiscard]] Trace parse_helios_csv(const std::string& text, const std::string& path, Diagnostics& diags);

}  // namespace gcsim
