// NcclModel: NCCL's communicator-init analysis on gcsim's topology graph, and nccl_cost.
//
// What follows NCCL (shared/research/nccl_model.md, "the digest"):
// - link bandwidths in NCCL's units (§1.1): NVLink = links x per-link figure of the GPU's SM,
//   PCIe = width x rate / 80, SYS by CPU vendor, NIC = line rate / 8;
// - path classes and transports (§1.2): P2P up to PXB (SYS on AMD hosts with <= 2 GPUs),
//   otherwise SHM through the source GPU's CPU memory; GDR up to PXB, otherwise the NIC
//   traffic is staged through the GPU's CPU memory;
// - channel search (§1.3), simplified: a ring order of the node's GPUs that maximises the
//   bottleneck share (exhaustive up to 8 GPUs per node), the highest speed of the
//   generation's list that fits with the most channels (bandwidth subtracted per directed
//   link crossed, Intel root-complex charge), channels leaving and re-entering through the
//   NICs on several nodes, then NCCL's duplication rule; trees share the ring's channels
//   (bwIntra up to 2 x bwInter on 2 nodes), NVLS uses one channel per GPU (head) and
//   charges every GPU's NVSwitch link (nGPUs + 1) x speed;
// - the cost model (§1.4) verbatim: latency and bandwidth tables, per-channel caps, LL/LL128
//   factors, busBw -> algBw conversion, tree size correction, ring plateau, LL128/NVLS/
//   CollNet/PAT eligibility, argmin over (algorithm, protocol);
// - after the choice, NCCL's channel reduction for small sizes (§1.4 "After selection").
// Deliberate deviations / additions (each a documented constant of the tuning file):
// - Broadcast and Reduce on one node run on a chain (the ring without its wrap-around hop,
//   which carries no data for them), so a one-way PCIe path is not charged twice;
// - launch/floor term by launch mode (§7 L0), SHM duplex efficiency (V-10), TCPXO latencies
//   (V-25) — calibration.* and net_transports.* in configs/nccl/default.yaml;
// - AllToAll and SendRecv: every flow routed over the same directed links, time = latency +
//   bytes x (busiest link's load / capacity) (§7 "per-pair rate = min(path bw, NIC share)");
// - the inter-node fabric is taken as non-blocking for one communicator in isolation
//   (contention between jobs is the sharing layer's business).
#include "models/collective/nccl_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <sstream>
#include <stdexcept>

#include "sim/cluster/topology.hpp"
#include "sim/core/input_file.hpp"

