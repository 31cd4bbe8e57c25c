// Readers for the GPU workloads that scheduler research artifacts ship (derived from
// Philly or synthetic, with model names and rescaled time): Gavel `.trace` TSV, Pollux
// (and Sia) workload CSVs, Tiresias and Chronus job CSVs, and bare duration lists.
// None of them name nodes, so every reader spreads a job's GPUs over the fewest equal
// nodes of the format's testbed size; what each had to assume goes to Trace::assumptions.
// Errors are `file:line:col: error: ...`, collected and thrown as InputError.
#pragma once

#include <string>

#include "sim/core/diagnostics.hpp"
#include "sim/workload/job.hpp"

namespace gcsim {

/// Gavel (stanford-futuredata/gavel) traces, one job per tab-separated line, told apart
/// by field count:
///  - 7 fields (`traces/msr/seed=N/<vc>.trace`): job_type, command, num_steps_arg,
///    needs_data_dir, total_steps, arrival_time, scale_factor;
///  - 10 fields (`traces/physical_cluster/*.trace`): job_type, command,
///    working_directory, num_steps_arg, needs_data_dir, total_steps, scale_factor,
///    priority_weight, SLO, arrival_time.
/// GPUs = scale_factor, submit = arrival_time. Gavel gives steps, not time: the duration
/// is total_steps seconds (see the assumptions the reader records). An msr file named
/// by its Philly VC hash (`6214e9.trace`) gives account `vc_6214e9`, Chronus's spelling.
[[nodiscard]] Trace read_gavel_trace(const std::string& path, Diagnostics& diags);
[[nodiscard]] Trace parse_gavel_trace(const std::string& text, const std::string& path, Diagnostics& diags);

/// Pollux (petuum/adaptdl osdi21-artifact `simulator/workloads*/workload-N.csv`) and Sia
/// (siasosp23/artifacts `sia-simulator/workloads/...`, the same layout) workloads:
/// columns by header name, `time`, `application` and `num_replicas` required, `name`
/// optional, any other column (`batch_size`, Sia's extras) ignored. GPUs = num_replicas.
/// The files have no duration (elastic jobs run to completion): it comes from a
/// per-application GPU-time table (Pollux's own Philly GPU-time classes) divided by
/// num_replicas. An application outside the six Pollux ones is an error.
[[nodiscard]] Trace read_pollux_workload(const std::string& path, Diagnostics& diags);
[[nodiscard]] Trace parse_pollux_workload(const std::string& text, const std::string& path, Diagnostics& diags);

/// Tiresias (SymbioticLab/Tiresias simulator) job CSVs, columns by header name:
/// job_id, num_gpu, submit_time and duration required; start_time (tf_job.csv) becomes
/// Job::recorded_start; model_name names the job; iterations, interval, model_size,
/// aggr_interval, model_scale and unknown columns are ignored. A row repeated verbatim
/// (same job_id, same fields) is dropped with a warning; a job_id reused with other
/// fields is an error.
[[nodiscard]] Trace read_tiresias_csv(const std::string& path, Diagnostics& diags);
[[nodiscard]] Trace parse_tiresias_csv(const std::string& text, const std::string& path, Diagnostics& diags);

/// Chronus (S-Lab-System-Group/ChronusArtifact `trace_job_Philly_*.csv`): the Tiresias
/// columns plus `user` (the Philly VC, `vc_6214e9`): user = account = that VC. The SLO
/// columns (expect_time_list, expect_value_list, best_effort, job_type) are not modelled.
[[nodiscard]] Trace read_chronus_csv(const std::string& path, Diagnostics& diags);
[[nodiscard]] Trace parse_chronus_csv(const std::string& text, const std::string& path, Diagnostics& diags);

/// A bare run-time list: one column headed `duration` (Tiresias yarn-gput1000.csv) or
/// `runtime` (alibaba/clusterdata philly_runtime.csv), seconds. It has no arrivals and
/// no sizes: each value becomes a 1-GPU job submitted at t=0 (a batch, not a queue
/// replay), format "duration-list".
[[nodiscard]] Trace read_duration_list(const std::string& path, Diagnostics& diags);
[[nodiscard]] Trace parse_duration_list(const std::string& text, const std::string& path, Diagnostics& diags);

}  // namespace gcsim
