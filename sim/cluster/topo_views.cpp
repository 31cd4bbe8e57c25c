// The nvidia-smi, gres.conf and slurm.conf views of a node template, computed from
// build_node_topology's graph.
#include "sim/cluster/topo_views.hpp"

#include "sim/core/input_file.hpp"

#include <algorithm>
#include <sstream>

#include "sim/cluster/topology.hpp"

namespace gcsim {

std::string format_cpu_ranges(std::vector<int> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return format_id_list(ids);
}

std::vector<int> numa_os_cpus(const NodeTemplate& t, int numa) {
  std::vector<int> out;
  const int first = numa * t.cores_per_numa;
  for (int th = 0; th < t.threads_per_core; ++th)
    for (int c = first; c < first + t.cores_per_numa; ++c) {
      const int abstract = c * t.threads_per_core + th;
      if (!t.cpu_os_ids.empty()) {
        if (abstract < static_cast<int>(t.cpu_os_ids.size()))
          out.push_back(t.cpu_os_ids[static_cast<size_t>(abstract)]);
      } else {
        out.push_back(c + th * t.cores());
      }
    }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

std::string cell(const PathInfo& p) { return p.cls == PathClass::kSelf ? " X " : p.label(); }

}  // namespace

std::string format_nvidia_smi_topo(const NodeTemplate& t) {
  if (t.gpus.empty()) return "";
  const NodeTopology topo = build_node_topology(t);
  const int ng = topo.gpu_count(), nn = topo.nic_count();
  std::vector<DeviceRef> devs;
  for (int i = 0; i < ng; ++i) devs.push_back(DeviceRef::gpu(i));
  for (int i = 0; i < nn; ++i) devs.push_back(DeviceRef::nic(i));
  auto dev_name = [&](const DeviceRef& d) {
    return (d.kind == DeviceRef::Kind::kGpu ? "GPU" : "NIC") + std::to_string(d.index);
  };

  std::ostringstream os;
  for (const auto& d : devs) os << '\t' << dev_name(d);
  os << "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n";
  for (const auto& r : devs) {
    os << dev_name(r);
    for (const auto& c : devs) os << '\t' << cell(topo.path(r, c));
    if (r.kind == DeviceRef::Kind::kGpu) {
      const int numa = topo.gpu_numa(r.index);
      // nvidia-smi pads NUMA Affinity to a second tab stop before "N/A".
      os << '\t' << format_cpu_ranges(numa_os_cpus(t, numa)) << '\t' << numa << "\t\tN/A";
    }
    os << '\n';
  }
  // The legend is the fixed text nvidia-smi prints with the matrix.
  os << "\nLegend:\n\n"
     << "  X    = Self\n"
     << "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n"
     << "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n"
     << "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
     << "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n"
     << "  PIX  = Connection traversing at most a single PCIe bridge\n"
     << "  NV#  = Connection traversing a bonded set of # NVLinks\n";
  if (nn > 0) {
    os << "\nNIC Legend:\n\n";
    for (int i = 0; i < nn; ++i) os << "  NIC" << i << ": " << t.nics[static_cast<size_t>(i)].name << '\n';
  }
  return os.str();
}

std::string format_gres_conf(const NodeTemplate& t, const std::string& node_names) {
  const NodeTopology topo = build_node_topology(t);
  const int ng = topo.gpu_count();
  std::ostringstream os;
  for (int g = 0; g < ng; ++g) {
    os << "NodeName=" << node_names << " Name=gpu Type=" << t.gpus[static_cast<size_t>(g)].gres_type
       << " File=/dev/nvidia" << g << " Cores=" << format_cpu_ranges(topo.gpu_local_cores(g)) << " Links=";
    for (int o = 0; o < ng; ++o) {
      if (o) os << ',';
      if (o == g) {
        os << -1;
        continue;
      }
      // AutoDetect=nvml counts a link only when its remote end is the other GPU itself.
      auto p = topo.path(DeviceRef::gpu(g), DeviceRef::gpu(o));
      const bool direct = p.cls == PathClass::kNvlink && p.edges.size() == 1;
      os << (direct ? p.nvlinks : 0);
    }
    os << '\n';
  }
  return os.str();
}

std::string format_slurm_node(const NodeTemplate& t, const std::string& node_names) {
  std::ostringstream os;
  os << "NodeName=" << node_names << " CPUs=" << t.cpus() << " Boards=" << t.boards
     << " SocketsPerBoard=" << t.sockets << " CoresPerSocket=" << t.cores_per_socket()
     << " ThreadsPerCore=" << t.threads_per_core << " RealMemory=" << t.memory_mb;
  std::vector<std::pair<std::string, int>> types;
  for (const auto& g : t.gpus) {
    auto it = std::find_if(types.begin(), types.end(), [&](const auto& x) { return x.first == g.gres_type; });
    if (it == types.end()) types.emplace_back(g.gres_type, 1);
    else ++it->second;
  }
  for (size_t i = 0; i < types.size(); ++i)
    os << (i == 0 ? " Gres=" : ",") << "gpu:" << types[i].first << ':' << types[i].second;
  os << '\n';
  return os.str();
}

}  // namespace gcsim
