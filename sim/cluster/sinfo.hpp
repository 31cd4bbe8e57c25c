// `gcsim sinfo`: the per-node breakdown `sinfo -N -o "%N %P %c %m %G"` prints.
#pragma once

#include <string>

#include "sim/cluster/cluster.hpp"

namespace gcsim {

/// One header line (`NODELIST PARTITION CPUS MEMORY GRES`) and one line per
/// (node, partition), nodes in cluster order; the default partition carries `*`.
/// GRES as Slurm prints it, e.g. `gpu:a100_80gb:8(S:0-1)`, `(null)` for none.
[[nodiscard]] std::string format_sinfo(const Cluster& cluster);

}  // namespace gcsim
