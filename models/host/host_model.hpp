// The host and NUMA model: what it costs when a job's CPUs and memory sit away from its
// GPUs and NICs (shared/research/nccl_model.md §6 and §7 layer 6). Host<->device copy
// bandwidth from local, remote or interleaved buffers with several GPUs copying at once,
// the data-loader slowdown of cores on another NUMA domain, GPUDirect RDMA or a host bounce
// by the GPU-NIC path class, and the host staging NCCL uses between GPUs without P2P.
// Parameters: configs/host/default.yaml; measured overrides per node template: a
// calibration file (schema in configs/host/README.md).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/cluster.hpp"
#include "sim/cluster/topology.hpp"
#include "sim/placement/node_state.hpp"

namespace gcsim {

// ---------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------

/// One CPU family / inter-socket interconnect. Remote factors are the copy bandwidth with
/// the buffer on another socket divided by the bandwidth with it on the GPU's own NUMA
/// domain, both pinned.
struct HostPlatform {
  std::string name;                  // "intel-bdw", "intel-skl-icx", "amd-epyc", ...
  double sys_bandwidth_Bps = 16e9;   // NCCL's inter-CPU (SYS) link figure for this CPU (topo.h)
  double h2d_remote = 1;             // one GPU copying alone
  double d2h_remote = 1;
  double h2d_remote_all_gpus = 1;    // every GPU of the node copying at once, all from remote buffers
  double d2h_remote_all_gpus = 1;
};

/// Staged (no GPUDirect RDMA) inter-node bandwidth per GPU is at most k x the GPU's
/// effective PCIe bandwidth, k by the GPU-NIC path class.
struct GdrStaging {
  double phb = 1.0;
  double node = 0.76;
  double sys = 0.48;
};

/// Measured copy bandwidths of one GPU copying alone, pinned buffers; 0 = not measured.
struct GpuCopyCalibration {
  double h2d_local_Bps = 0, h2d_remote_Bps = 0;
  double d2h_local_Bps = 0, d2h_remote_Bps = 0;
};

/// One (CPU NUMA domain, memory NUMA domain) pair that `gcsim real probe` measured.
struct MemoryPairCalibration {
  int cpu_numa = 0, mem_numa = 0;
  double triad_Bps = 0;    // STREAM triad, the domain's cores together
  double latency_ns = 0;   // dependent loads (pointer chase), one core; 0 = not measured
  int threads = 0;
};

/// What a calibration file says about one node template (0 / negative = not measured).
struct TemplateCalibration {
  std::string platform;                      // "" = not set
  GpuCopyCalibration copy;                   // every GPU of the template
  std::map<int, GpuCopyCalibration> gpus;    // per GPU index, over `copy` field by field
  double h2d_remote_all_gpus = 0;            // measured remote / local with every GPU copying
  double d2h_remote_all_gpus = 0;
  double loader_rho = -1;                    // 1 - remote / local loader throughput
  std::optional<double> gdr_phb, gdr_node, gdr_sys;  // measured staged / GDR inter-node bandwidth
  std::vector<MemoryPairCalibration> memory;  // probe's CPU-side matrix, later files replace pairs
  std::vector<std::string> sources;          // files (and their `source:` text) it came from
};

struct HostParams {
  std::string source;                       // the parameter file
  double pcie_efficiency = 0.8;             // effective / raw PCIe for a pinned copy
  double dram_dma_per_socket_Bps = 56e9;    // what DMA can pull from one socket's memory
  double same_socket_factor = 1;            // buffer on another NUMA domain of the GPU's socket
  double rho_memory_bound = 0.3;            // loader slowdown at remote fraction 1
  double rho_compute_bound = 0.05;
  GdrStaging gdr_staging;
  std::vector<HostPlatform> platforms;
  std::string default_platform;
  std::map<std::string, std::string> template_platforms;  // node template name -> platform
  std::map<std::string, TemplateCalibration> calibration;  // node template name -> measured

