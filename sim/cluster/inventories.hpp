// Cluster inventories read from published GPU-trace machine lists (Microsoft Philly
// `cluster_machine_list` and its corrected `revised_machine_list`). The lists give
// only GPUs per machine, so CPUs, memory and NUMA layout come from a default node
// template the caller may override.
#pragma once

#include <string>

#include "sim/cluster/cluster.hpp"
#include "sim/core/diagnostics.hpp"

namespace gcsim {

/// The documented default for a Philly machine: 2 sockets x 12 cores (one NUMA domain
/// per socket, 1 thread per core), 256 GiB, no GPUs (the reader adds them). Not from
/// the trace, which records nothing about CPUs or memory: an assumption to override.
[[nodiscard]] NodeTemplate philly_default_node();

/// One node per machine (named by machineId, file order) with the file's GPU count.
/// Accepts `machineId, number of GPUs, single GPU mem` (original) and
/// `,machineId,number of GPUs` (revised); columns are found by header name. Nodes are
/// grouped into templates by (GPUs, GPU memory). GPUs copy `default_node.gpus[0]` when
/// the template has one; otherwise their type is inferred from the GPU memory column
/// (12GB -> "p100", 24GB -> "p40"; absent -> "gpu"). GPUs are split over the NUMA
/// domains in blocks. One partition per distinct `vc` when the file has such a column,
/// else one default partition "philly". Throws InputError.
[[nodiscard]] Cluster read_philly_machines(const std::string& path, const NodeTemplate& default_node,
                                           Diagnostics& diags);
[[nodiscard]] Cluster parse_philly_machines(const std::string& text, const std::string& path,
                                            const NodeTemplate& default_node, Diagnostics& diags);

}  // namespace gcsim
