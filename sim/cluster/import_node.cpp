#include "sim/cluster/import_node.hpp"

#include "sim/cluster/import_hwloc.hpp"
#include "sim/cluster/import_nccl_xml.hpp"
#include "sim/cluster/import_nvidia_smi.hpp"
#include "sim/core/input_file.hpp"

namespace gcsim {

std::optional<NodeTemplate> import_node_description(const std::string& path, const NodeImportOptions& opt,
                                                    Diagnostics& warnings) {
  const std::string text = read_input_file(path);
  const size_t lt = text.find('<');
  if (lt != std::string::npos && text.find("<topology", lt) != std::string::npos)
    return import_hwloc_xml(path, warnings);
  if (lt != std::string::npos && text.find("<system", lt) != std::string::npos)
    return import_nccl_topo_xml(path, warnings);
  if (text.find("GPU0") != std::string::npos) {
    NvidiaSmiOptions o;
    o.gpu_model = opt.gpu_model;
    o.nic_bandwidth_bps = opt.nic_bandwidth_bps;
    o.sockets = opt.sockets;
    return node_from_nvidia_smi(parse_nvidia_smi_topo(text, path), o, warnings);
  }
  return std::nullopt;
}

}  // namespace gcsim