  /// nullptr when unknown.
  [[nodiscard]] const HostPlatform* platform(const std::string& name) const;
  /// The platform of a node template: calibration, then template_platforms, then the default.
  [[nodiscard]] const HostPlatform& platform_for(const std::string& template_name) const;
  [[nodiscard]] const TemplateCalibration* calibration_for(const std::string& template_name) const;
};

/// Reads a host parameter file (configs/host/default.yaml). Throws InputError
/// (`path:line:col: error: ...`, several collected) on unknown, missing or repeated keys,
/// malformed numbers and values out of range.
[[nodiscard]] HostParams load_host_params(const std::string& path);
[[nodiscard]] HostParams parse_host_params(const std::string& text, const std::string& path);
/// `<source_dir>/configs/host/default.yaml`.
[[nodiscard]] std::string default_host_params_path(const std::string& source_dir);

/// Applies a calibration file (what the real mode's `probe` writes): every figure it gives
/// replaces the model's for its node template; later files override earlier ones field by
/// field. Throws InputError as load_host_params does; a platform it names must be in `p`.
[[nodiscard]] HostParams apply_host_calibration(HostParams p, const std::string& path);
[[nodiscard]] HostParams parse_host_calibration(HostParams p, const std::string& text, const std::string& path);

// ---------------------------------------------------------------------------------------
// The model over one node
// ---------------------------------------------------------------------------------------

/// Where a buffer's pages live.
struct MemBinding {
  enum class Kind {
    kGpuLocal,     // the NUMA domain of the GPU it feeds (numactl -m <gpu's node>)
    kNuma,         // one NUMA domain (--mem-bind=map_mem, numactl -m N)
    kInterleaved,  // evenly over every NUMA domain of the node (numactl --interleave=all)
    kFirstTouch,   // unbound: Linux's default policy puts pages where the touching cores are
  };
  Kind kind = Kind::kGpuLocal;
  int numa = -1;           // kNuma
  std::vector<int> cores;  // kFirstTouch: Slurm abstract core ids of the process

  [[nodiscard]] static MemBinding gpu_local() { return {}; }
  [[nodiscard]] static MemBinding on_numa(int n) { return {Kind::kNuma, n, {}}; }
  [[nodiscard]] static MemBinding interleaved() { return {Kind::kInterleaved, -1, {}}; }
  [[nodiscard]] static MemBinding first_touch(std::vector<int> cores) {
    return {Kind::kFirstTouch, -1, std::move(cores)};
  }
};

enum class CopyDir { kH2D, kD2H };

/// One GPU copying to or from a host buffer.
struct CopyStream {
  int gpu = 0;
  MemBinding mem;
};

enum class LoaderKind { kMemoryBound, kComputeBound };

/// One GPU's way to the network.
struct NicRoute {
  int gpu = 0;
  int nic = -1;               // -1: the node has no NIC
  PathClass cls = PathClass::kSys;
  double path_raw_Bps = 0;    // bottleneck of the GPU-NIC path, raw PCIe rates
  int nic_sharers = 1;        // GPUs of the set that use this NIC
  int staged_on_socket = 0;   // GPUs of the set staging through the host memory of this GPU's socket
};

/// What a job's placement on one node costs on the host side; the runtime model reads it.
/// Per-GPU figures are the slowest GPU's (data-parallel steps wait for it).
struct HostEffects {
  double h2d_Bps = 0;          // per GPU, all of the job's GPUs on the node copying at once
  double d2h_Bps = 0;
  double h2d_factor = 1;       // against the same GPUs copying from GPU-local buffers
  double d2h_factor = 1;
  double loader_factor = 1;    // data-loader throughput multiplier, slowest task
  double gdr_factor = 1;       // inter-node bandwidth / NIC share (1 = GPUDirect RDMA at the NIC rate)
  double inter_node_Bps = 0;   // per GPU, the job's GPUs sending at once; 0 = no NIC
  /// Multiplier on intra-node GPU-GPU traffic that NCCL sends through host memory (SHM:
  /// GPU pairs beyond PXB without NVLink): < 1 when the job's cores leave NCCL only remote
  /// memory for its buffers; 1 when no pair is staged (NVLink, P2P under one switch).
  double staging_factor = 1;
  bool host_staged = false;    // some GPU pair of the job goes through host memory
  std::vector<std::string> notes;
};

struct HostJobOptions {
  double loader_rho = -1;          // < 0: the memory-bound figure (the template's measured one when calibrated)
  std::optional<MemBinding> mem;   // every task's buffers; default: each task's mem_numa, else first touch
  bool notes = true;               // explain in HostEffects::notes (the simulation's step model reads none)
};

/// The host model of one node template. `params`, `tmpl` and `topo` must outlive it.
/// Throws std::invalid_argument when the calibration names a GPU the template lacks.
class HostModel {
 public:
  HostModel(const HostParams& params, const NodeTemplate& tmpl, const NodeTopology& topo);

  [[nodiscard]] const HostPlatform& platform() const { return *platform_; }
  [[nodiscard]] const NodeTopology& topology() const { return *topo_; }

  /// Share of a buffer's pages on each NUMA domain of the node (sums to 1). Throws
  /// std::invalid_argument for a bad NUMA index or a first-touch binding without cores.
  [[nodiscard]] std::vector<double> memory_spread(int gpu, const MemBinding& mem) const;

