// One entry point for single-node descriptions of real machines: hwloc XML, NCCL
// topology XML or `nvidia-smi topo -m` text, told apart by their content. Used by
// `--cluster FILE --nodes N` and by `import:` in a YAML node template.
#pragma once

#include <optional>
#include <string>

#include "sim/cluster/cluster.hpp"
#include "sim/core/diagnostics.hpp"

namespace gcsim {

struct NodeImportOptions {
  std::string gpu_model;  // what an nvidia-smi matrix does not name
  double nic_bandwidth_bps = 0;
  int sockets = 0;        // nvidia-smi: sockets (the matrix only shows NUMA domains)
};

/// std::nullopt when the file is none of the three formats (nothing is reported then);
/// InputError when it is one of them but invalid.
[[nodiscard]] std::optional<NodeTemplate> import_node_description(const std::string& path,
                                                                  const NodeImportOptions& opt,
                                                                  Diagnostics& warnings);

}  // namespace gcsim
