// Contention between concurrent jobs: a registry of the cluster's shared links (intra-node
// PCIe, host bridge, NUMA fabric, inter-socket and NIC-port links, and the inter-node
// network), flows built from a job's placement for Ring and pairwise (AllToAll, send/recv)
// traffic, and a fluid max-min fair solver (progressive filling with demand caps and
// weights) recomputed when jobs start or end. shared/research/nccl_model.md §5 and §7 layer 5.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/cluster/cluster.hpp"
#include "sim/cluster/topology.hpp"

namespace gcsim {

// ---------------------------------------------------------------------------------------
// Link registry
// ---------------------------------------------------------------------------------------

/// Every link is full duplex and modelled as two directed links with the edge's bandwidth
/// each. kUp runs from the first end of the edge to the second as the topology graphs build
/// them: on a node, from the device side toward the CPU (device -> switch -> root port ->
/// host bridge -> NUMA -> socket), from the NIC out to the network on a NIC port, from the
/// lower socket to the higher on an SMP link; in the network, from a node to its leaf and
/// from a switch to its parent. kDown is the other way.
enum class LinkDir { kUp = 0, kDown = 1 };

struct LinkInfo {
  int node = -1;               // node index; -1 for a link of the inter-node network
  int edge = -1;               // edge id in the node's NodeTopology, or in the ClusterTopology
  LinkDir dir = LinkDir::kUp;
  double capacity_Bps = 0;     // bytes per second in this direction (infinite when unconstrained)
  [[nodiscard]] bool network() const { return node < 0; }
};

/// One GPU of a job: node index in the Cluster, GPU index in its template.
struct PlacedGpu {
  int node = 0;
  int gpu = 0;
  friend bool operator==(const PlacedGpu&, const PlacedGpu&) = default;
};

/// A directed node edge private to the GPU(s) it serves (NVLink, NVSwitch ports, a GPU's
/// own PCIe link): not in the registry, no other job can slow a flow on it.
struct PrivateLink {
  int node = 0;
  int edge = 0;
  LinkDir dir = LinkDir::kUp;
  double capacity_Bps = 0;
  friend auto operator<=>(const PrivateLink& a, const PrivateLink& b) {
    return std::tie(a.node, a.edge, a.dir) <=> std::tie(b.node, b.edge, b.dir);
  }
  friend bool operator==(const PrivateLink& a, const PrivateLink& b) {
    return a.node == b.node && a.edge == b.edge && a.dir == b.dir;
  }
};

/// The links a message from one GPU to another crosses, source to destination.
struct Route {
  std::vector<int> links;                  // registry link ids (shared links)
  std::vector<PrivateLink> private_links;  // NVLink hops, GPUs' own PCIe links
};

/// Global link ids for one cluster. Node links are numbered node by node (node index, then
/// the node's shared edges in edge-id order, up before down), then the network's edges in
/// ClusterTopology edge-id order (up before down). Capacities are the topology graphs'
/// edge bandwidths. Registered: every network edge (node-leaf, switch-parent) and every
/// node edge that two devices' traffic can cross: PCIe switch uplinks, root ports and host
/// bridges, NUMA fabric, SMP, NIC ports. Not registered:
/// - NVLink bonds and NVSwitch ports, and PCIe links only one GPU's traffic can cross (its
///   device link, the internal switch level above it, a root port or host bridge of its
///   own): private to the GPU, so never shared with another job (a GPU has one job). On a
///   route they are PrivateLinks.
/// - a NIC's own PCIe links (device link, internal switch level): every route through them
///   goes on through the NIC's port, so the port link stands for them, with the smaller of
///   the two capacities.
///
/// Routes: GPU to GPU on one node is NodeTopology::path (NVLink when the GPUs have it, else
/// the PCIe/SMP tree). Across nodes: source GPU -> its nearest NIC -> NIC port out -> the
/// network tree path (up to the lowest common switch, down again) -> NIC port in -> the
/// destination GPU's nearest NIC -> destination GPU. Nodes the network does not join (no
/// network in the description, or a node under no switch) cross NIC ports only: the fabric
/// between them is taken as non-blocking.
class LinkRegistry {
 public:
  explicit LinkRegistry(const Cluster& cluster, const LinkModel& model = {});

