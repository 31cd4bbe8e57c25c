// Reads a Slurm configuration (slurm.conf with its Include files, the gres.conf beside
// it, and topology.conf when TopologyPlugin=topology/tree) as a gcsim Cluster. Errors are
// `file:line:col: error: ...`, several collected before InputError is thrown; keys gcsim
// does not model become one warning per key name.
#pragma once

#include <string>

#include "sim/cluster/cluster.hpp"
#include "sim/core/diagnostics.hpp"

namespace gcsim {

/// Loads `slurm_conf_path` and the gres.conf / topology.conf in its directory. Warnings
/// (unmodelled keys, AutoDetect, ...) are added to `warnings`. Throws InputError carrying
/// every error (and the warnings before them) when the configuration is invalid.
[[nodiscard]] Cluster load_slurm_conf(const std::string& slurm_conf_path, Diagnostics& warnings);

}  // namespace gcsim
