// The constants of the NCCL collective cost model (latency and bandwidth tables by GPU
// generation, link bandwidths, search and protocol parameters, calibrated terms), loaded
// from configs/nccl/*.yaml. Plain data; models/collective/nccl_model.hpp uses it.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gcsim {

/// NCCL's algorithms, in NCCL's order.
enum class NcclAlgo { kTree, kRing, kCollNetDirect, kCollNetChain, kNvls, kNvlsTree, kPat };
inline constexpr int kNcclAlgos = 7;
/// NCCL's protocols.
enum class NcclProto { kLL, kLL128, kSimple };
inline constexpr int kNcclProtos = 3;
/// NCCL's hardware latency classes (hwLat rows).
enum class NcclHw { kNvlink, kPci, kNet };

/// NCCL path types, best first (src/graph/topo.h), as the model uses them.
enum class NcclPath { kLoc = 0, kNvl = 1, kNvb = 2, kC2c = 3, kPix = 4, kPxb = 5, kP2c = 6, kPxn = 7,
                      kPhb = 8, kSys = 9, kNet = 10, kDis = 11 };

/// "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT".
[[nodiscard]] std::string_view nccl_algo_name(NcclAlgo a);
/// "LL", "LL128", "Simple".
[[nodiscard]] std::string_view nccl_proto_name(NcclProto p);
/// NCCL_ALGO / NCCL_PROTO spellings, any case.
[[nodiscard]] std::optional<NcclAlgo> parse_nccl_algo(std::string_view s);
[[nodiscard]] std::optional<NcclProto> parse_nccl_proto(std::string_view s);
/// "LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS".
[[nodiscard]] std::string_view nccl_path_name(NcclPath p);
[[nodiscard]] std::optional<NcclPath> parse_nccl_path(std::string_view s);

/// The link class a communicator's ring runs on (NcclModel::link_class): NVLink (or NVSwitch),
/// PCIe peer-to-peer, host memory (SHM), the network. The fitted per-class terms key on it.
enum class NcclLinkClass { kNvlink, kPcie, kShm, kNet };
inline constexpr int kNcclLinkClasses = 4;
/// "nvlink", "pcie", "shm", "net" (the keys of calibration.links).
[[nodiscard]] std::string_view nccl_link_class_name(NcclLinkClass c);
[[nodiscard]] std::optional<NcclLinkClass> parse_nccl_link_class(std::string_view s);

/// Fitted terms of one link class (`gcsim calibrate nccl`): t = L + latency_us + S / (B x bw_efficiency),
/// applied after NCCL's algorithm/protocol choice. The defaults change nothing.
struct NcclLinkCalibration {
  double latency_us = 0;      // added to every call (may be negative)
  double bw_efficiency = 1;   // multiplies the chosen algorithm's bandwidth
};

/// A latency table cell: < 0 = not applicable.
using NcclLatencyTable = std::array<std::array<double, kNcclProtos>, kNcclAlgos>;

/// One GPU generation (a row of NCCL's compute-capability tables). Triples are indexed
/// N = 1 / N = 2 / N > 2 nodes.
struct NcclGeneration {
  std::string name;
  int min_sm = 0;
  std::vector<double> intra_speeds, inter_speeds;  // channel speeds tried, high to low
  double ll_max_bw_1node = 0;
  double ring_ll128_per_channel = 0;
  std::array<double, 3> tree_per_channel{};
  std::array<double, 3> tree_ll128_per_channel{};
  std::array<double, 3> nvls_tree_per_channel{};   // 0 = none
  double nvls_efficiency = 0;                      // 0 = no NVLS
};

/// What the model needs to know about a GPU product.
struct NcclGpuModel {
  std::string match;        // case-insensitive substring of the model name ("" for the default)
  int sm = 80;              // compute capability x 10
  double nvlink_link_bw = 20;  // GB/s per NVLink, NCCL's effective figure
  int pcie_gen = 4;         // the generation its own PCIe link runs at
  bool pcie_p2p = true;     // PCIe peer-to-peer offered by the driver
};

struct NcclCpuVendor {
  std::string name;                        // "intel", "amd"
  double sys_bw = 16;                      // inter-socket (and inter-NUMA) link, GB/s
  double net_overhead_us = 1;              // per network step, N > 1
  std::array<double, 2> ll_max_bw_multinode{};  // N = 2 / N > 2
  double p2p_phb_overhead = 1;             // bandwidth charge of P2P through the root complex
  int p2p_sys_max_gpus = 0;                // P2P allowed across SYS up to this many GPUs
};