  [[nodiscard]] int link_count() const { return static_cast<int>(links_.size()); }
  [[nodiscard]] const LinkInfo& link(int id) const { return links_.at(static_cast<size_t>(id)); }
  /// Capacity of every link, by id: what ContentionSolver is built with.
  [[nodiscard]] std::vector<double> capacities() const;
  /// The link of one direction of a node edge; -1 when the edge is not registered (private
  /// to a GPU, or a NIC's own PCIe link, which its port link stands for).
  [[nodiscard]] int node_link(int node, int edge, LinkDir dir) const;
  /// The link of one direction of a network edge.
  [[nodiscard]] int network_link(int edge, LinkDir dir) const;
  /// "dgx001:sw0-rp0:up", "net:dgx001-leaf0:up", for messages and tests.
  [[nodiscard]] std::string link_name(int id) const;

  [[nodiscard]] int node_count() const { return static_cast<int>(node_base_.size()); }
  [[nodiscard]] const NodeTopology& node_topology(int node) const;
  [[nodiscard]] const ClusterTopology& network() const { return *net_; }

  /// The NIC a GPU's inter-node traffic uses: the NICs of the best path class from it, then
  /// the highest bottleneck bandwidth, spread over GPUs with the same choice in GPU order
  /// (GPU0 and GPU1 of a DGX A100 switch get mlx5_0 and mlx5_1); -1 when the node has none.
  [[nodiscard]] int nearest_nic(int node, int gpu) const;
  /// Route from one GPU to another (throws std::out_of_range for a bad node or GPU index,
  /// std::invalid_argument for an inter-node route on a node without NICs).
  [[nodiscard]] Route route(PlacedGpu from, PlacedGpu to) const;
  /// The same, appended to `r` (flow builders chain a ring's hops into one route).
  void append_route(PlacedGpu from, PlacedGpu to, Route* r) const;
  /// Registry links of the network path between two nodes (up to the common switch, then
  /// down); empty for the same node or nodes the network does not join.
  [[nodiscard]] std::vector<int> network_route(int node_a, int node_b) const;

 private:
  /// A directed edge of a node template's graph: 2 x edge id + dir.
  using DirEdge = int;
  // NodeTopology and ClusterTopology keep edge descriptors into their own graphs, so
  // they must not be copied or moved: each is built in place on the heap.
  struct TemplateData {
    std::unique_ptr<NodeTopology> topo;
    std::vector<int> shared_index;               // edge id -> index among shared edges, -1 private
    std::vector<int> shared_edges;               // index among shared edges -> edge id
    std::vector<double> shared_cap;              // index among shared edges -> capacity
    std::vector<char> nic_own;                   // edge id -> a NIC's own PCIe link
    int shared_count = 0;
    std::vector<int> nic_of_gpu;                 // nearest_nic
    std::vector<std::vector<DirEdge>> gpu_gpu;   // [a * gpus + b]
    std::vector<std::vector<DirEdge>> gpu_out;   // [g * nics + k]: GPU -> NIC -> port
  };
  void append(int node, const std::vector<DirEdge>& path, bool reversed, Route* r) const;

