// Text views of a node template computed from its topology graph: the `nvidia-smi topo -m`
// matrix, gres.conf GPU lines as Slurm's AutoDetect=nvml would write them, and the
// slurm.conf NodeName line as `slurmd -C` prints it. Pure functions; no I/O.
#pragma once

#include <string>
#include <vector>

#include "sim/cluster/cluster.hpp"

namespace gcsim {

/// CPU ids as a Linux/nvidia-smi range list: {0,1,2,5,7,8} -> "0-2,5,7-8" (sorted, unique).
[[nodiscard]] std::string format_cpu_ranges(std::vector<int> ids);

/// OS CPU ids of a NUMA domain: cpu_os_ids of its abstract CPUs when the template has them,
/// otherwise Linux numbering, where hyperthread siblings are offset by the core count
/// (thread t of core c is CPU c + t * cores), which is what users see on x86 hosts; Slurm's
/// abstract numbering (c * threads_per_core + t) would differ.
[[nodiscard]] std::vector<int> numa_os_cpus(const NodeTemplate& t, int numa);

/// `nvidia-smi topo -m` as a recent driver prints it: tab-separated, GPU rows with
/// CPU Affinity / NUMA Affinity / GPU NUMA ID ("N/A": GPU memory is not a NUMA node on
/// PCIe/SXM boards), NIC rows and columns named NIC0.., the Legend and a NIC Legend (only
/// when there are NICs). A template without GPUs gives "" (nvidia-smi finds no devices).
[[nodiscard]] std::string format_nvidia_smi_topo(const NodeTemplate& t);

/// gres.conf, one line per GPU:
/// `NodeName=<names> Name=gpu Type=<gres_type> File=/dev/nvidia<i> Cores=<ranges> Links=<l,..>`.
/// Cores= are Slurm abstract core ids of the GPU's NUMA domain. Links= are what
/// AutoDetect=nvml computes: per GPU, the active NVLinks whose remote end is that GPU, -1
/// for itself. On NVSwitch systems the remote end of every link is a switch, so every
/// entry but the -1 is 0 (Slurm's gpu/nvml plugin counts only GPU-to-GPU links).
[[nodiscard]] std::string format_gres_conf(const NodeTemplate& t, const std::string& node_names);

/// The slurm.conf node line as `slurmd -C` prints it (without its UpTime line):
/// `NodeName=<names> CPUs=256 Boards=1 SocketsPerBoard=2 CoresPerSocket=64 ThreadsPerCore=2
/// RealMemory=2097152 Gres=gpu:a100_80gb:8` — Gres= only with GPUs (`gpu:<type>:<n>`,
/// comma-separated per type in order of first appearance); no State=, which slurmd -C does
/// not print. Ends with a newline.
[[nodiscard]] std::string format_slurm_node(const NodeTemplate& t, const std::string& node_names);

}  // namespace gcsim
