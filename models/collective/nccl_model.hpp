// NCCL collective cost model: NcclModel does NCCL's communicator-init analysis for a set of
// GPUs of a Cluster (paths, P2P/SHM/GDR, channel search, ncclTopoTuneModel's tables, from
// configs/nccl/*.yaml); nccl_cost() picks the cheapest algorithm/protocol for one call as NCCL
// does and returns time, algbw and busbw as nccl-tests prints them (nccl_model.md §1-2, §7).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/collective/nccl_tuning.hpp"
#include "sim/cluster/cluster.hpp"

namespace gcsim {

enum class Collective { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kSendRecv };

/// nccl-tests names (`all_reduce`, `all_gather`, `reduce_scatter`, `broadcast`, `reduce`,
/// `alltoall`, `sendrecv`, with or without `_perf`) and NCCL names (`AllReduce`, ...,
/// `AllToAll`, `SendRecv`), any case.
[[nodiscard]] std::optional<Collective> parse_collective(std::string_view s);
/// NCCL's name: "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "AllToAll", "SendRecv".
[[nodiscard]] std::string_view collective_name(Collective c);
/// nccl-tests' name: "all_reduce", ..., "alltoall", "sendrecv".
[[nodiscard]] std::string_view nccl_tests_name(Collective c);
/// nccl-tests' busbw = algbw x factor: AllReduce 2(n-1)/n, AllGather, ReduceScatter and
/// AllToAll (n-1)/n, Broadcast, Reduce and SendRecv 1 (doc/PERFORMANCE.md).
[[nodiscard]] double busbw_factor(Collective c, int nranks);

/// One GPU of the communicator: node index in the Cluster, GPU index in its template.
struct GpuRef {
  int node = 0;
  int gpu = 0;
  friend bool operator==(const GpuRef&, const GpuRef&) = default;
};

/// What the cluster description does not say about a run.
struct CommOptions {
  /// GPUs one process drives (nccl-tests `-g`); 1 = one process per GPU (mpirun/srun).
  int gpus_per_process = 1;
  /// "intel" / "amd"; empty = the tuning's default vendor.
  std::string cpu_vendor;
  /// A net_transports entry of the tuning: "ib" (InfiniBand/RoCE verbs), "socket", "tcpxo".
  std::string net_transport = "ib";
  /// The fabric offers in-network reduction (IB SHARP): enables CollNet and multi-node NVLS.
  bool collnet = false;
  /// NCCL_NVLS_ENABLE (NVLS still needs NVSwitch, SM90+ and enough GPUs per node).
  bool nvls = true;
};

/// The communicator: every GPU once, in rank order.
struct CommSpec {
  const Cluster* cluster = nullptr;
  std::vector<GpuRef> gpus;
  CommOptions options;
};

/// One channel-search result (NCCL's ncclTopoGraph, the parts the cost model reads).
struct NcclGraph {
  int channels = 0;                 // 0 = no graph (the algorithm is unavailable)
  double bw_intra = 0;              // GB/s per channel inside a node
  double bw_inter = 0;              // GB/s per channel on the network (= bw_intra on 1 node)
  NcclPath type_intra = NcclPath::kLoc;
  NcclPath type_inter = NcclPath::kLoc;
  bool same_channels = true;
};

/// The expensive part, built once per GPU set: topology analysis, graphs, cost tables.
class NcclModel {
 public:
  /// Throws std::invalid_argument for an empty or invalid GPU list (bad node or GPU index,
  /// a GPU twice), an unknown net transport or CPU vendor, or a multi-node communicator on
  /// nodes without NICs. `tuning` must outlive the model.
  NcclModel(const NcclTuning& tuning, const CommSpec& spec);

  [[nodiscard]] const NcclTuning& tuning() const { return *tuning_; }
  [[nodiscard]] int ranks() const { return nranks_; }
  [[nodiscard]] int nodes() const { return nnodes_; }
  /// Fewest GPUs the communicator has on one node (NCCL's minLocalRanks).
  [[nodiscard]] int min_local_ranks() const { return min_local_; }
  [[nodiscard]] int max_local_ranks() const { return max_local_; }
  [[nodiscard]] int sm() const { return min_sm_; }
  [[nodiscard]] const NcclGeneration& generation() const { return *gen_; }
  [[nodiscard]] const NcclGraph& ring() const { return ring_; }
  [[nodiscard]] const NcclGraph& tree() const { return tree_; }
  /// The graph Broadcast and Reduce run on (on one node a chain: no wrap-around hop).
  [[nodiscard]] const NcclGraph& chain() const { return chain_; }
  [[nodiscard]] const NcclGraph& nvls() const { return nvls_; }
  [[nodiscard]] const NcclGraph& collnet() const { return collnet_; }
  /// Whether two GPUs of the same node talk through host memory (SHM) rather than P2P
  /// somewhere in the communicator; whether some GPU reaches the network without GDR.
  [[nodiscard]] bool uses_shm() const { return uses_shm_; }
  [[nodiscard]] bool uses_host_bounce() const { return uses_host_bounce_; }
  /// The link class of the ring (the fitted calibration.links terms apply by it): NET on
  /// several nodes, SHM where some pair talks through host memory, NVLink where the ring's
  /// paths are NVLink/NVSwitch/C2C, else PCIe peer-to-peer.
  [[nodiscard]] NcclLinkClass link_class() const {
    if (nnodes_ > 1) return NcclLinkClass::kNet;
    if (uses_shm_) return NcclLinkClass::kShm;
    return ring_.type_intra <= NcclPath::kC2c ? NcclLinkClass::kNvlink : NcclLinkClass::kPcie;
  }
  /// The launch/floor term added to every call (calibration.launch_*).
  [[nodiscard]] double launch_us() const { return launch_us_; }
  /// NCCL's table: algorithm bandwidth (GB/s, 0 = unavailable) and latency (us) of one
  /// collective (not AllToAll/SendRecv), before the per-size corrections.
  [[nodiscard]] double table_bandwidth(Collective c, NcclAlgo a, NcclProto p) const;
  [[nodiscard]] double table_latency(Collective c, NcclAlgo a, NcclProto p) const;
  /// Assumptions made while building (unknown GPU models, ...), one per line.
  [[nodiscard]] const std::vector<std::string>& notes() const { return notes_; }
  /// A few lines: ranks, nodes, graphs, transports.
  [[nodiscard]] std::string describe() const;