namespace gcsim {

namespace {

constexpr double kEps = 1e-9;
constexpr double kInf = std::numeric_limits<double>::infinity();

constexpr int kAlgoTree = static_cast<int>(NcclAlgo::kTree);
constexpr int kAlgoRing = static_cast<int>(NcclAlgo::kRing);
constexpr int kAlgoCnDirect = static_cast<int>(NcclAlgo::kCollNetDirect);
constexpr int kAlgoCnChain = static_cast<int>(NcclAlgo::kCollNetChain);
constexpr int kAlgoNvls = static_cast<int>(NcclAlgo::kNvls);
constexpr int kAlgoNvlsTree = static_cast<int>(NcclAlgo::kNvlsTree);
constexpr int kAlgoPat = static_cast<int>(NcclAlgo::kPat);
constexpr int kLL = static_cast<int>(NcclProto::kLL);
constexpr int kLL128 = static_cast<int>(NcclProto::kLL128);
constexpr int kSimple = static_cast<int>(NcclProto::kSimple);

// NCCL's function order: Broadcast, Reduce, AllGather, ReduceScatter, AllReduce.
int func_index(Collective c) {
  switch (c) {
    case Collective::kBroadcast: return 0;
    case Collective::kReduce: return 1;
    case Collective::kAllGather: return 2;
    case Collective::kReduceScatter: return 3;
    case Collective::kAllReduce: return 4;
    default: return -1;
  }
}
constexpr int kFuncBroadcast = 0, kFuncReduce = 1, kFuncAllGather = 2, kFuncReduceScatter = 3, kFuncAllReduce = 4;

/// floor(log2(v)), -1 for v <= 0.
int log2i(int64_t v) {
  int r = -1;
  while (v > 0) {
    v >>= 1;
    ++r;
  }
  return r;
}

NcclPath ncclpath_of(PathClass c) {
  switch (c) {
    case PathClass::kSelf: return NcclPath::kLoc;
    case PathClass::kNvlink: return NcclPath::kNvl;
    case PathClass::kPix: return NcclPath::kPix;
    case PathClass::kPxb: return NcclPath::kPxb;
    case PathClass::kPhb:
    case PathClass::kNode: return NcclPath::kPhb;  // NCCL has no NODE: a path through the CPU
    case PathClass::kSys: return NcclPath::kSys;
  }
  return NcclPath::kSys;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// Directed edges of a path, as keys edge*2 + (0: from the lower-numbered end's side ... as
/// stored, 1: against), walking from `from`.
std::vector<int> directed(const NodeTopology& t, DeviceRef from, const PathInfo& p) {
  std::vector<int> keys;
  int cur = t.vertex_of(from);
  for (int e : p.edges) {
    auto [u, v] = t.edge_ends(e);
    if (cur == u) {
      keys.push_back(e * 2);
      cur = v;
    } else {
      keys.push_back(e * 2 + 1);
      cur = u;
    }
  }
  return keys;
}

std::vector<int> reversed(const std::vector<int>& keys) {
  std::vector<int> out(keys.rbegin(), keys.rend());
  for (int& k : out) k ^= 1;
  return out;
}

/// One use of a directed link, in units of the channel speed (or of the bytes moved).
struct Use {
  int key = 0;
  double w = 1;
};

/// A GPU-to-GPU hop inside one node.
struct Hop {
  std::vector<int> keys;
  double bw = 0;
  NcclPath type = NcclPath::kLoc;
  bool shm = false;       // through host memory
  bool phb_p2p = false;   // P2P through the root complex (Intel charge)
};

/// A GPU-to-NIC route inside one node.
struct NicRoute {
  std::vector<int> to_nic, from_nic;
  int port_out = -1, port_in = -1;
  double bw = 0;
  NcclPath type = NcclPath::kSys;
  bool gdr = true;
};

/// The analysis of one node of the communicator (shared by nodes with the same template
/// and the same local GPUs).
struct NodeAnalysis {
  int tmpl = 0;
  const NodeTopology* topo = nullptr;
  std::vector<int> gpus;                      // local GPUs (template indexes), sorted
  std::vector<const NcclGpuModel*> model;     // per local position
  std::vector<double> cap;                    // per directed key, GB/s
  std::vector<bool> pcie;                     // per directed key: a PCIe link
  std::vector<std::vector<Hop>> hop;          // [i][j]
  std::vector<std::vector<NicRoute>> nic;     // [i][k]
  std::vector<int> order;                     // best ring order (local positions)
  double max_pair_bw = 0;                     // best GPU-GPU path
  double min_pair_bw = kInf;
  double max_nic_bw = 0;                      // best GPU-NET path
  bool all_nvswitch = false;                  // every pair through the NVSwitch fabric
  bool any_shm = false, any_bounce = false;
  NcclPath worst_intra = NcclPath::kLoc;      // worst hop type along `order`
  std::vector<int> nic_of;                    // per local position: the NIC its p2p traffic uses
};

class Builder {
 public:
  Builder(const NcclTuning& t, const NcclCpuVendor& cpu, double shm_eff) : t_(t), cpu_(cpu), shm_eff_(shm_eff) {}

  double edge_cap(const NodeTopology& topo, const NodeTemplate& tm, int e) const {
    const TopoEdge& ed = topo.edge(e);
    auto [u, v] = topo.edge_ends(e);
    const TopoVertex* ends[2] = {&topo.vertex(u), &topo.vertex(v)};
    switch (ed.kind) {
      case TopoEdgeKind::kNvlink: {
        double per = kInf;
        for (const TopoVertex* x : ends)
          if (x->kind == TopoVertexKind::kGpu) per = std::min(per, model_of(tm, x->index).nvlink_link_bw);
        if (per == kInf) per = t_.default_gpu.nvlink_link_bw;
        return ed.nvlinks * per;
      }
      case TopoEdgeKind::kPcie: {
        int gen = ed.pcie_gen;
        for (const TopoVertex* x : ends)
          if (x->kind == TopoVertexKind::kGpu) gen = std::min(gen, model_of(tm, x->index).pcie_gen);
        return t_.pcie_bw(gen, ed.pcie_width);
      }
      case TopoEdgeKind::kHostBridge: return t_.local_bw;
      case TopoEdgeKind::kNumaLocal:
      case TopoEdgeKind::kSmp: return cpu_.sys_bw;
      case TopoEdgeKind::kNicPort: return ed.bandwidth_Bps / 1e9;
    }
    return t_.local_bw;
  }

  const NcclGpuModel& model_of(const NodeTemplate& tm, int gpu) const {
    const GpuSpec& g = tm.gpus.at(static_cast<size_t>(gpu));
    return t_.gpu_model(g.model.empty() ? g.gres_type : g.model);
  }

  double min_cap(const NodeAnalysis& na, const std::vector<int>& keys) const {
    double bw = kInf;
    for (int k : keys) bw = std::min(bw, na.cap[static_cast<size_t>(k)]);
    return bw;
  }

  void analyse(NodeAnalysis& na, const NodeTemplate& tm, bool need_nics) const {
    const NodeTopology& topo = *na.topo;
    const int ne = topo.edge_count();
    na.cap.assign(static_cast<size_t>(2 * ne), 0);
    na.pcie.assign(static_cast<size_t>(2 * ne), false);
    for (int e = 0; e < ne; ++e) {
      const double c = edge_cap(topo, tm, e);
      na.cap[static_cast<size_t>(2 * e)] = na.cap[static_cast<size_t>(2 * e + 1)] = c;
      const bool p = topo.edge(e).kind == TopoEdgeKind::kPcie;
      na.pcie[static_cast<size_t>(2 * e)] = na.pcie[static_cast<size_t>(2 * e + 1)] = p;
    }
    const int L = static_cast<int>(na.gpus.size());
    for (int g : na.gpus) na.model.push_back(&model_of(tm, g));

    // GPU-GPU hops.
    na.hop.assign(static_cast<size_t>(L), std::vector<Hop>(static_cast<size_t>(L)));
    na.all_nvswitch = topo.has_nvswitch() && L > 1;
    for (int i = 0; i < L; ++i)
      for (int j = 0; j < L; ++j) {
        if (i == j) continue;
        Hop& h = na.hop[static_cast<size_t>(i)][static_cast<size_t>(j)];
        const int gi = na.gpus[static_cast<size_t>(i)], gj = na.gpus[static_cast<size_t>(j)];
        const PathInfo p = topo.path(DeviceRef::gpu(gi), DeviceRef::gpu(gj));
        h.type = ncclpath_of(p.cls);
        bool p2p = false;
        if (p.cls == PathClass::kNvlink) {
          p2p = true;
          if (p.edges.size() != 2) na.all_nvswitch = false;
        } else {
          na.all_nvswitch = false;
          const bool offered = na.model[static_cast<size_t>(i)]->pcie_p2p && na.model[static_cast<size_t>(j)]->pcie_p2p;
          const bool by_level = h.type <= t_.p2p_max_path;
          const bool amd_sys = h.type <= NcclPath::kSys && static_cast<int>(tm.gpus.size()) <= cpu_.p2p_sys_max_gpus;
          p2p = offered && (by_level || amd_sys);
        }
        if (p2p) {
          h.keys = directed(topo, DeviceRef::gpu(gi), p);
          h.phb_p2p = h.type == NcclPath::kPhb;
        } else {
          const int m = topo.gpu_numa(gi);
          const PathInfo up = topo.path(DeviceRef::gpu(gi), DeviceRef::numa(m));
          const PathInfo down = topo.path(DeviceRef::numa(m), DeviceRef::gpu(gj));
          h.keys = directed(topo, DeviceRef::gpu(gi), up);
          auto d = directed(topo, DeviceRef::numa(m), down);
          h.keys.insert(h.keys.end(), d.begin(), d.end());
          h.type = topo.gpu_numa(gj) == m ? NcclPath::kPhb : NcclPath::kSys;
          h.shm = true;
          na.any_shm = true;
        }
        h.bw = min_cap(na, h.keys);
        na.max_pair_bw = std::max(na.max_pair_bw, h.bw);
        na.min_pair_bw = std::min(na.min_pair_bw, h.bw);
      }

    // GPU-NIC routes.
    if (need_nics) {
      const int K = topo.nic_count();
      na.nic.assign(static_cast<size_t>(L), std::vector<NicRoute>(static_cast<size_t>(K)));
      for (int i = 0; i < L; ++i)
        for (int k = 0; k < K; ++k) {
          NicRoute& r = na.nic[static_cast<size_t>(i)][static_cast<size_t>(k)];
          const int g = na.gpus[static_cast<size_t>(i)];
          const PathInfo p = topo.path(DeviceRef::gpu(g), DeviceRef::nic(k));
          r.type = ncclpath_of(p.cls);
          r.gdr = r.type <= t_.gdr_max_path;
          if (r.gdr) {
            r.to_nic = directed(topo, DeviceRef::gpu(g), p);
          } else {
            const int m = topo.gpu_numa(g);
            r.to_nic = directed(topo, DeviceRef::gpu(g), topo.path(DeviceRef::gpu(g), DeviceRef::numa(m)));
            auto d = directed(topo, DeviceRef::numa(m), topo.path(DeviceRef::numa(m), DeviceRef::nic(k)));
            r.to_nic.insert(r.to_nic.end(), d.begin(), d.end());
          }
          r.from_nic = reversed(r.to_nic);
          const int pe = topo.nic_port_edge(k);
          auto [u, v] = topo.edge_ends(pe);
          (void)v;
          r.port_out = pe * 2 + (u == topo.vertex_of(DeviceRef::nic(k)) ? 0 : 1);
          r.port_in = r.port_out ^ 1;
          r.bw = std::min(min_cap(na, r.to_nic), na.cap[static_cast<size_t>(r.port_out)]);
          na.max_nic_bw = std::max(na.max_nic_bw, r.bw);
        }
      // The NIC each GPU's point-to-point traffic leaves by: the best route, spread over
      // equally good NICs in GPU order.
      std::vector<int> used(static_cast<size_t>(K), 0);
      na.nic_of.assign(static_cast<size_t>(L), -1);
      for (int i = 0; i < L; ++i) {
        int best = -1;
        for (int k = 0; k < K; ++k) {
          if (best < 0) {
            best = k;
            continue;
          }
          const NicRoute& a = na.nic[static_cast<size_t>(i)][static_cast<size_t>(k)];
          const NicRoute& b = na.nic[static_cast<size_t>(i)][static_cast<size_t>(best)];
          if (a.type != b.type ? a.type < b.type
                               : a.bw != b.bw ? a.bw > b.bw : used[static_cast<size_t>(k)] < used[static_cast<size_t>(best)])
            best = k;
        }
        na.nic_of[static_cast<size_t>(i)] = best;
        if (best >= 0) {
          ++used[static_cast<size_t>(best)];
          if (!na.nic[static_cast<size_t>(i)][static_cast<size_t>(best)].gdr) na.any_bounce = true;
        }
      }
    }

    choose_order(na);
  }

  /// Weight of one directed key used by a hop: SHM traffic on a duplex pattern costs
  /// 1/shm_eff, P2P through an Intel root complex costs p2p_phb_overhead on PCIe links.
  double hop_weight(const NodeAnalysis& na, const Hop& h, int key, bool duplex) const {
    double w = 1;
    if (h.shm && duplex) w /= shm_eff_;
    if (h.phb_p2p && na.pcie[static_cast<size_t>(key)]) w *= cpu_.p2p_phb_overhead;
    return w;
  }

  void add_hop(const NodeAnalysis& na, int i, int j, bool duplex, std::vector<Use>& uses) const {
    const Hop& h = na.hop[static_cast<size_t>(i)][static_cast<size_t>(j)];
    for (int k : h.keys) uses.push_back({k, hop_weight(na, h, k, duplex)});
  }

  /// Uses of one channel of a pattern over `order`: ring (wrap) or chain.
  std::vector<Use> pattern_uses(const NodeAnalysis& na, const std::vector<int>& order, bool wrap, bool duplex) const {
    std::vector<Use> uses;
    const int L = static_cast<int>(order.size());
    const int hops = wrap ? L : L - 1;
    for (int s = 0; s < hops && L > 1; ++s)
      add_hop(na, order[static_cast<size_t>(s)], order[static_cast<size_t>((s + 1) % L)], duplex, uses);
    return uses;
  }

  /// Largest per-channel total a set of uses admits: min over keys of cap / summed weight.
  double bottleneck(const NodeAnalysis& na, const std::vector<Use>& uses, std::vector<double>& acc) const {
    for (const Use& u : uses) acc[static_cast<size_t>(u.key)] += u.w;
    double b = kInf;
    for (const Use& u : uses) {
      const double w = acc[static_cast<size_t>(u.key)];
      if (w > 0) b = std::min(b, na.cap[static_cast<size_t>(u.key)] / w);
    }
    for (const Use& u : uses) acc[static_cast<size_t>(u.key)] = 0;
    return b;
  }

  void choose_order(NodeAnalysis& na) const {
    const int L = static_cast<int>(na.gpus.size());
    na.order.resize(static_cast<size_t>(L));
    std::iota(na.order.begin(), na.order.end(), 0);
    if (L > 2 && L <= 8 && !na.all_nvswitch) {
      // Every ring order with GPU 0 first (up to 7! = 5040): the hops' weighted link uses are
      // precomputed once, each order only adds them up.
      std::vector<std::vector<Use>> hop_uses(static_cast<size_t>(L * L));
      for (int i = 0; i < L; ++i)
        for (int j = 0; j < L; ++j)
          if (i != j) add_hop(na, i, j, true, hop_uses[static_cast<size_t>(i * L + j)]);
      std::vector<double> acc(na.cap.size(), 0);
      std::vector<int> touched;
      std::vector<int> perm = na.order;
      double best = -1;
      size_t best_uses = 0;
      do {
        size_t n_uses = 0;
        touched.clear();
        for (int h = 0; h < L; ++h) {
          for (const Use& u : hop_uses[static_cast<size_t>(perm[static_cast<size_t>(h)] * L + perm[static_cast<size_t>((h + 1) % L)])]) {
            if (acc[static_cast<size_t>(u.key)] == 0) touched.push_back(u.key);
            acc[static_cast<size_t>(u.key)] += u.w;
            ++n_uses;
          }
        }
        double b = kInf;
        for (int k : touched) {
          b = std::min(b, na.cap[static_cast<size_t>(k)] / acc[static_cast<size_t>(k)]);
          acc[static_cast<size_t>(k)] = 0;
        }
        if (b > best * (1 + 1e-12) || (std::abs(b - best) <= best * 1e-12 && n_uses < best_uses)) {
          best = b;
          best_uses = n_uses;
          na.order = perm;
        }
      } while (std::next_permutation(perm.begin() + 1, perm.end()));
    }
    na.worst_intra = NcclPath::kLoc;
    for (int s = 0; s < L && L > 1; ++s) {
      const Hop& h = na.hop[static_cast<size_t>(na.order[static_cast<size_t>(s)])]
                           [static_cast<size_t>(na.order[static_cast<size_t>((s + 1) % L)])];
      na.worst_intra = std::max(na.worst_intra, h.type);
    }
  }

  /// (channels, speed) of the best fit of a per-channel bottleneck into a speed list.
  std::pair<int, double> fit_speeds(const std::vector<double>& speeds, double max_bw, double bneck) const {
    int best_c = 0;
    double best_s = 0;
    for (double s : speeds) {
      if (s > max_bw + kEps) continue;
      if (best_c > 0 && s / best_s <= t_.speed_drop_ratio) break;
      const int c = std::min(t_.max_search_channels, static_cast<int>(std::floor(bneck / s + kEps)));
      if (c < 1) continue;
      if (c * s > best_c * best_s + kEps) {
        best_c = c;
        best_s = s;
      }
    }
    return {best_c, best_s};
  }

  /// NCCL's channel duplication (search.cc): double the channels, halve their speed.
  void duplicate(NcclGraph& g, int sm, double speed_for_rule) const {
    if (g.channels == 0 || speed_for_rule < t_.dup_min_speed) return;
    if (sm > t_.dup_sm_above && speed_for_rule < t_.dup_newer_min_speed && g.channels > t_.dup_newer_max_channels)
      return;
    const int c2 = std::min(t_.max_channels, g.channels * 2);
    const double f = static_cast<double>(g.channels) / c2;
    g.bw_intra *= f;
    g.bw_inter *= f;
    g.channels = c2;
  }

  /// Channels one node admits at inter speed `s` through NICs of type <= `tmax`: each
  /// channel enters from a NIC to a GPU, visits the node's GPUs, leaves to the same NIC.
  int place_channels(const NodeAnalysis& na, double s, NcclPath tmax, int max_ch, bool duplex) const {
    const int L = static_cast<int>(na.gpus.size());
    const int K = na.nic.empty() ? 0 : static_cast<int>(na.nic[0].size());
    if (K == 0 || L == 0) return 0;
    std::vector<double> acc(na.cap.size(), 0);
    // NIC order: best route type, then bandwidth, then index.
    std::vector<int> nics(static_cast<size_t>(K));
    std::iota(nics.begin(), nics.end(), 0);
    auto best_type = [&](int k) {
      NcclPath b = NcclPath::kDis;
      double bw = 0;
      for (int i = 0; i < L; ++i) {
        const NicRoute& r = na.nic[static_cast<size_t>(i)][static_cast<size_t>(k)];
        if (r.type < b || (r.type == b && r.bw > bw)) {
          b = r.type;
          bw = r.bw;
        }
      }
      return std::make_pair(b, -bw);
    };
    std::stable_sort(nics.begin(), nics.end(), [&](int a, int b) { return best_type(a) < best_type(b); });
    auto gpus_for = [&](int k) {
      std::vector<int> v;
      for (int i = 0; i < L; ++i)
        if (na.nic[static_cast<size_t>(i)][static_cast<size_t>(k)].type <= tmax) v.push_back(i);
      std::stable_sort(v.begin(), v.end(), [&](int a, int b) {
        const NicRoute& ra = na.nic[static_cast<size_t>(a)][static_cast<size_t>(k)];
        const NicRoute& rb = na.nic[static_cast<size_t>(b)][static_cast<size_t>(k)];
        if (ra.type != rb.type) return ra.type < rb.type;
        return ra.bw > rb.bw;
      });
      return v;
    };
    std::vector<std::vector<int>> cand(static_cast<size_t>(K));
    for (int k = 0; k < K; ++k) cand[static_cast<size_t>(k)] = gpus_for(k);

    auto route_uses = [&](const NicRoute& r, const std::vector<int>& keys, std::vector<Use>& uses) {
      for (int key : keys) uses.push_back({key, (!r.gdr && duplex) ? 1 / shm_eff_ : 1.0});
    };
    int placed = 0;
    size_t next = 0;
    std::vector<Use> uses;
    for (int c = 0; c < max_ch; ++c) {
      bool ok = false;
      // Remaining bandwidth of a route (and its NIC port) under the channels placed so far.
      auto slack = [&](const std::vector<int>& keys, int port) {
        double sl = na.cap[static_cast<size_t>(port)] - acc[static_cast<size_t>(port)];
        for (int key : keys) sl = std::min(sl, na.cap[static_cast<size_t>(key)] - acc[static_cast<size_t>(key)]);
        return sl;
      };
      auto by_out_slack = [&](std::vector<std::pair<int, int>>& v) {
        std::stable_sort(v.begin(), v.end(), [&](const auto& a, const auto& b) {
          const NicRoute& ra = na.nic[static_cast<size_t>(a.first)][static_cast<size_t>(a.second)];
          const NicRoute& rb = na.nic[static_cast<size_t>(b.first)][static_cast<size_t>(b.second)];
          if (ra.type != rb.type) return ra.type < rb.type;
          return slack(ra.to_nic, ra.port_out) > slack(rb.to_nic, rb.port_out) + 1e-9;
        });
      };
      for (size_t tries = 0; tries < nics.size() && !ok; ++tries) {
        const int k = nics[(next + tries) % nics.size()];
        std::vector<int> E = cand[static_cast<size_t>(k)];
        std::stable_sort(E.begin(), E.end(), [&](int a, int b) {
          const NicRoute& ra = na.nic[static_cast<size_t>(a)][static_cast<size_t>(k)];
          const NicRoute& rb = na.nic[static_cast<size_t>(b)][static_cast<size_t>(k)];
          if (ra.type != rb.type) return ra.type < rb.type;
          return slack(ra.from_nic, ra.port_in) > slack(rb.from_nic, rb.port_in) + 1e-9;
        });
        for (size_t ei = 0; ei < std::min<size_t>(2, E.size()) && !ok; ++ei) {
          const int entry = E[ei];
          // Exits: the same NIC first, then (crossNic) another GPU's own NIC.
          std::vector<std::pair<int, int>> exits;
          if (L == 1) {
            exits.push_back({entry, k});
          } else {
            std::vector<std::pair<int, int>> same;
            for (int x : E)
              if (x != entry) same.push_back({x, k});
            by_out_slack(same);
            for (size_t i = 0; i < same.size() && i < 2; ++i) exits.push_back(same[i]);
            std::vector<std::pair<int, int>> cross;
            for (int x = 0; x < L; ++x) {
              if (x == entry) continue;
              for (int k2 = 0; k2 < K; ++k2)
                if (k2 != k && na.nic[static_cast<size_t>(x)][static_cast<size_t>(k2)].type <= tmax) cross.push_back({x, k2});
            }
            by_out_slack(cross);
            for (size_t i = 0; i < cross.size() && i < 4; ++i) exits.push_back(cross[i]);
          }
          for (const auto& [x, kout] : exits) {
            uses.clear();
            const NicRoute& rin = na.nic[static_cast<size_t>(entry)][static_cast<size_t>(k)];
            const NicRoute& rout = na.nic[static_cast<size_t>(x)][static_cast<size_t>(kout)];
            uses.push_back({rin.port_in, 1});
            route_uses(rin, rin.from_nic, uses);
            // entry, the others in ring order after entry, exit.
            std::vector<int> seq{entry};
            const auto it = std::find(na.order.begin(), na.order.end(), entry);
            const size_t start = static_cast<size_t>(it - na.order.begin());
            for (size_t d = 1; d < na.order.size(); ++d) {
              const int g = na.order[(start + d) % na.order.size()];
              if (g != x) seq.push_back(g);
            }
            if (x != entry) seq.push_back(x);
            for (size_t h = 0; h + 1 < seq.size(); ++h) add_hop(na, seq[h], seq[h + 1], duplex, uses);
            route_uses(rout, rout.to_nic, uses);
            uses.push_back({rout.port_out, 1});
            bool fits = true;
            for (const Use& u : uses) acc[static_cast<size_t>(u.key)] += s * u.w;
            for (const Use& u : uses)
              if (acc[static_cast<size_t>(u.key)] > na.cap[static_cast<size_t>(u.key)] + 1e-6) fits = false;
            if (!fits) {
              for (const Use& u : uses) acc[static_cast<size_t>(u.key)] -= s * u.w;
              continue;
            }
            ok = true;
            next = (static_cast<size_t>(std::find(nics.begin(), nics.end(), k) - nics.begin()) + 1) % nics.size();
            break;
          }
        }
      }
      if (!ok) break;
      ++placed;
    }
    return placed;
  }

 private:
  const NcclTuning& t_;
  const NcclCpuVendor& cpu_;
  double shm_eff_;
};

}  // namespace

// ---------------------------------------------------------------------------------------

std::optional<Collective> parse_collective(std::string_view s) {
  std::string k = to_lower(s);
  if (k.size() > 5 && k.compare(k.size() - 5, 5, "_perf") == 0) k.resize(k.size() - 5);
  std::string flat;
  for (char c : k)
    if (c != '_' && c != '-' && c != ' ') flat += c;
  if (flat == "allreduce") return Collective::kAllReduce;
  if (flat == "allgather") return Collective::kAllGather;
  if (flat == "reducescatter") return Collective::kReduceScatter;
  if (flat == "broadcast" || flat == "bcast") return Collective::kBroadcast;
  if (flat == "reduce") return Collective::kReduce;
  if (flat == "alltoall") return Collective::kAllToAll;
  if (flat == "sendrecv") return Collective::kSendRecv;
  return std::nullopt;
}

std::string_view collective_name(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "AllReduce";
    case Collective::kAllGather: return "AllGather";
    case Collective::kReduceScatter: return "ReduceScatter";
    case Collective::kBroadcast: return "Broadcast";
    case Collective::kReduce: return "Reduce";
    case Collective::kAllToAll: return "AllToAll";
    case Collective::kSendRecv: return "SendRecv";
  }
  return "?";
}

std::string_view nccl_tests_name(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "all_reduce";
    case Collective::kAllGather: return "all_gather";
    case Collective::kReduceScatter: return "reduce_scatter";
    case Collective::kBroadcast: return "broadcast";
    case Collective::kReduce: return "reduce";
    case Collective::kAllToAll: return "alltoall";
    case Collective::kSendRecv: return "sendrecv";
  }
  return "?";
}