  std::vector<TemplateData> templates_;
  std::vector<int> node_template_;
  std::vector<int> node_base_;                   // first link id of each node
  std::vector<std::string> node_names_;
  std::unique_ptr<ClusterTopology> net_;
  int net_base_ = 0;
  std::vector<int> node_up_edge_;                // network edge node -> leaf, -1 = none
  std::vector<int> switch_up_edge_;              // network edge switch -> parent, -1 = top
  std::vector<int> switch_parent_;
  std::vector<std::vector<int>> node_chain_;     // switches above each node, leaf first
  std::vector<std::string> net_edge_names_;      // "dgx001-leaf0", "leaf0-spine"
  std::vector<LinkInfo> links_;
};

// ---------------------------------------------------------------------------------------
// Flows
// ---------------------------------------------------------------------------------------

inline constexpr double kNoDemandCap = std::numeric_limits<double>::infinity();

/// A fluid flow. `links` may repeat a link: a link listed k times carries k x the flow's
/// rate (a ring channel crossing one PCIe uplink twice). demand_Bps caps the rate
/// (infinity = none); weight scales the flow's share at a bottleneck (weighted max-min).
struct Flow {
  int owner = 0;               // the job
  std::vector<int> links;
  double demand_Bps = kNoDemandCap;
  double weight = 1;
};

/// Ring traffic of a job, one flow per channel. A ring channel is a coflow: its hops move
/// in lock-step, so it is one flow over the concatenation of every hop's route (repeated
/// links counted with their multiplicity) and its rate is the rate of every hop. Ring
/// order is rank order; channel c rotates every run of consecutive ranks on one node by c,
/// so that successive channels leave a node from different GPUs and through their NICs
/// (NCCL's rails). Private links (NVLink, a GPU's own PCIe links) never make the flow
/// contend with other jobs; they become a demand cap: each private link's bandwidth split
/// evenly over the job's crossings of it (exact for the symmetric channels of a ring).
/// demand_Bps caps each channel further. Throws std::invalid_argument for a GPU listed
/// twice or channels < 1.
[[nodiscard]] std::vector<Flow> ring_flows(const LinkRegistry& reg, int owner, const std::vector<PlacedGpu>& ranks,
                                           int channels, double demand_Bps = kNoDemandCap);
/// One flow per (source, destination) pair, private links capped as for ring_flows.
[[nodiscard]] std::vector<Flow> pair_flows(const LinkRegistry& reg, int owner,
                                           const std::vector<std::pair<PlacedGpu, PlacedGpu>>& pairs,
                                           double demand_Bps = kNoDemandCap);
/// AllToAll: a flow for every ordered pair of distinct ranks, (0,1), (0,2), ..., (n-1,n-2).
[[nodiscard]] std::vector<Flow> alltoall_flows(const LinkRegistry& reg, int owner, const std::vector<PlacedGpu>& ranks,
                                               double demand_Bps = kNoDemandCap);

// ---------------------------------------------------------------------------------------
// Solver
// ---------------------------------------------------------------------------------------

/// Max-min fair rates of a changing set of flows (progressive filling; SimGrid's LMM and
/// Bertsekas-Gallager §6.5.2 describe the method). All unfrozen flows rise together as
/// weight x level; a link saturates when its capacity is used up, a flow stops at its
/// demand; the flows on the first link to saturate (ties: lowest link id) or the first
/// capped flow to reach its cap (ties: lowest flow id; caps before links at equal level) are
/// frozen, and so on until every flow is frozen. A flow on no link without a cap gets an
/// infinite rate.
///
/// Changes (add_flow, remove_owner, remove_flow) are collected; solve() recomputes the
/// connected components of the flow-link graph that the changes touched (max-min rates of
/// one component do not depend on any other; once the search has found half the flows it
/// stops and every flow is recomputed), and the isolated rates of the owners that changed.
/// A link carrying one flow of the problem is folded into that flow's cap, the same
/// constraint; links of infinite capacity are dropped. Queries throw std::logic_error while changes are pending. Flow ids are reused,
/// smallest first, once removed. Deterministic: the result depends on the flows, their ids
/// and the capacities only.
class ContentionSolver {
 public:
  explicit ContentionSolver(std::vector<double> link_capacity_Bps);

  [[nodiscard]] int link_count() const { return static_cast<int>(capacity_.size()); }
  /// Adds a flow; throws std::invalid_argument for a bad link id, weight <= 0, demand < 0 or NaN.
  int add_flow(Flow f);
  /// Adds every flow; their ids in order.
  std::vector<int> add_flows(std::vector<Flow> flows);
  void remove_flow(int id);
  /// Removes every flow of a job (none: no-op).
  void remove_owner(int owner);

  /// Recomputes what the changes since the last call touched; rates by flow id (0 for an id
  /// not in use).
  const std::vector<double>& solve();
  /// Recomputes every flow from scratch (same result as solve(), for checks and benchmarks).
  const std::vector<double>& solve_full();
  [[nodiscard]] bool pending() const { return !dirty_links_.empty() || !dirty_free_.empty() || !dirty_owners_.empty(); }
  /// Owners of the flows the last solve() or solve_full() recomputed, ascending: every
  /// other owner's rates, alone rates and slowdown are as before it.
  [[nodiscard]] const std::vector<int>& solved_owners() const { return solved_owners_; }

