// Writers for the two interchange formats every reader converts into:
//  - the sbatch-trace CSV (`name,submit,duration,args,user,account,partition[,start,state]`),
//    whose `args` read back through sbatch's own option parser to the same request;
//  - SWF 2.2, with Alea's extension (node list, queue, PBS resource string) carrying
//    the GPU count that the 18 standard fields have no place for.
// Header comments (`#` lines in the CSV, `; Note:` lines in SWF) carry provenance.
// What a format cannot express is counted in `lost` (one line per kind), never silent.
#pragma once

#include <string>
#include <vector>

#include "sim/workload/job.hpp"

namespace gcsim {

/// The sbatch options that reproduce `r` when parsed by parse_sbatch_options.
/// Requests sbatch cannot state (fractional GPUs, a set of allowed GPU types) are
/// reported in `lost` (may be null).
[[nodiscard]] std::string format_sbatch_options(const JobRequest& r, std::vector<std::string>* lost = nullptr);

/// The whole trace as an sbatch-trace CSV. `start`/`state` columns are written when any
/// job has a recorded start or final state. Array tasks are written one row each.
[[nodiscard]] std::string format_sbatch_trace(const Trace& t, const std::vector<std::string>& header,
                                              std::vector<std::string>& lost);

/// The whole trace as SWF: users, accounts and partitions numbered 1..n in order of
/// first appearance (listed in the header), processors = the job's CPUs, GPUs in the
/// Alea resource string (`<nodes>:ppn=<cpus per node>:gpus=<gpus per node>`).
[[nodiscard]] std::string format_swf(const Trace& t, const std::vector<std::string>& header,
                                     std::vector<std::string>& lost);

[[nodiscard]] const char* recorded_state_name(RecordedState s);

}  // namespace gcsim