double busbw_factor(Collective c, int n) {
  if (n <= 0) return 0;
  switch (c) {
    case Collective::kAllReduce: return 2.0 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll: return static_cast<double>(n - 1) / n;
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSendRecv: return 1.0;
  }
  return 1.0;
}

// ---------------------------------------------------------------------------------------

NcclModel::NcclModel(const NcclTuning& tuning, const CommSpec& spec) : tuning_(&tuning) {
  const NcclTuning& t = tuning;
  if (!spec.cluster) throw std::invalid_argument("nccl model: no cluster");
  const Cluster& cl = *spec.cluster;
  if (spec.gpus.empty()) throw std::invalid_argument("nccl model: no GPUs");
  nranks_ = static_cast<int>(spec.gpus.size());

  const std::string vendor = spec.options.cpu_vendor.empty() ? t.default_cpu_vendor : spec.options.cpu_vendor;
  cpu_ = t.cpu(vendor);
  if (!cpu_) throw std::invalid_argument("nccl model: unknown CPU vendor '" + vendor + "'");
  const NcclNetTransport* net = t.net_transport(spec.options.net_transport);
  if (!net) throw std::invalid_argument("nccl model: unknown net transport '" + spec.options.net_transport + "'");
  net_latency_us_ = net->latency_us;
  net_flush_us_ = net->flush_us;
  net_ll128_ = net->ll128;

  // Ranks grouped by node, nodes in index order.
  std::map<int, std::vector<int>> local;  // node -> local GPUs
  {
    std::set<std::pair<int, int>> seen;
    for (const GpuRef& g : spec.gpus) {
      if (g.node < 0 || g.node >= static_cast<int>(cl.nodes.size()))
        throw std::invalid_argument("nccl model: node index " + std::to_string(g.node) + " out of range");
      const NodeTemplate& tm = cl.tmpl(g.node);
      if (g.gpu < 0 || g.gpu >= static_cast<int>(tm.gpus.size()))
        throw std::invalid_argument("nccl model: node " + cl.nodes[static_cast<size_t>(g.node)].name + " has no GPU " +
                                    std::to_string(g.gpu));
      if (!seen.insert({g.node, g.gpu}).second)
        throw std::invalid_argument("nccl model: GPU " + std::to_string(g.gpu) + " of node " +
                                    cl.nodes[static_cast<size_t>(g.node)].name + " given twice");
      local[g.node].push_back(g.gpu);
    }
  }
  nnodes_ = static_cast<int>(local.size());
  min_local_ = nranks_;
  max_local_ = 0;
  for (auto& [node, v] : local) {
    std::sort(v.begin(), v.end());
    min_local_ = std::min(min_local_, static_cast<int>(v.size()));
    max_local_ = std::max(max_local_, static_cast<int>(v.size()));
  }

  // GPU generations.
  min_sm_ = 1 << 30;
  max_sm_ = 0;
  for (const GpuRef& g : spec.gpus) {
    const GpuSpec& gs = cl.tmpl(g.node).gpus[static_cast<size_t>(g.gpu)];
    const std::string name = gs.model.empty() ? gs.gres_type : gs.model;
    bool matched = false;
    const NcclGpuModel& gm = t.gpu_model(name, &matched);
    if (!matched) {
      const std::string note = "GPU model '" + name + "' is not in the tuning's gpu_models; using the default (SM" +
                               std::to_string(gm.sm) + ")";
      if (std::find(notes_.begin(), notes_.end(), note) == notes_.end()) notes_.push_back(note);
    }
    min_sm_ = std::min(min_sm_, gm.sm);
    max_sm_ = std::max(max_sm_, gm.sm);
  }
  gen_ = &t.generation(min_sm_);

  // Launch/floor term.
  {
    const int g = std::clamp(spec.options.gpus_per_process, 1, nranks_);
    const int processes = (nranks_ + g - 1) / g;
    launch_us_ = (g - 1) * t.launch_per_extra_gpu_us + (processes > 1 ? t.launch_process_per_gpu_us : 0.0);
  }
  if (nranks_ == 1) {
    description_ = "1 rank: no communication";
    return;
  }

  // Node analyses, shared between nodes of the same template and local GPUs.
  Builder b(t, *cpu_, t.shm_duplex_efficiency);
  // NodeTopology keeps edge descriptors into its own graph, so it must not be copied or
  // moved: each one is built in place (guaranteed elision into the holder's member).
  struct TopoHolder {
    NodeTopology topo;
    explicit TopoHolder(const NodeTemplate& tm) : topo(build_node_topology(tm)) {}
  };
  std::vector<std::unique_ptr<TopoHolder>> topos(cl.templates.size());
  std::vector<NodeAnalysis> an;
  std::map<std::pair<int, std::vector<int>>, int> an_index;
  std::vector<int> slot_an;  // per node slot (node order) -> analysis
  std::vector<int> slot_node;
  for (auto& [node, v] : local) {
    const int ti = cl.nodes[static_cast<size_t>(node)].template_index;
    auto key = std::make_pair(ti, v);
    auto it = an_index.find(key);
    if (it == an_index.end()) {
      if (!topos[static_cast<size_t>(ti)])
        topos[static_cast<size_t>(ti)] = std::make_unique<TopoHolder>(cl.templates[static_cast<size_t>(ti)]);
      NodeAnalysis na;
      na.tmpl = ti;
      na.topo = &topos[static_cast<size_t>(ti)]->topo;
      na.gpus = v;
      if (nnodes_ > 1 && na.topo->nic_count() == 0)
        throw std::invalid_argument("nccl model: node " + cl.nodes[static_cast<size_t>(node)].name +
                                    " has no NIC for a multi-node communicator");
      b.analyse(na, cl.templates[static_cast<size_t>(ti)], nnodes_ > 1);
      an.push_back(std::move(na));
      it = an_index.emplace(key, static_cast<int>(an.size()) - 1).first;
    }
    slot_an.push_back(it->second);
    slot_node.push_back(node);
  }
  for (const auto& a : an) {
    uses_shm_ = uses_shm_ || a.any_shm;
    uses_host_bounce_ = uses_host_bounce_ || a.any_bounce;
  }
  NcclPath worst_intra = NcclPath::kLoc;
  for (const auto& a : an) worst_intra = std::max(worst_intra, a.worst_intra);
  if (max_local_ <= 1) worst_intra = NcclPath::kLoc;
  std::vector<double> acc;
  double net_speed = 0;  // the inter-node channel speed before duplication

  // ---- Graphs.
  if (nnodes_ == 1) {
    const NodeAnalysis& na = an[0];
    acc.assign(na.cap.size(), 0);
    auto search = [&](bool wrap, bool duplex) {
      NcclGraph g;
      const double bn = b.bottleneck(na, b.pattern_uses(na, na.order, wrap, duplex), acc);
      auto [c, s] = b.fit_speeds(gen_->intra_speeds, na.max_pair_bw, bn);
      g.channels = c;
      g.bw_intra = g.bw_inter = s;
      g.type_intra = worst_intra;
      g.type_inter = NcclPath::kLoc;
      b.duplicate(g, min_sm_, s);
      return g;
    };
    ring_ = search(true, true);
    tree_ = search(false, true);
    chain_ = search(false, false);
  } else {
    // Inter-node ring: the best (speed, type) every node admits.
    double max_nic = kInf;
    for (const auto& a : an) max_nic = std::min(max_nic, a.max_nic_bw);
    int best_c = 0;
    double best_s = 0;
    NcclPath best_t = NcclPath::kSys;
    const NcclPath types[] = {NcclPath::kPix, NcclPath::kPxb, NcclPath::kPhb, NcclPath::kSys};
    for (double s : gen_->inter_speeds) {
      if (s > max_nic + kEps) continue;
      if (best_c > 0 && s / best_s <= t.speed_drop_ratio) break;
      for (NcclPath ty : types) {
        int c = t.max_search_channels;
        for (const auto& a : an) c = std::min(c, b.place_channels(a, s, ty, t.max_search_channels, true));
        if (c > 0) {
          if (c * s > best_c * best_s + kEps) {
            best_c = c;
            best_s = s;
            best_t = ty;
          }
          break;
        }
      }
    }
    if (best_c == 0) throw std::invalid_argument("nccl model: no channel fits through the nodes' NICs");
    ring_.channels = best_c;
    ring_.bw_intra = ring_.bw_inter = best_s;
    net_speed = best_s;
    ring_.type_intra = worst_intra;
    // The worst GPU-NIC route the channels may use.
    NcclPath used = NcclPath::kLoc;
    for (const auto& a : an)
      for (const auto& row : a.nic)
        for (const auto& r : row)
          if (r.type <= best_t) used = std::max(used, r.type);
    ring_.type_inter = used;

    // Tree: the ring's channels; inside the node up to tree_intra_max_ratio x the network
    // speed on 2 nodes, as far as a chain through the node's GPUs admits.
    tree_ = ring_;
    // The fastest intra-node table speed a chain through each node's GPUs admits, up to
    // tree_intra_max_ratio x the network speed (Tree on 2 nodes, CollNet beyond).
    auto fastest_intra = [&]() -> std::optional<double> {
      double limit = t.tree_intra_max_ratio * best_s;
      for (const auto& a : an) {
        if (a.gpus.size() < 2) continue;
        acc.assign(a.cap.size(), 0);
        limit = std::min(limit, b.bottleneck(a, b.pattern_uses(a, a.order, false, true), acc) / best_c);
      }
      for (double s : gen_->intra_speeds)
        if (s <= limit + kEps) return s;
      return std::nullopt;
    };
    double intra = best_s;
    if (nnodes_ <= 2 && max_local_ > 1)
      if (const auto s = fastest_intra()) intra = std::max(intra, *s);
    tree_.bw_intra = intra;
    collnet_ = tree_;
    if (nnodes_ > 2 && max_local_ > 1 && spec.options.collnet)
      if (const auto s = fastest_intra()) collnet_.bw_intra = std::max(best_s, *s);
    b.duplicate(ring_, min_sm_, best_s);
    b.duplicate(tree_, min_sm_, best_s);
    chain_ = ring_;
  }
  intra_hw_ = ring_.type_intra == NcclPath::kNvl ? NcclHw::kNvlink : NcclHw::kPci;

  // NVLS: NVSwitch nodes, SM90+, enough GPUs per node; one channel per local GPU, each
  // charging every GPU's NVSwitch link once and its head's twice.
  {
    bool ok = spec.options.nvls && gen_->nvls_efficiency > 0 && min_local_ >= t.nvls_min_local_gpus &&
              min_local_ >= 2;
    double link = kInf;
    for (const auto& a : an) {
      ok = ok && a.all_nvswitch;
      link = std::min(link, a.min_pair_bw);
    }
    if (ok) {
      double s = 0;
      for (double sp : gen_->intra_speeds)
        if ((min_local_ + 1) * sp <= link + kEps) {
          s = sp;
          break;
        }
      if (s > 0) {
        nvls_.channels = min_local_;
        nvls_.bw_intra = s;
        nvls_.bw_inter = net_speed;  // one head per NIC channel, at the ring's network speed
        nvls_.type_intra = NcclPath::kNvl;
        nvls_.type_inter = ring_.type_inter;
        nvls_ok_ = true;
      } else {
        notes_.push_back("NVLS: no speed of the generation's list fits the NVSwitch links");
      }
    }
  }
  // CollNet (SHARP).
  collnet_ok_ = spec.options.collnet && nnodes_ > 1 && max_local_ <= t.collnet_max_local_gpus;
  collnet_direct_ok_ = collnet_ok_;
  for (const auto& a : an) collnet_direct_ok_ = collnet_direct_ok_ && (a.all_nvswitch || a.gpus.size() == 1);
  if (!collnet_ok_) collnet_ = NcclGraph{};

  build_tables();

  // ---- Point-to-point: route every flow, find the busiest directed link.
  {
    std::vector<size_t> offset(slot_an.size() + 1, 0);
    for (size_t s = 0; s < slot_an.size(); ++s) offset[s + 1] = offset[s] + an[static_cast<size_t>(slot_an[s])].cap.size();
    std::vector<std::pair<size_t, int>> pos_of(static_cast<size_t>(nranks_));  // rank -> (slot, local position)
    for (int r = 0; r < nranks_; ++r) {
      const GpuRef& g = spec.gpus[static_cast<size_t>(r)];
      const size_t slot = static_cast<size_t>(std::find(slot_node.begin(), slot_node.end(), g.node) - slot_node.begin());
      const auto& v = an[static_cast<size_t>(slot_an[slot])].gpus;
      pos_of[static_cast<size_t>(r)] = {slot, static_cast<int>(std::find(v.begin(), v.end(), g.gpu) - v.begin())};
    }
    auto cap_of = [&](size_t slot, int key) { return an[static_cast<size_t>(slot_an[slot])].cap[static_cast<size_t>(key)]; };
    auto flows_spb = [&](bool all_pairs, bool* inter) {
      std::vector<double> load(offset.back(), 0);
      *inter = false;
      auto add = [&](size_t slot, int key, double w) { load[offset[slot] + static_cast<size_t>(key)] += w; };
      auto flow = [&](int src, int dst, double bytes) {
        const auto [ss, ps] = pos_of[static_cast<size_t>(src)];
        const auto [sd, pd] = pos_of[static_cast<size_t>(dst)];
        if (ss == sd) {
          const NodeAnalysis& a = an[static_cast<size_t>(slot_an[ss])];
          const Hop& h = a.hop[static_cast<size_t>(ps)][static_cast<size_t>(pd)];
          for (int k : h.keys) add(ss, k, bytes * b.hop_weight(a, h, k, true));
          return;
        }
        *inter = true;
        const NodeAnalysis& as = an[static_cast<size_t>(slot_an[ss])];
        const NodeAnalysis& ad = an[static_cast<size_t>(slot_an[sd])];
        const int ks = as.nic_of[static_cast<size_t>(ps)], kd = ad.nic_of[static_cast<size_t>(pd)];
        const NicRoute& rs = as.nic[static_cast<size_t>(ps)][static_cast<size_t>(ks)];
        const NicRoute& rd = ad.nic[static_cast<size_t>(pd)][static_cast<size_t>(kd)];
        const double ws = rs.gdr ? 1 : 1 / t.shm_duplex_efficiency;
        const double wd = rd.gdr ? 1 : 1 / t.shm_duplex_efficiency;
        for (int k : rs.to_nic) add(ss, k, bytes * ws);
        add(ss, rs.port_out, bytes);
        add(sd, rd.port_in, bytes);
        for (int k : rd.from_nic) add(sd, k, bytes * wd);
      };
      if (all_pairs) {
        for (int s = 0; s < nranks_; ++s)
          for (int d = 0; d < nranks_; ++d)
            if (s != d) flow(s, d, 1.0 / nranks_);
      } else {
        for (int s = 0; s < nranks_; ++s) flow(s, (s + 1) % nranks_, 1.0);
      }
      double spb = 0;
      for (size_t slot = 0; slot < slot_an.size(); ++slot)
        for (size_t k = 0; k < an[static_cast<size_t>(slot_an[slot])].cap.size(); ++k) {
          const double l = load[offset[slot] + k];
          if (l > 0) spb = std::max(spb, l / (cap_of(slot, static_cast<int>(k)) * 1e9));
        }
      return spb;
    };
    a2a_spb_ = flows_spb(true, &a2a_inter_);
    sendrecv_spb_ = flows_spb(false, &sendrecv_inter_);
    // Channels per peer (informational): NVLink 2 x links, PCIe/SHM 2, network by NIC bandwidth.
    auto pow2_floor = [](int v) {
      int p = 1;
      while (p * 2 <= v) p *= 2;
      return p;
    };
    if (nnodes_ > 1) {
      int nics = 0;
      double nic_bw = 0;
      for (const auto& a : an) {
        std::set<int> ks(a.nic_of.begin(), a.nic_of.end());
        nics = std::max(nics, static_cast<int>(ks.size()));
        double bw = 0;
        for (int k : ks) bw += a.cap[static_cast<size_t>(a.nic[0][static_cast<size_t>(k)].port_out)];
        nic_bw = std::max(nic_bw, bw);
      }
      p2p_channels_ = pow2_floor(std::max(nics, static_cast<int>(std::ceil(nic_bw / t.p2p_per_channel_net_bw - kEps))));
    } else {
      const NodeAnalysis& a = an[0];
      const bool nv = a.worst_intra == NcclPath::kNvl;
      const double per = a.model.empty() ? 1 : a.model[0]->nvlink_link_bw;
      p2p_channels_ = nv ? pow2_floor(2 * std::max(1, static_cast<int>(a.min_pair_bw / per + kEps))) : 2;
    }
  }

  // ---- Description.
  std::ostringstream os;
  os << nranks_ << " ranks on " << nnodes_ << " node" << (nnodes_ == 1 ? "" : "s") << " (" << min_local_
     << (min_local_ == max_local_ ? "" : "-" + std::to_string(max_local_)) << " per node), SM" << min_sm_ << " ("
     << gen_->name << "), " << vendor << " host, net " << spec.options.net_transport << "\n";
  auto line = [&](const char* name, const NcclGraph& g) {
    if (g.channels == 0) return;
    os << name << ": " << g.channels << " x " << fmt("%.4g", g.bw_intra) << " GB/s intra";
    if (nnodes_ > 1) os << ", " << fmt("%.4g", g.bw_inter) << " GB/s inter";
    os << ", type " << nccl_path_name(g.type_intra) << "/" << nccl_path_name(g.type_inter) << "\n";
  };
  line("ring", ring_);
  line("tree", tree_);
  if (nnodes_ == 1) line("chain", chain_);
  if (nvls_ok_) line("nvls", nvls_);
  if (collnet_ok_) line("collnet", collnet_);
  os << "transports: " << (uses_shm_ ? "SHM" : "P2P") << " inside nodes"
     << (nnodes_ > 1 ? (uses_host_bounce_ ? ", network through host memory" : ", GPUDirect RDMA") : "") << "\n";
  description_ = os.str();
}

