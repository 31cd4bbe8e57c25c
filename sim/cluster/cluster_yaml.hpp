// Reads the native YAML cluster description (configs/*.yaml, `schema_version: 1`).
// The schema is documented in configs/README.md. Every problem is reported as
// `file:line:col: error: ...`; several are collected before InputError is thrown.
#pragma once

#include <string>

#include "sim/cluster/cluster.hpp"
#include "sim/core/diagnostics.hpp"

namespace gcsim {

/// Loads and validates a cluster YAML file. Throws InputError.
[[nodiscard]] Cluster load_cluster_yaml(const std::string& path);
/// Same, from text already in memory (`path` is used in diagnostics only).
[[nodiscard]] Cluster parse_cluster_yaml(const std::string& text, const std::string& path);

}  // namespace gcsim
