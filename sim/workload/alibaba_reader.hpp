// Reader for the Alibaba PAI cluster-trace-gpu-v2023 pod lists (openb_pod_list_*.csv,
// the FGD / ATC'23 Kubernetes GPU-sharing trace): each pod becomes a one-node, one-task
// job with its CPU, memory, whole-GPU count, fractional GPU share and allowed GPU types.
// Errors are `file:line:col: error: ...`, collected and thrown as InputError; skipped or
// adjusted pods are warnings, and every mapping choice goes to Trace::assumptions.
#pragma once

#include <string>
#include <string_view>

#include "sim/core/diagnostics.hpp"
#include "sim/workload/job.hpp"

namespace gcsim {

/// Reads `name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec][,qos][,pod_phase],
/// creation_time,deletion_time,scheduled_time` (columns matched by name, any order;
/// `.gz` accepted). Jobs are sorted by submit time (ties keep file order), ids 1..N.
[[nodiscard]] Trace read_alibaba_v2023_pods(const std::string& path, Diagnostics& diags);
[[nodiscard]] Trace parse_alibaba_v2023_pods(const std::string& text, const std::string& path,
                                             Diagnostics& diags);

/// `V100M16` -> `v100m16`: the GRES type gcsim uses for an Alibaba GPU model name
/// (the same mapping the node-list readers use, so pod constraints match node types).
[[nodiscard]] std::string alibaba_gres_type(std::string_view model);

}  // namespace gcsim