void NcclModel::build_tables() {
  const NcclTuning& t = *tuning_;
  const int n = nranks_, N = nnodes_;
  const double ppn = static_cast<double>(n) / N;
  const int idx2 = N <= 2 ? N - 1 : 2;
  const double ll_max = N == 1 ? gen_->ll_max_bw_1node : cpu_->ll_max_bw_multinode[static_cast<size_t>(N == 2 ? 0 : 1)];
  const bool same_sm = min_sm_ == max_sm_;
  const bool ll128_sm = std::find(t.ll128_sms.begin(), t.ll128_sms.end(), min_sm_) != t.ll128_sms.end();

  for (auto& f : bw_)
    for (auto& a : f) a.fill(0);
  for (auto& f : lat_)
    for (auto& a : f) a.fill(0);

  for (int f = 0; f < kFuncs; ++f) {
    const int nsteps = f == kFuncAllReduce ? 2 * (n - 1) : (f == kFuncAllGather || f == kFuncReduceScatter) ? n - 1 : n;
    const int inter_steps = N == 1 ? 0 : f == kFuncAllReduce ? 2 * (N - 1) : (f == kFuncAllGather || f == kFuncReduceScatter) ? N - 1 : N;
    const bool agrs = f == kFuncAllGather || f == kFuncReduceScatter;
    for (int a = 0; a < kNcclAlgos; ++a) {
      // Which algorithms each function has.
      if ((f == kFuncBroadcast || f == kFuncReduce) && a != kAlgoRing) continue;
      if (agrs && a != kAlgoRing && a != kAlgoNvls && a != kAlgoCnDirect && a != kAlgoPat) continue;
      const NcclGraph* g = nullptr;
      switch (a) {
        case kAlgoRing: g = (f == kFuncBroadcast || f == kFuncReduce) ? &chain_ : &ring_; break;
        case kAlgoTree: g = &tree_; break;
        case kAlgoCnDirect:
        case kAlgoCnChain: g = collnet_ok_ ? &collnet_ : nullptr; break;
        case kAlgoNvls: g = (nvls_ok_ && (N == 1 || collnet_ok_)) ? &nvls_ : nullptr; break;
        case kAlgoNvlsTree: g = (nvls_ok_ && N > 1 && f == kFuncAllReduce) ? &nvls_ : nullptr; break;
        case kAlgoPat: g = (agrs && N > 1 && max_local_ == 1 && min_sm_ >= 60) ? &ring_ : nullptr; break;
        default: break;
      }
      if (!g || g->channels == 0) continue;
      if (a == kAlgoCnChain && f != kFuncAllReduce) continue;
      if (a == kAlgoCnDirect && !collnet_direct_ok_) continue;
      if (a == kAlgoNvls && !(f == kFuncAllReduce || max_local_ <= t.nvls_max_arity)) continue;
      const int C = g->channels;
      const NcclHw ihw = g->type_intra == NcclPath::kNvl ? NcclHw::kNvlink : NcclHw::kPci;

      for (int p = 0; p < kNcclProtos; ++p) {
        const double base = t.base_latency[static_cast<size_t>(a)][static_cast<size_t>(p)];
        const double ihw_lat = t.hw_latency[static_cast<size_t>(ihw)][static_cast<size_t>(a)][static_cast<size_t>(p)];
        const double nhw_lat = t.hw_latency[static_cast<size_t>(NcclHw::kNet)][static_cast<size_t>(a)][static_cast<size_t>(p)];
        if (base < 0) continue;
        if ((a == kAlgoNvls || a == kAlgoNvlsTree || a == kAlgoCnDirect || a == kAlgoCnChain || a == kAlgoPat) &&
            p != kSimple)
          continue;
        // LL128 eligibility.
        if (p == kLL128) {
          const bool inter_ok = g->type_inter <= NcclPath::kPxb || (min_sm_ >= 90 && g->type_inter <= NcclPath::kPxn);
          if (!(inter_ok && g->type_intra <= NcclPath::kNvb && same_sm && ll128_sm && (N == 1 || net_ll128_))) continue;
        }
        const bool collnet = a == kAlgoCnDirect || a == kAlgoCnChain;
        double b = (N <= 2 || collnet) ? g->bw_intra : g->bw_inter;
        double B = C * b;
        if (a == kAlgoNvls || a == kAlgoNvlsTree) {
          if (C < t.nvls_min_channels) continue;
          const double k = f == kFuncAllReduce ? 2.0 : (min_local_ - 1.0) / min_local_;
          const double m = (a == kAlgoNvlsTree && N <= 2) ? 2.0 : 1.0;
          double bp = g->bw_intra * gen_->nvls_efficiency * (C - 1.0) / C * k;
          if (N > 1) bp = std::min(bp, g->bw_inter * m);
          if (a == kAlgoNvlsTree) {
            const double cap = gen_->nvls_tree_per_channel[static_cast<size_t>(idx2)];
            if (cap > 0) bp = std::min(bp, cap);
          }
          B = C * bp;
        }
        if (a == kAlgoRing && p == kLL) B = std::min(ll_max, t.ring_ll_factor * B);
        if (a == kAlgoRing && p == kLL128) B = std::min(t.ring_ll128_factor * B, C * gen_->ring_ll128_per_channel);
        if (a == kAlgoTree) {
          B = std::min(t.tree_factor * B, C * gen_->tree_per_channel[static_cast<size_t>(idx2)]);
          if (p == kLL) B = std::min(B / t.tree_ll_divisor, ll_max);
          if (p == kLL128)
            B = std::min(B * (N == 1 ? t.tree_ll128_factor_1node : t.tree_ll128_factor_multinode),
                         C * gen_->tree_ll128_per_channel[static_cast<size_t>(idx2)]);
        }
        if (a == kAlgoPat) B *= t.pat_factor;
        if (a == kAlgoCnDirect) {
          if (agrs) {
            B = ppn * std::min(g->bw_intra, t.collnet_inter_factor * g->bw_inter);
          } else {
            const double r = ppn / C;
            B /= (r - (r - 1) / 2);
            if (min_sm_ >= 90) B *= t.collnet_hopper_factor;
          }
        }
        // busBw -> algBw.
        double A = B;
        if (a == kAlgoRing || ((a == kAlgoNvls || a == kAlgoNvlsTree) && !agrs)) A = B * n / nsteps;
        else if (a == kAlgoTree || (collnet && !agrs)) A = B / 2;
        if (!(A > 0)) continue;

        // Latency.
        double intra_lat = ihw_lat;
        double inter_lat = nhw_lat + net_latency_us_ + (p == kSimple ? net_flush_us_ : 0.0);
        double L = base;
        if (a == kAlgoRing) {
          if (f == kFuncBroadcast || f == kFuncReduce) {
            const NcclHw hw = N == 1 ? ihw : NcclHw::kNet;
            double lat = t.hw_latency[static_cast<size_t>(hw)][static_cast<size_t>(a)][static_cast<size_t>(p)];
            if (g->same_channels) {
              L += lat;
            } else {
              if (p == kSimple) lat = t.hw_latency[static_cast<size_t>(hw)][kAlgoTree][kSimple];
              L += nsteps * lat;
            }
          } else {
            double over = 0;
            if (N > 1) over = cpu_->net_overhead_us * (p == kSimple ? 3 : 1);
            intra_lat = std::max(intra_lat, over);
            L += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
          }
        } else if (a == kAlgoTree) {
          L += 2 * ((ppn - 1) * intra_lat + log2i(N) * inter_lat);
        } else if (a == kAlgoCnDirect) {
          L += 2 * (std::min(1.0, ppn - 1) * intra_lat + (ppn - 1) * 0.4) + inter_lat;
        } else if (a == kAlgoCnChain) {
          L += 2 * (ppn - 1) * intra_lat + inter_lat;
        } else if (a == kAlgoNvls) {
          L = intra_lat + (N > 1 ? inter_lat : 0.0);
        } else if (a == kAlgoNvlsTree) {
          L += intra_lat + 2 * log2i(N) * inter_lat;
        } else if (a == kAlgoPat) {
          L += log2i(N) * inter_lat / 3.5 + 2.8 * n;
        }
        if (intra_lat < 0 || inter_lat < 0 || L < 0) continue;
        bw_[static_cast<size_t>(f)][static_cast<size_t>(a)][static_cast<size_t>(p)] = A;
        lat_[static_cast<size_t>(f)][static_cast<size_t>(a)][static_cast<size_t>(p)] = L;
      }
    }
  }
}