  [[nodiscard]] double rate(int flow) const;
  /// The flow's rate with only its owner's flows on the network.
  [[nodiscard]] double alone_rate(int flow) const;
  /// Smallest rate of the owner's flows (its flows carry equal bytes, so its communication
  /// time goes as 1 / this); infinity for an owner with no flow.
  [[nodiscard]] double owner_rate(int owner) const;
  /// (owner's smallest rate alone) / (its smallest rate now), at least 1: how much slower
  /// its communication runs because of the other jobs. 1 for an owner with no flow.
  [[nodiscard]] double owner_slowdown(int owner) const;
  [[nodiscard]] std::vector<int> owner_flows(int owner) const;
  [[nodiscard]] int flow_count() const { return live_flows_; }
  [[nodiscard]] bool has_flow(int id) const;
  [[nodiscard]] const Flow& flow(int id) const;

  /// Size of the last recomputation: links and flows of the touched components, their
  /// flow-link incidences, and the links among them that carry two flows or more (a link
  /// of one flow is folded into that flow's cap).
  struct SolveStats {
    int links = 0;
    int flows = 0;
    int64_t incidences = 0;
    int contended_links = 0;
  };
  [[nodiscard]] SolveStats last_solve() const { return last_; }

 private:
  struct Slot {
    bool live = false;
    Flow flow;
    std::vector<int> links;       // unique, ascending
    std::vector<double> mult;     // times the flow crosses each link
    std::vector<int> pos;         // index in link_flows_[links[i]]
  };
  /// A max-min problem in local indices (flows 0..F-1, links 0..L-1), incidences both ways.
  struct Problem {
    std::vector<double> cap;                // per link
    std::vector<int> f_off, f_link;         // flow -> links (CSR)
    std::vector<double> f_mult;             // per incidence
    std::vector<double> weight, demand;     // per flow (demand includes folded one-flow links)
    std::vector<int> l_off, l_flow;         // link -> flows (CSR), ascending flow index
  };
  /// Progressive filling state, kept between solves so that its memory is reused.
  struct LinkState {
    double rem = 0, wsum = 0;  // capacity left, weight of the open flows
    int open = 0;              // flows not frozen yet
  };
  struct Work {
    std::vector<LinkState> link;
    std::vector<double> rate;
    std::vector<int> fill;
    std::vector<char> frozen;
    std::vector<std::pair<double, int>> heap, caps;
  };
  static void progressive_fill(const Problem& p, Work& w);
  void check_solved() const;
  void solve_flows(const std::vector<int>& flows, std::vector<double>* out);
  void solve_alone(int owner);
  const std::vector<double>& finish_solve();
  void next_epoch();

  std::vector<double> capacity_;
  std::vector<Slot> slots_;
  std::vector<int> free_ids_;               // min-heap of reusable ids
  std::vector<std::vector<int>> link_flows_;
  std::map<int, std::vector<int>> owners_;  // owner -> flow ids, ascending
  std::map<int, double> owner_alone_;       // owner -> smallest alone rate
  std::vector<double> rate_, alone_;
  std::vector<int> dirty_links_, dirty_free_;
  std::vector<int> dirty_owners_;
  std::vector<int> solved_owners_;  // see solved_owners()
  void note_solved(const std::vector<int>& flows);
  int live_flows_ = 0;
  // Scratch for the component search and the compact problem.
  struct LinkScratch {
    uint32_t mark = 0;   // epoch of the last visit
    int users = 0;       // flows of the problem being built on the link
    int local = -1;      // index in that problem, -1 = folded or dropped
  };
  std::vector<LinkScratch> lk_;
  std::vector<uint32_t> flow_mark_;
  uint32_t epoch_ = 0;
  std::vector<int> links_seen_, queue_, comp_;
  Problem prob_;
  Work work_;
  SolveStats last_;
};

}  // namespace gcsim