struct NcclNetTransport {
  std::string name;          // "ib", "socket", "tcpxo"
  double latency_us = 0;     // NCCL's latencyInter
  double flush_us = 0;       // Simple's extra per network step
  bool ll128 = true;         // the transport carries LL128 (NCCL's LL128 needs ordered 128 B stores)
};

struct NcclTuning {
  std::string source;        // the file it was read from

  NcclLatencyTable base_latency{};
  std::array<NcclLatencyTable, 3> hw_latency{};   // indexed by NcclHw

  std::vector<NcclGeneration> generations;        // sorted by min_sm
  std::vector<NcclGpuModel> gpu_models;
  NcclGpuModel default_gpu;

  std::array<double, 6> pcie_x16_bw_by_gen{};     // Gen1..Gen6
  double local_bw = 5000;

  std::string default_cpu_vendor = "intel";
  std::vector<NcclCpuVendor> cpus;
  std::vector<NcclNetTransport> net_transports;

  // search
  int max_search_channels = 16;
  int max_channels = 32;
  double speed_drop_ratio = 0.49;
  double dup_min_speed = 25;
  int dup_sm_above = 80;
  double dup_newer_min_speed = 50;
  int dup_newer_max_channels = 4;
  double tree_intra_max_ratio = 2;
  NcclPath p2p_max_path = NcclPath::kPxb;
  NcclPath gdr_max_path = NcclPath::kPxb;
  int nvls_min_local_gpus = 5;
  int nvls_max_arity = 32;
  int collnet_max_local_gpus = 8;

  // protocol
  double ring_ll_factor = 0.5;
  double ring_ll128_factor = 0.92;
  double tree_factor = 0.92;
  double tree_ll_divisor = 3.8;
  double tree_ll128_factor_1node = 7.0 / 9.0;
  double tree_ll128_factor_multinode = 120.0 / 128.0;
  double pat_factor = 0.75;
  int nvls_min_channels = 2;
  double collnet_hopper_factor = 0.85;
  double collnet_inter_factor = 0.9;
  double plateau_factor = 1.4;
  double plateau_factor_pre_ampere = 1.9;
  double plateau_min_bytes = 64;
  std::vector<int> ll128_sms;
  std::array<std::vector<double>, kNcclProtos> tree_correction;

  // enqueue
  std::array<int, kNcclProtos> threads{512, 640, 512};
  int simple_threads_low_bw = 256;
  double simple_low_bw_limit = 12;
  std::array<double, kNcclProtos> thread_threshold{8, 8, 64};

  // p2p
  double p2p_ll_threshold = 16384;
  double p2p_per_channel_net_bw = 14;

  // calibrated
  double launch_process_per_gpu_us = 5;
  double launch_per_extra_gpu_us = 3;
  double shm_duplex_efficiency = 1;
  /// calibration.links (optional in the file): indexed by NcclLinkClass.
  std::array<NcclLinkCalibration, kNcclLinkClasses> link_calibration{};

  /// The generation row for an SM (the last with min_sm <= sm).
  [[nodiscard]] const NcclGeneration& generation(int sm) const;
  [[nodiscard]] int generation_index(int sm) const;
  /// The product entry for a model string (first substring match, else default_gpu).
  [[nodiscard]] const NcclGpuModel& gpu_model(const std::string& model, bool* matched = nullptr) const;
  /// nullptr when unknown.
  [[nodiscard]] const NcclCpuVendor* cpu(const std::string& vendor) const;
  [[nodiscard]] const NcclNetTransport* net_transport(const std::string& name) const;
  /// PCIe bandwidth of a gen x width link in NCCL's units (GB/s).
  [[nodiscard]] double pcie_bw(int gen, int width) const;
};

/// Reads a tuning file. Throws InputError (`path:line:col: error: ...`) on unknown keys,
/// missing keys, malformed numbers, wrong shapes.
[[nodiscard]] NcclTuning load_nccl_tuning(const std::string& path);
/// Parses tuning YAML text; `path` names it in diagnostics.
[[nodiscard]] NcclTuning parse_nccl_tuning(const std::string& text, const std::string& path);
/// `<source_dir>/configs/nccl/default.yaml`.
[[nodiscard]] std::string default_nccl_tuning_path(const std::string& source_dir);

}  // namespace gcsim