  /// Bandwidth of each stream when all of them copy at once, bytes/s:
  ///   local = min(eff x raw PCIe share, DMA share of the socket memory), eff = 0.8 or the
  ///   calibrated single-stream figure / raw; streams sharing a PCIe link split it, streams
  ///   reading one socket's memory split its DMA bandwidth;
  ///   bw = local / sum_d (w_d / f_d), f_d = 1 on the GPU's domain, same_socket_factor on
  ///   its socket, on another socket the platform's remote factor, moved linearly from the
  ///   single-stream to the all-GPUs figure with the number of streams reading remotely.
  [[nodiscard]] std::vector<double> copy_bandwidths_Bps(CopyDir dir, const std::vector<CopyStream>& streams) const;
  /// One GPU's copy bandwidth with the GPUs in `streaming` (this one included or not)
  /// copying at the same time under the same binding.
  [[nodiscard]] double h2d_bandwidth_Bps(int gpu, const MemBinding& mem, const std::vector<int>& streaming = {}) const;
  [[nodiscard]] double d2h_bandwidth_Bps(int gpu, const MemBinding& mem, const std::vector<int>& streaming = {}) const;

  /// Share of a task's cores, or of its memory, off its GPUs' NUMA domains: per GPU
  /// max(cores off its domain / cores, memory off its domain), averaged over `gpus`.
  [[nodiscard]] double remote_fraction(const std::vector<int>& cores, const MemBinding& mem,
                                       const std::vector<int>& gpus) const;
  /// Data-loader throughput multiplier 1 - rho x remote_fraction, in (0, 1]. Throws
  /// std::invalid_argument for rho outside [0, 1), no cores or no GPUs.
  [[nodiscard]] double loader_factor(const std::vector<int>& cores, const MemBinding& mem,
                                     const std::vector<int>& gpus, double rho) const;
  /// The same for a task binding (mem_numa -1 = first touch on its cores).
  [[nodiscard]] double loader_factor(const TaskBinding& task, double rho) const;
  /// rho for a pipeline kind; the template's measured rho replaces the memory-bound one.
  [[nodiscard]] double loader_rho(LoaderKind kind) const;
  /// What DMA can pull from one socket's memory: the sum of the probe's local triad
  /// figures over the socket's NUMA domains when calibrated, else dram_dma_per_socket.
  [[nodiscard]] double dram_socket_Bps(int socket) const;

  /// Each GPU's NIC when the GPUs of `gpus` send at once: the NICs of its best path class,
  /// the least used of them so far, then the lowest index (GPUs in the order given).
  [[nodiscard]] std::vector<NicRoute> nic_routes(const std::vector<int>& gpus) const;
  /// The route of one GPU to a given NIC, alone on it.
  [[nodiscard]] NicRoute route(int gpu, int nic) const;
  /// Per-GPU inter-node bandwidth, bytes/s. PIX/PXB (GPUDirect RDMA): min(NIC share, path).
  /// PHB/NODE/SYS (NCCL stages through the GPU's host memory): min(NIC share, socket DMA /
  /// (2 x staged GPUs of the socket), k x effective PCIe of the GPU, and on SYS the
  /// platform's SYS figure); a calibrated staged/GDR ratio replaces the formula.
  [[nodiscard]] double inter_node_bandwidth_Bps(const NicRoute& r) const;
  [[nodiscard]] double inter_node_bandwidth_Bps(int gpu, const std::vector<int>& streaming = {}) const;
  /// inter_node_bandwidth_Bps / NIC share: 1 with GPUDirect RDMA at the NIC rate.
  [[nodiscard]] double gdr_factor(const NicRoute& r) const;
  [[nodiscard]] double gdr_factor(int gpu, const std::vector<int>& streaming = {}) const;

  /// The summary over a job's allocation on this node (its GPUs, cores, task bindings).
  [[nodiscard]] HostEffects host_effects(const NodeAlloc& alloc, const HostJobOptions& o = {}) const;

 private:
  [[nodiscard]] double raw_bandwidth(const TopoEdge& e) const;
  [[nodiscard]] double efficiency(int gpu, CopyDir dir) const;
  [[nodiscard]] double single_remote(int gpu, CopyDir dir) const;
  [[nodiscard]] double all_remote(CopyDir dir) const;
  [[nodiscard]] double cross_socket_factor(int gpu, CopyDir dir, int remote_streams) const;
  [[nodiscard]] double copy_factor(int gpu, CopyDir dir, const std::vector<double>& spread, int remote_streams) const;
  [[nodiscard]] bool crosses_socket(int gpu, const std::vector<double>& spread) const;
  [[nodiscard]] double local_raw_Bps(int gpu) const;
  [[nodiscard]] double calibrated_local(int gpu, CopyDir dir) const;

  const HostParams* params_;
  const NodeTemplate* tmpl_;
  const NodeTopology* topo_;
  const HostPlatform* platform_;
  const TemplateCalibration* cal_;             // nullptr = none
  std::vector<double> dram_socket_Bps_;        // per socket: what DMA can pull from its memory
  double memory_rho_ = -1;                     // loader rho from the probe's remote/local triad
  std::vector<std::vector<int>> local_edges_;  // per GPU: PCIe edge ids of its path to its NUMA domain
  std::vector<NicRoute> routes_;               // [gpu * nic_count + nic]: route(gpu, nic)
  [[nodiscard]] NicRoute compute_route(int gpu, int nic) const;
};

}  // namespace gcsim