double NcclModel::table_bandwidth(Collective c, NcclAlgo a, NcclProto p) const {
  const int f = func_index(c);
  if (f < 0) return 0;
  return bw_[static_cast<size_t>(f)][static_cast<size_t>(a)][static_cast<size_t>(p)];
}

double NcclModel::table_latency(Collective c, NcclAlgo a, NcclProto p) const {
  const int f = func_index(c);
  if (f < 0) return 0;
  return lat_[static_cast<size_t>(f)][static_cast<size_t>(a)][static_cast<size_t>(p)];
}

std::string NcclModel::describe() const { return description_; }

double NcclModel::p2p_seconds_per_byte(Collective c) const {
  return c == Collective::kAllToAll ? a2a_spb_ : sendrecv_spb_;
}
bool NcclModel::p2p_inter_node(Collective c) const {
  return c == Collective::kAllToAll ? a2a_inter_ : sendrecv_inter_;
}

// ---------------------------------------------------------------------------------------

namespace {

/// NCCL's model time of one (algorithm, protocol) for `bytes` (ncclTopoGetAlgoTime).
double model_time(const NcclModel& m, Collective c, int a, int p, double bytes, double* lat_out, double* bw_out) {
  const NcclTuning& t = m.tuning();
  double bw = m.table_bandwidth(c, static_cast<NcclAlgo>(a), static_cast<NcclProto>(p));
  double lat = m.table_latency(c, static_cast<NcclAlgo>(a), static_cast<NcclProto>(p));
  if (a == kAlgoTree && c == Collective::kAllReduce) {
    const int idx = log2i(static_cast<int64_t>(bytes) >> 6);
    const auto& corr = t.tree_correction[static_cast<size_t>(p)];
    if (idx >= 0 && idx < static_cast<int>(corr.size())) bw *= corr[static_cast<size_t>(idx)];
  }
  if (a == kAlgoRing && p == kSimple && m.nodes() > 1 && c == Collective::kAllReduce &&
      bytes / (static_cast<double>(m.ring().channels) * m.ranks()) >= t.plateau_min_bytes)
    lat *= m.sm() >= 80 ? t.plateau_factor : t.plateau_factor_pre_ampere;
  *lat_out = lat;
  *bw_out = bw;
  return lat + bytes / (1000.0 * bw);
}

}  // namespace

