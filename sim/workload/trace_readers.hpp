// Trace readers for the foundation formats:
//  - SWF, the Parallel Workloads Archive's Standard Workload Format (18 fields,
//    `; Key: value` header comments, -1 for unknown);
//  - the sbatch-trace CSV (`name,submit,duration,args[,user,account,partition]`), where
//    `args` holds sbatch options parsed exactly as sbatch would.
// Every problem is `file:line:col: error: ...`; several are collected, then
// InputError is thrown. Warnings (skipped records) go to `diags`.
#pragma once

#include <string>

#include "sim/core/diagnostics.hpp"
#include "sim/workload/job.hpp"

namespace gcsim {

[[nodiscard]] Trace read_swf(const std::string& path, Diagnostics& diags);
[[nodiscard]] Trace parse_swf(const std::string& text, const std::string& path, Diagnostics& diags);

[[nodiscard]] Trace read_sbatch_trace(const std::string& path, Diagnostics& diags);
[[nodiscard]] Trace parse_sbatch_trace(const std::string& text, const std::string& path, Diagnostics& diags);

/// sacct --parsable2 output (`sacct -P -X -o JobID,...`); fields by header name.
[[nodiscard]] Trace read_sacct_trace(const std::string& path, Diagnostics& diags);
[[nodiscard]] Trace parse_sacct_trace(const std::string& text, const std::string& path, Diagnostics& diags);

/// Picks the reader from the file name (`.swf`, `.swf.gz`, `.sacct`) or, failing that,
/// from the content: a JSON array (Philly), a `|`-separated header with JobID (sacct),
/// the CSV header's columns (cpu_milli: Alibaba v2023; job_id+gpu_num: Helios;
/// time+application+num_replicas: Pollux/Sia; job_id+num_gpu+submit_time: Chronus when
/// it has user, else Tiresias; a lone duration or runtime: a duration list), 7 or 10
/// tab-separated fields (Gavel), then `.csv`/`name,` (sbatch-trace CSV) and `;`/digit
/// lines (header-less SWF). Throws InputError for an unknown format.
[[nodiscard]] Trace read_trace(const std::string& path, Diagnostics& diags);
/// Replaces every job with --array by one job per task (same id, array_task set).
void expand_job_arrays(Trace& t);

}  // namespace gcsim
