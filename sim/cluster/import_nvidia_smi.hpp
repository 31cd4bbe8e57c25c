// Importer for `nvidia-smi topo -m` matrices as users paste them (tab- or space-aligned,
// old mlx5_N or new NICn + "NIC Legend" columns, optional NUMA / GPU NUMA ID columns,
// terminal colour codes) and the derivation of a NodeTemplate from one. Also holds the
// CPU-list helpers the NCCL XML importer shares (affinity sets -> cores, SMT, NUMA).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/cluster/cluster.hpp"
#include "sim/core/diagnostics.hpp"

namespace gcsim {

/// The matrix as printed. Devices are indexed GPUs first, then NICs: device i is
/// gpus[i] for i < gpus.size(), else nics[i - gpus.size()].
struct NvidiaSmiMatrix {
  std::string path;                             // where it was read from (for diagnostics)
  std::vector<std::string> gpus, nics;          // column names: "GPU0", "NIC3", "mlx5_0"
  /// (gpus+nics)^2 link classes: "X", "NV12", "PIX", "PXB", "PHB", "NODE", "SYS"
  /// (old drivers' "SOC" is stored as "SYS").
  std::vector<std::vector<std::string>> cells;
  /// Per GPU, as printed ("0-23,48-71", "3", "N/A"); empty when the column is absent.
  std::vector<std::string> cpu_affinity, numa_affinity, gpu_numa_id;
  std::map<std::string, std::string> nic_legend;  // "NIC0" -> "mlx5_0"
  int header_line = 0;                            // 1-based line of the column header

  [[nodiscard]] size_t devices() const { return gpus.size() + nics.size(); }
  [[nodiscard]] const std::string& device_name(size_t i) const {
    return i < gpus.size() ? gpus[i] : nics[i - gpus.size()];
  }
};

/// Parses the text of `nvidia-smi topo -m` (lines before the GPU0 header, `#` comments
/// and the trailing Legend block are skipped). Throws InputError (`path:line:col`).
[[nodiscard]] NvidiaSmiMatrix parse_nvidia_smi_topo(const std::string& text, const std::string& path);
/// read_input_file + parse_nvidia_smi_topo.
[[nodiscard]] NvidiaSmiMatrix read_nvidia_smi_topo(const std::string& path);

/// What the matrix does not say. Zero / empty = unknown (derived or defaulted, with a warning).
struct NvidiaSmiOptions {
  std::string name;                  // NodeTemplate name
  std::string gpu_model;             // e.g. "NVIDIA A100-SXM4-80GB"
  std::string gres_type;             // default: the model lower-cased, spaces -> '_'
  int64_t gpu_memory_bytes = 0;      // default: "<n>GB" in the model string, as GiB
  int64_t memory_mb = 0;             // node RealMemory
  int sockets = 0;                   // total sockets (boards = 1)
  int cores_per_socket = 0;
  int threads_per_core = 0;
  double nic_bandwidth_bps = 0;      // line rate of every NIC
  double nvlink_link_bandwidth_bps = 0;  // default: 50 GB/s for B-series, else 25 GB/s
  int pcie_gen = 0;                  // generation of the derived switches; 0 = the GPU product's (Gen3 for
                                     // Volta/Pascal/Turing, Gen5 for Hopper/Blackwell, else Gen4)
};

/// Builds a NodeTemplate whose devices reproduce every cell under the rule
/// NV# = NVLink (switch or pair), PIX = same pcie_switch, PXB = different switches
/// with a common ancestor switch, SYS = different NUMA, PHB = same host_bridge,
/// NODE = otherwise. Assumptions and inconsistencies go to `warnings`.
[[nodiscard]] NodeTemplate node_from_nvidia_smi(const NvidiaSmiMatrix& m, const NvidiaSmiOptions& opt,
                                                Diagnostics& warnings);

// ---- CPU-list helpers (shared with the NCCL XML importer) ----

/// "0-23,48-71" -> sorted, de-duplicated OS CPU ids; std::nullopt on "N/A" or malformed.
[[nodiscard]] std::optional<std::vector<int>> parse_cpu_list(std::string_view s);

/// What the CPU sets of the NUMA domains say about the cores. Linux numbers the SMT
/// siblings of core c as c + t * total_cores, so a NUMA set "48-63,176-191" on a
/// 128-core machine is 16 cores with 2 threads each.
struct CpuLayout {
  bool ok = false;          // every set has the same shape
  int threads_per_core = 1;
  int cores_per_numa = 0;
  int total_cores = 0;      // the sibling offset when threads > 1, else highest CPU + 1
  std::string problem;      // why not ok
};
/// `sets`: the distinct OS CPU sets, one per NUMA domain.
[[nodiscard]] CpuLayout infer_cpu_layout(const std::vector<std::vector<int>>& sets);
/// OS PU id of each abstract CPU (core * threads + thread) for that layout:
/// core c, thread t -> c + t * total_cores. Empty when threads_per_core == 1.
[[nodiscard]] std::vector<int> cpu_os_ids_for(const CpuLayout& layout, int cores);

}  // namespace gcsim