CollectiveCost nccl_cost(const NcclModel& m, Collective c, int64_t bytes_in, std::optional<NcclAlgo> algo,
                         std::optional<NcclProto> proto) {
  const NcclTuning& t = m.tuning();
  CollectiveCost r;
  const double bytes = static_cast<double>(std::max<int64_t>(bytes_in, 0));
  const int n = m.ranks();
  // The fitted per-link-class terms (calibration.links), after the choice; none for 1 rank.
  const NcclLinkCalibration lc = n > 1 ? t.link_calibration[static_cast<size_t>(m.link_class())] : NcclLinkCalibration{};
  auto finish = [&](double lat_us, double bw_us) {
    r.latency_us = lat_us + m.launch_us() + lc.latency_us;
    r.time_us = r.latency_us + bw_us / lc.bw_efficiency;
    r.algbw_GBps = r.time_us > 0 ? bytes / (r.time_us * 1000.0) : 0;
    r.busbw_GBps = r.algbw_GBps * busbw_factor(c, n);
    return r;
  };
  if (n == 1) {
    r.algo = "none";
    r.proto = "none";
    return finish(0, bytes / (1000.0 * t.local_bw));
  }

  if (c == Collective::kAllToAll || c == Collective::kSendRecv) {
    const bool inter = m.p2p_inter_node(c);
    const double per_peer = c == Collective::kAllToAll ? bytes / n : bytes;
    int p = per_peer <= t.p2p_ll_threshold ? kLL : kSimple;
    if (proto && (*proto == NcclProto::kLL || *proto == NcclProto::kSimple)) p = static_cast<int>(*proto);
    else if (proto) r.forced_ignored = true;
    if (algo) r.forced_ignored = true;
    const NcclHw hw = inter ? NcclHw::kNet : m.intra_hw();
    double hop = t.hw_latency[static_cast<size_t>(hw)][kAlgoRing][static_cast<size_t>(p)];
    if (inter) hop += m.net_latency_us() + (p == kSimple ? m.net_flush_us() : 0.0);
    // One hop, plus the proxy's post overhead for every further peer of an AllToAll.
    const int extra_peers = c == Collective::kAllToAll ? std::max(0, n - 2) : 0;
    const double lat = t.base_latency[kAlgoRing][static_cast<size_t>(p)] + hop + extra_peers * m.cpu_net_overhead_us();
    const double eff = p == kLL ? t.ring_ll_factor : 1.0;
    r.algo = "P2P";
    r.proto = std::string(nccl_proto_name(static_cast<NcclProto>(p)));
    r.channels = m.p2p_channels();
    return finish(lat, bytes * m.p2p_seconds_per_byte(c) * 1e6 / eff);
  }

  int best_a = -1, best_p = -1;
  double best_t = kInf;
  auto pick = [&](bool forced) {
    for (int a = 0; a < kNcclAlgos; ++a) {
      if (forced && algo && static_cast<int>(*algo) != a) continue;
      for (int p = 0; p < kNcclProtos; ++p) {
        if (forced && proto && static_cast<int>(*proto) != p) continue;
        if (m.table_bandwidth(c, static_cast<NcclAlgo>(a), static_cast<NcclProto>(p)) <= 0) continue;
        double lat = 0, bw = 0;
        const double tm = model_time(m, c, a, p, bytes, &lat, &bw);
        if (tm < best_t) {
          best_t = tm;
          best_a = a;
          best_p = p;
        }
      }
    }
  };
  pick(true);
  if (best_a < 0 && (algo || proto)) {
    r.forced_ignored = true;
    pick(false);
  }
  if (best_a < 0) {
    r.algo = "none";
    r.proto = "none";
    return finish(0, 0);
  }
  double lat = 0, bw = 0;
  model_time(m, c, best_a, best_p, bytes, &lat, &bw);
  double bw_us = bytes / (1000.0 * bw);

  // NCCL's channel reduction for small sizes (enqueue.cc): fewer channels, same per-channel rate.
  int channels = 0;
  if (best_a == kAlgoRing || best_a == kAlgoTree) {
    const NcclGraph& g = best_a == kAlgoTree ? m.tree()
                         : (c == Collective::kBroadcast || c == Collective::kReduce) ? m.chain()
                                                                                      : m.ring();
    channels = g.channels;
    int nt = t.threads[static_cast<size_t>(best_p)];
    if (best_p == kSimple && best_a == kAlgoRing && m.ring().bw_intra * m.ring().channels <= t.simple_low_bw_limit)
      nt = t.simple_threads_low_bw;
    const double th = t.thread_threshold[static_cast<size_t>(best_p)] * ((best_a == kAlgoRing && best_p == kLL) ? n : 1);
    int nc = channels;
    while (nc > 1 && bytes < nc * nt * th) --nc;
    if (nc < channels) bw_us *= static_cast<double>(channels) / nc;
    channels = nc;
  } else if (best_a == kAlgoNvls || best_a == kAlgoNvlsTree) {
    channels = m.nvls().channels;
  } else if (best_a == kAlgoPat) {
    channels = m.ring().channels;
  } else {
    channels = m.collnet().channels;
  }
  r.algo = std::string(nccl_algo_name(static_cast<NcclAlgo>(best_a)));
  r.proto = std::string(nccl_proto_name(static_cast<NcclProto>(best_p)));
  r.channels = channels;
  return finish(lat, bw_us);
}

