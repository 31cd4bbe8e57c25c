// Alibaba cluster inventories as gcsim clusters: the cluster-trace-gpu-v2023 node lists
// (openb_node_list_*.csv: sn,cpu_milli,memory_mib,gpu,model) and the PAI v2020 machine
// spec (pai_machine_spec.csv, headerless; column names in pai_machine_spec.header).
// Neither gives a NUMA layout: every node gets 2 sockets with the cores and GPUs split
// evenly (1 socket when the CPU count is odd), stated as notes in `diags`.
#pragma once

#include <string>
#include <vector>

#include "sim/cluster/cluster.hpp"
#include "sim/core/diagnostics.hpp"

namespace gcsim {

/// One Node per row (named by `sn`), templates grouped by (CPUs, memory, GPU count,
/// model), all nodes in one default partition "batch". GRES type = model, lowercase
/// (`V100M16` -> `v100m16`), as the v2023 pod reader maps gpu_spec. `gpu` 0 with model
/// `nan` is a CPU-only node (openb_node_list_all_node.csv has 310 of them).
[[nodiscard]] Cluster read_alibaba_v2023_nodes(const std::string& path, Diagnostics& diags);
[[nodiscard]] Cluster parse_alibaba_v2023_nodes(const std::string& text, const std::string& path,
                                                Diagnostics& diags);

/// Column names of a PAI v2020 `.header` file (one comma-separated line). Of the v2020
/// tables only pai_machine_spec is held in the data set; the job, task, instance, sensor,
/// group-tag and machine-metric tables (34-663 MB upstream) are present as headers only.
[[nodiscard]] std::vector<std::string> read_pai_v2020_header(const std::string& header_path);
[[nodiscard]] std::vector<std::string> parse_pai_v2020_header(const std::string& text,
                                                              const std::string& header_path);

/// PAI v2020 machines: machine, gpu_type, cap_cpu (cores), cap_mem (GB, read as GiB),
/// cap_gpu, in the order `header_path` names them. gpu_type `CPU` (cap_gpu 0) is a
/// CPU-only machine; other types become lowercase GRES types (`V100M32` -> `v100m32`,
/// `MISC` -> `misc`). One default partition "batch".
[[nodiscard]] Cluster read_pai_v2020_machines(const std::string& path, const std::string& header_path,
                                              Diagnostics& diags);
[[nodiscard]] Cluster parse_pai_v2020_machines(const std::string& text, const std::vector<std::string>& columns,
                                               const std::string& path, Diagnostics& diags);

}  // namespace gcsim
