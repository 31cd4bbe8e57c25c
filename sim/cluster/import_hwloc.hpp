// hwloc importer: turns an hwloc topology (an XML file written by `lstopo --of xml`, v1 or
// v2, plain or gzipped, or a topology already loaded from the live machine) into a
// NodeTemplate: sockets, NUMA domains, cores and PUs in Slurm's abstract order, GPUs,
// NICs, the PCIe bridge tree and NVLink. Uses libhwloc itself; the mapping rules are
// documented at the functions below.
#pragma once

#include <string>
#include <vector>

#include "sim/cluster/cluster.hpp"
#include "sim/core/diagnostics.hpp"

// hwloc's handle type, declared here so that this header does not pull in <hwloc.h>.
struct hwloc_topology;
typedef struct hwloc_topology* hwloc_topology_t;  // NOLINT: matches hwloc.h exactly

namespace gcsim {

/// What the importer derives besides the NodeTemplate.
struct HwlocImport {
  NodeTemplate node;
  /// Per GPU (same order as node.gpus): the Slurm abstract ids of the cores local to it,
  /// i.e. what gres.conf `Cores=` says. It can be narrower than the GPU's NUMA domain
  /// (Tioga: one L3 of a NUMA node) and is empty when the GPU has no local CPU.
  std::vector<std::vector<int>> gpu_cores;
};

/// Reads an hwloc XML file (v1 or v2; `.gz` accepted) and converts it with
/// import_hwloc_topology. Throws InputError with a file-level diagnostic when the file
/// cannot be read or hwloc rejects it (hwloc 3.0 XML is named as such). Everything the
/// conversion does not understand becomes a warning in `warnings`.
[[nodiscard]] NodeTemplate import_hwloc_xml(const std::string& path, Diagnostics& warnings);
[[nodiscard]] HwlocImport import_hwloc_xml_detailed(const std::string& path, Diagnostics& warnings);

/// Converts a loaded topology (I/O objects should have been kept with
/// hwloc_topology_set_io_types_filter) into a NodeTemplate; `source` names it in
/// diagnostics and gives the template its name (the file stem).
///
/// CPU side:
/// - sockets = Package objects that contain cores (boards = 1); none: the machine is one.
/// - NUMA domains = distinct cpusets of the NUMA nodes that have CPUs; CPU-less NUMA nodes
///   (GPU memory on POWER9 in hwloc v1 files, CXL) are not domains and not counted in
///   memory_mb. A package's domains are the NUMA nodes inside it when they split its cores
///   exactly; otherwise (memoryless cores, a NUMA node spanning packages) the package is
///   one domain. When packages disagree on the domain count, every package becomes one
///   domain; cores_per_numa is the smallest domain, extra cores are dropped; PUs per core
///   likewise. Each irregularity is a warning.
/// - Abstract core c: packages in hwloc logical order, their domains in order, the cores
///   of a domain in hwloc logical order. cpu_os_ids[c * threads_per_core + t] = OS index
///   of the core's t-th PU.
/// GPUs: PCI class 0x0300/0x0302/0x0380/0x1200 from NVIDIA (0x10de) or AMD (0x1002), minus
///   NVSwitches and server VGA chips, in PCI bus-id order (Slurm's order). model = GPUModel
///   of an NVML/CUDA/RSMI OS device, else of an OpenCL one, else the PCI PCIDevice name,
///   else a small vendor:device table (see kKnownGpus in the .cpp). gres_type = slug of
///   the model (see gres_type_slug). memory = CUDAGlobalMemorySize, RSMIVRAMSize or
///   OpenCLGlobalMemorySize (KiB), else the "NNGB" in the model name. numa = the domain of
///   the first local core of the GPU's non-I/O ancestor.
/// PCIe: root ports (bridges right below a host bridge) and switches (an upstream-port
///   bridge together with its downstream-port bridges) that have a GPU or NIC below them
///   become PcieSwitchSpecs (levels 1, parents before children); host_bridge = ordinal of
///   the host bridge; gen/width guessed from the bridge's link speed (GB/s).
/// NICs: PCI class 0x0200 (Ethernet) and 0x0207 (InfiniBand); name = OpenFabrics OS device
///   (mlx5_0), else network one (ib0, eth0), else "nicN"; bandwidth = PCI link speed.
/// NVLink: NVSwitch PCI devices -> kNvswitch (links_per_gpu from the NVLinkBandwidth
///   matrix when it has GPU-switch entries); else an NVLinkBandwidth GPU matrix -> kPairs
///   with links = bandwidth / per-link bandwidth of the GPU generation (nvlink_link_mbps).
[[nodiscard]] NodeTemplate import_hwloc_topology(hwloc_topology_t topo, const std::string& source,
                                                 Diagnostics& warnings);
[[nodiscard]] HwlocImport import_hwloc_topology_detailed(hwloc_topology_t topo, const std::string& source,
                                                         Diagnostics& warnings);

/// This machine as hwloc discovers it, for the real mode (`gcsim real`). The whole
/// machine is loaded (HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) so that the node keeps its
/// regular layout inside a restricted cpuset; what this process may use is returned
/// apart: `allowed_pus` = OS ids of hwloc's allowed cpuset (the cgroup cpuset), sorted.
/// The node template is named `name`. Throws InputError when hwloc cannot load it.
[[nodiscard]] HwlocImport discover_this_machine(const std::string& name, Diagnostics& warnings,
                                                std::vector<int>* allowed_pus);

/// GRES type from a GPU model: the bracketed marketing name when there is one
/// ("Vega 20 WKS GL-XE [Radeon Pro VII]" -> "Radeon Pro VII"), lowercased, a leading
/// "nvidia " or "amd " dropped, every run of characters other than [a-z0-9.-] turned into
/// one '_', '_' trimmed: "Tesla V100-SXM2-16GB" -> "tesla_v100-sxm2-16gb",
/// "NVIDIA H100 80GB HBM3" -> "h100_80gb_hbm3".
[[nodiscard]] std::string gres_type_slug(const std::string& model);

/// One NVLink's bandwidth, one direction, MB/s, as NVML-derived hwloc matrices count it:
/// 20000 for P100 (NVLink 1), 50000 for B100/B200 (NVLink 5), 25000 otherwise
/// (V100, A100, H100: NVLink 2-4).
[[nodiscard]] double nvlink_link_mbps(const std::string& gpu_model);

}  // namespace gcsim