  // --- used by nccl_cost ---
  [[nodiscard]] double p2p_seconds_per_byte(Collective c) const;  // AllToAll / SendRecv bottleneck
  [[nodiscard]] bool p2p_inter_node(Collective c) const;
  [[nodiscard]] NcclHw intra_hw() const { return intra_hw_; }
  [[nodiscard]] double net_latency_us() const { return net_latency_us_; }
  [[nodiscard]] double net_flush_us() const { return net_flush_us_; }
  [[nodiscard]] int p2p_channels() const { return p2p_channels_; }
  [[nodiscard]] double cpu_net_overhead_us() const { return cpu_->net_overhead_us; }

 private:
  static constexpr int kFuncs = 5;  // Broadcast, Reduce, AllGather, ReduceScatter, AllReduce
  void build_tables();

  const NcclTuning* tuning_ = nullptr;
  const NcclGeneration* gen_ = nullptr;
  const NcclCpuVendor* cpu_ = nullptr;
  int nranks_ = 0, nnodes_ = 0, min_local_ = 0, max_local_ = 0;
  int min_sm_ = 0, max_sm_ = 0;
  NcclGraph ring_, tree_, chain_, nvls_, collnet_;
  bool nvls_ok_ = false, collnet_ok_ = false, collnet_direct_ok_ = false;
  bool uses_shm_ = false, uses_host_bounce_ = false;
  NcclHw intra_hw_ = NcclHw::kNvlink;
  double net_latency_us_ = 0, net_flush_us_ = 0;
  bool net_ll128_ = true;
  double launch_us_ = 0;
  double a2a_spb_ = 0, sendrecv_spb_ = 0;   // seconds per byte of the nccl-tests size
  bool a2a_inter_ = false, sendrecv_inter_ = false;
  int p2p_channels_ = 1;
  std::array<std::array<std::array<double, kNcclProtos>, kNcclAlgos>, kFuncs> bw_{};
  std::array<std::array<std::array<double, kNcclProtos>, kNcclAlgos>, kFuncs> lat_{};
  std::vector<std::string> notes_;
  std::string description_;
};

/// The cost of one call.
struct CollectiveCost {
  double time_us = 0;       // what nccl-tests' out-of-place `time` would print
  double algbw_GBps = 0;    // bytes / time
  double busbw_GBps = 0;    // algbw x busbw_factor
  std::string algo;         // NCCL's name: "Ring", "Tree", "NVLS", ...
  std::string proto;        // "LL", "LL128", "Simple"
  int channels = 0;         // channels the call runs on (after NCCL's reduction for small sizes)
  double latency_us = 0;    // the latency part of time_us (launch and calibration.links latency included)
  bool forced_ignored = false;  // the forced algorithm/protocol was unavailable; NCCL's choice used
};

/// Cost of one collective of `bytes` (the nccl-tests `size`: per-rank buffer for AllReduce,
/// Broadcast, Reduce and SendRecv, the total for AllGather/ReduceScatter, the total per rank
/// for AllToAll). `algo`/`proto` force a choice as NCCL_ALGO/NCCL_PROTO do; a forced choice
/// that is unavailable for this communicator is ignored (forced_ignored = true).
[[nodiscard]] CollectiveCost nccl_cost(const NcclModel& model, Collective c, int64_t bytes,
                                       std::optional<NcclAlgo> algo = std::nullopt,
                                       std::optional<NcclProto> proto = std::nullopt);

/// Options of the nccl-tests style table.
struct NcclTestsTableOptions {
  std::string dtype = "float";      // "float" (4 B), "half"/"bfloat16" (2 B), "double" (8 B), "int8"...
  std::optional<NcclAlgo> algo;
  std::optional<NcclProto> proto;
  int warmup_iters = 5;
  int iters = 20;
};

/// The table nccl-tests prints (`# nThread ...` header, `#  Rank ...` device lines, the
/// size/count/type/redop/root/time/algbw/busbw/#wrong columns out-of-place and in-place,
/// `# Avg bus bandwidth` footer), plus an `algo/proto` column with the model's choice.
/// The in-place columns repeat the out-of-place ones; #wrong is N/A (nothing is checked).
[[nodiscard]] std::string format_nccl_tests_table(const NcclModel& model, const CommSpec& spec, Collective c,
                                                  const std::vector<int64_t>& sizes,
                                                  const NcclTestsTableOptions& opt = {});

}  // namespace gcsim