// ---------------------------------------------------------------------------------------

namespace {

int dtype_size(const std::string& d) {
  const std::string s = to_lower(d);
  if (s == "double" || s == "float64" || s == "int64" || s == "uint64") return 8;
  if (s == "half" || s == "float16" || s == "bfloat16") return 2;
  if (s == "int8" || s == "uint8" || s == "fp8" || s == "f8e4m3" || s == "f8e5m2") return 1;
  return 4;
}

std::string time_str(double us) {
  char buf[32];
  if (us >= 10000.0) std::snprintf(buf, sizeof buf, "%7.0f", us);
  else if (us >= 100.0) std::snprintf(buf, sizeof buf, "%7.1f", us);
  else std::snprintf(buf, sizeof buf, "%7.2f", us);
  return buf;
}

std::string bus_of(const std::string& bus_id) {
  // "0000:07:00.0" -> "0x07"
  const auto parts = split(bus_id, ':');
  if (parts.size() >= 2) return "0x" + std::string(parts[parts.size() - 2]);
  return "0x00";
}

}  // namespace

std::string format_nccl_tests_table(const NcclModel& model, const CommSpec& spec, Collective c,
                                    const std::vector<int64_t>& sizes, const NcclTestsTableOptions& opt) {
  std::string out;
  char buf[512];
  const int n = model.ranks();
  const int g = std::clamp(spec.options.gpus_per_process, 1, std::max(1, n));
  const int64_t mn = sizes.empty() ? 0 : *std::min_element(sizes.begin(), sizes.end());
  const int64_t mx = sizes.empty() ? 0 : *std::max_element(sizes.begin(), sizes.end());
  std::string step = "0(bytes)";
  if (sizes.size() >= 2) {
    bool geometric = sizes[0] > 0 && sizes[1] % sizes[0] == 0 && sizes[1] / sizes[0] > 1;
    const int64_t f = geometric ? sizes[1] / sizes[0] : 0;
    bool arithmetic = true;
    const int64_t d = sizes[1] - sizes[0];
    for (size_t i = 1; i < sizes.size(); ++i) {
      if (!(sizes[i - 1] > 0 && sizes[i] == sizes[i - 1] * f)) geometric = false;
      if (sizes[i] - sizes[i - 1] != d) arithmetic = false;
    }
    if (geometric) step = std::to_string(f) + "(factor)";
    else if (arithmetic) step = std::to_string(d) + "(bytes)";
    else step = "-";
  }
  std::snprintf(buf, sizeof buf,
                "# nThread 1 nGpus %d minBytes %lld maxBytes %lld step: %s warmup iters: %d iters: %d agg iters: 1 "
                "validation: 0 graph: 0\n",
                g, static_cast<long long>(mn), static_cast<long long>(mx), step.c_str(), opt.warmup_iters, opt.iters);
  out += buf;
  out += "#\n# Using devices\n";
  for (int r = 0; r < n && spec.cluster; ++r) {
    const GpuRef& ref = spec.gpus[static_cast<size_t>(r)];
    const Node& node = spec.cluster->nodes[static_cast<size_t>(ref.node)];
    const GpuSpec& gs = spec.cluster->tmpl(ref.node).gpus[static_cast<size_t>(ref.gpu)];
    std::snprintf(buf, sizeof buf, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%s] %s\n", r, 0, r / g,
                  node.name.c_str(), ref.gpu, bus_of(gs.bus_id).c_str(),
                  (gs.model.empty() ? gs.gres_type : gs.model).c_str());
    out += buf;
  }
  out += "#\n";
  out += "#                                                              out-of-place                       in-place  "
         "        \n";
  out += "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
         "#wrong  algo/proto\n";
  out += "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s) "
         "      \n";
  const int es = dtype_size(opt.dtype);
  const bool per_rank_split = c == Collective::kAllGather || c == Collective::kReduceScatter || c == Collective::kAllToAll;
  const char* redop = (c == Collective::kAllReduce || c == Collective::kReduceScatter || c == Collective::kReduce) ? "sum" : "none";
  const int root = (c == Collective::kBroadcast || c == Collective::kReduce) ? 0 : -1;
  double sum_bus = 0;
  for (int64_t s : sizes) {
    const CollectiveCost cost = nccl_cost(model, c, s, opt.algo, opt.proto);
    const int64_t count = s / es / (per_rank_split ? n : 1);
    std::snprintf(buf, sizeof buf, "%12lld  %12lld  %8s  %6s  %6d", static_cast<long long>(s),
                  static_cast<long long>(count), opt.dtype.c_str(), redop, root);
    out += buf;
    for (int place = 0; place < 2; ++place) {
      std::snprintf(buf, sizeof buf, "  %7s  %6.2f  %6.2f  %5s", time_str(cost.time_us).c_str(), cost.algbw_GBps,
                    cost.busbw_GBps, "N/A");
      out += buf;
    }
    out += "  " + cost.algo + "/" + cost.proto + "\n";
    sum_bus += cost.busbw_GBps;
  }
  out += "# Out of bounds values : 0 OK\n";
  std::snprintf(buf, sizeof buf, "# Avg bus bandwidth    : %g \n", sizes.empty() ? 0.0 : sum_bus / sizes.size());
  out += buf;
  out += "#\n";
  return out;
}

}  // namespace gcsim
