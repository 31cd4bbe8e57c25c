// The topology graphs: NodeTopology, one NodeTemplate as a Boost.Graph of sockets, NUMA
// domains, host bridges, root ports, PCIe switches, GPUs, the NVSwitch fabric and NICs, with
// nvidia-smi path classes, bottleneck bandwidth, latency and edge ids between devices; and
// ClusterTopology, the inter-node network (fat-tree or switch tree) as a Boost.Graph.
#pragma once

#include <boost/graph/adjacency_list.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/cluster/cluster.hpp"
#include "sim/core/time.hpp"

namespace gcsim {

// ---------------------------------------------------------------------------------------
// Node topology
// ---------------------------------------------------------------------------------------

enum class TopoVertexKind {
  kSocket,      // a CPU package
  kNuma,        // a NUMA domain (cores + memory)
  kHostBridge,  // a PCIe root complex / host bridge
  kRootPort,    // a CPU root port (a PCI-PCI bridge of the host bridge)
  kPcieSwitch,  // a PCIe switch, or one internal level of a multi-level switch
  kGpu,
  kNvswitch,    // the NVSwitch fabric of the node, one logical vertex
  kNic,
  kNetPort,     // the network side of a NIC port (where the inter-node network starts)
};

enum class TopoEdgeKind {
  kSmp,         // socket <-> socket (UPI / xGMI)
  kNumaLocal,   // NUMA domain <-> its socket (on-die fabric)
  kHostBridge,  // host bridge <-> NUMA domain, root port <-> host bridge (on-die, "local")
  kPcie,        // a PCIe link (device or switch uplink), gen x width
  kNvlink,      // GPU <-> GPU or GPU <-> NVSwitch fabric, a bonded set of NVLinks
  kNicPort,     // NIC <-> its network port, at the line rate
};

struct TopoVertex {
  TopoVertexKind kind = TopoVertexKind::kSocket;
  int index = -1;          // socket / NUMA / switch / GPU / NIC index in the template
  std::string name;        // "socket0", "numa3", "sw0", "sw0.1" (internal level), "gpu0", "mlx5_0"
  int numa = -1;           // the NUMA domain it belongs to (-1 for sockets and NVSwitch)
  int first_core = -1;     // kNuma: first Slurm abstract core id
  int core_count = 0;      // kNuma: cores in the domain
  int64_t memory_mb = 0;   // kNuma: memory of the domain, MiB
};

struct TopoEdge {
  int id = -1;                 // index into NodeTopology's edge table, stable
  TopoEdgeKind kind = TopoEdgeKind::kPcie;
  double bandwidth_Bps = 0;    // bytes per second, per direction
  double latency_ns = 0;       // one traversal
  int pcie_gen = 0;            // kPcie
  int pcie_width = 0;          // kPcie
  int nvlinks = 0;             // kNvlink: links in the bond
};

using TopoGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                        TopoVertex, TopoEdge>;

/// nvidia-smi `topo -m` connection classes, best first.
enum class PathClass { kSelf, kNvlink, kPix, kPxb, kPhb, kNode, kSys };

/// "X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS" (kNvlink without its count).
[[nodiscard]] std::string_view path_class_name(PathClass c);

struct DeviceRef {
  enum class Kind { kGpu, kNic, kNuma } kind = Kind::kGpu;
  int index = 0;
  [[nodiscard]] static DeviceRef gpu(int i) { return {Kind::kGpu, i}; }
  [[nodiscard]] static DeviceRef nic(int i) { return {Kind::kNic, i}; }
  [[nodiscard]] static DeviceRef numa(int i) { return {Kind::kNuma, i}; }
  friend bool operator==(const DeviceRef&, const DeviceRef&) = default;
};

struct PathInfo {
  PathClass cls = PathClass::kSelf;
  int nvlinks = 0;             // kNvlink: links of the narrowest bond on the path
  double bandwidth_Bps = 0;    // bottleneck, bytes/s per direction (infinite for kSelf)
  double latency_ns = 0;       // sum of the edge latencies
  std::vector<int> edges;      // edge ids, from a to b
  /// The nvidia-smi cell: "X", "NV12", "PIX", ...
  [[nodiscard]] std::string label() const;
};

/// Link figures the graph is built with. Defaults (all per direction):
/// - PCIe per lane, after line coding: Gen1 0.25, Gen2 0.5, Gen3 0.985, Gen4 1.969,
///   Gen5 3.938, Gen6 7.563 GB/s (raw rates; NCCL's own effective model uses 12/24/48 GB/s
///   for Gen3/4/5 x16, shared/research/nccl_model.md §1.1 — pass `pcie_efficiency` 0.76 to
///   get close to it).
/// - SMP and on-die NUMA fabric: 16 GB/s, NCCL's figure for the inter-CPU link of AMD hosts
///   (Intel Skylake-Ice Lake UPI 10, Sapphire Rapids 22; nccl_model.md §1.1); the template
///   does not name the CPU, so one default for all.
/// - host bridge / root port to the CPU: 5000 GB/s, NCCL's "local" (effectively unlimited).
/// - NVLink: links x NvlinkSpec::link_bandwidth_bps / 8.
/// - Latencies are order-of-magnitude figures for cost models, not measurements:
///   PCIe link or switch traversal 100 ns, host bridge 50 ns, NUMA fabric hop 50 ns,
///   inter-socket hop 100 ns, NVLink hop (GPU to GPU or GPU to NVSwitch) 100 ns, NIC port 0.
struct LinkModel {
  double pcie_efficiency = 1.0;
  double smp_bandwidth_Bps = 16e9;
  double numa_fabric_bandwidth_Bps = 16e9;
  double local_bandwidth_Bps = 5000e9;
  double pcie_latency_ns = 100;
  double host_bridge_latency_ns = 50;
  double numa_fabric_latency_ns = 50;
  double smp_latency_ns = 100;
  double nvlink_latency_ns = 100;
  double nic_port_latency_ns = 0;
};

/// PCIe bandwidth of one direction of a gen x width link, bytes/s (raw, after line coding).
[[nodiscard]] double pcie_bandwidth_Bps(int gen, int width);
/// PCIe generation of a GPU product from its model name (or GRES type): Volta, Pascal,
/// Turing and Kepler parts 3, Hopper and Blackwell 5, everything else 4.
[[nodiscard]] int gpu_pcie_generation(const std::string& model);

/// One node template as a graph. Built by build_node_topology; immutable afterwards.
///
/// Modelling choices (the template does not carry everything a real machine has):
/// - NVSwitch systems get one logical NVSwitch fabric vertex (as NCCL's NVS node), each GPU
///   joined to it by `links_per_gpu` links; the physical switch count (6 on A100, 4 on H100)
///   does not change any path class or bottleneck.
/// - A switch whose `parent` is -1 hangs off its own root port. Host bridges: switches with
///   the same known `host_bridge` id in the same NUMA domain share one; a switch or device
///   with an unknown host bridge gets its own, so two of them in one NUMA domain are NODE
///   (as on DGX H100 and on EPYC/Xeon hosts where every x16 slot is its own root complex).
/// - A switch of PcieSwitchSpec::levels 2 (the default for Gen4+, see cluster.hpp) puts an
///   internal switch vertex between itself and every device on it, so its devices are PXB.
/// - GPUs and NICs on a root port (pcie_switch -1) get their own root port, except NICs
///   that are ports of one adapter: NICs on root ports of the same NUMA domain whose bus ids
///   agree up to the function number, or, when bus ids are not known, that sit in the same
///   NUMA domain (the usual dual-port ConnectX card): they share a root port and are PIX.
/// - Device links: a device on a switch runs at the switch's generation, x16; a device on a
///   root port at the generation of its product (GPU model: H100/H200/B200-class 5,
///   V100/P100/T4-class 3, otherwise 4; NIC: >= 400 Gb/s 5, >= 200 Gb/s 4, else 3), x16.
/// - A device's NUMA domain is the one of the top switch above it (its own `numa` when it
///   sits on a root port).
class NodeTopology {
 public:
  NodeTopology() = default;
  // Edge descriptors point into the graph's own edge storage, so a copy (and a move:
  // boost's graph may copy its storage) looks its edges up again in its own graph.
  NodeTopology(const NodeTopology& o);
  NodeTopology& operator=(const NodeTopology& o);
  NodeTopology(NodeTopology&& o) noexcept;
  NodeTopology& operator=(NodeTopology&& o) noexcept;

  [[nodiscard]] const TopoGraph& graph() const { return g_; }
  [[nodiscard]] int vertex_count() const { return static_cast<int>(boost::num_vertices(g_)); }
  [[nodiscard]] int edge_count() const { return static_cast<int>(edges_.size()); }
  [[nodiscard]] const TopoVertex& vertex(int v) const { return g_[static_cast<size_t>(v)]; }
  [[nodiscard]] const TopoEdge& edge(int id) const;
  /// The two vertex indices an edge joins.
  [[nodiscard]] std::pair<int, int> edge_ends(int id) const;
  /// Vertex index of a device; throws std::out_of_range for a bad index.
  [[nodiscard]] int vertex_of(DeviceRef d) const;

  [[nodiscard]] int gpu_count() const { return static_cast<int>(gpu_v_.size()); }
  [[nodiscard]] int nic_count() const { return static_cast<int>(nic_v_.size()); }
  [[nodiscard]] int numa_count() const { return static_cast<int>(numa_v_.size()); }
  [[nodiscard]] bool has_nvswitch() const { return nvswitch_v_ >= 0; }

  /// Path between two devices: class as nvidia-smi reports it, bottleneck bandwidth,
  /// latency and the edges used. GPU pairs joined by NVLink (directly or through the
  /// NVSwitch fabric) take the NVLink path; everything else the PCIe/SMP tree.
  [[nodiscard]] PathInfo path(DeviceRef a, DeviceRef b) const;
  /// NVLinks between two GPUs: the direct bond, or through the NVSwitch fabric the smaller
  /// of the two GPUs' links into it; 0 when none, -1 for a == b.
  [[nodiscard]] int nvlinks_between(int gpu_a, int gpu_b) const;

  [[nodiscard]] int gpu_numa(int gpu) const;
  [[nodiscard]] int nic_numa(int nic) const;
  /// Slurm abstract core ids of the GPU's NUMA domain.
  [[nodiscard]] std::vector<int> gpu_local_cores(int gpu) const;
  /// Slurm abstract core ids of a NUMA domain.
  [[nodiscard]] std::vector<int> numa_cores(int numa) const;
  /// The edge from a NIC to its network port (the NIC's line rate).
  [[nodiscard]] int nic_port_edge(int nic) const;

 private:
  friend NodeTopology build_node_topology(const NodeTemplate&, const LinkModel&);
  int add_vertex(TopoVertex v);
  int add_edge(int a, int b, TopoEdge e);
  [[nodiscard]] PathInfo tree_path(int va, int vb) const;

  TopoGraph g_;
  std::vector<TopoGraph::edge_descriptor> edges_;
  std::vector<int> socket_v_, numa_v_, gpu_v_, nic_v_, nic_port_e_;
  std::vector<int> gpu_nvs_e_;     // GPU -> its edge into the NVSwitch fabric, -1 = none
  int nvswitch_v_ = -1;
};

/// Builds the graph of one node template (indexes in the template must be valid, as the
/// YAML loader guarantees; a bad switch index throws std::out_of_range).
[[nodiscard]] NodeTopology build_node_topology(const NodeTemplate& t, const LinkModel& m = {});

// ---------------------------------------------------------------------------------------
// Cluster (inter-node network) topology
// ---------------------------------------------------------------------------------------

struct NetVertex {
  enum class Kind { kNode, kSwitch } kind = Kind::kNode;
  int index = -1;       // node index, or switch index
  std::string name;
};

struct NetEdge {
  int id = -1;
  double bandwidth_Bps = 0;   // per direction; infinity when the spec leaves it unconstrained
};

using NetGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                       NetVertex, NetEdge>;

struct NetPathInfo {
  int switch_hops = -1;          // switches traversed; 0 = same node; -1 = not connected
  double bandwidth_Bps = 0;      // bottleneck; infinity for the same node, 0 if not connected
  SimTime latency;               // switch_hops x hop_latency
  std::vector<int> edges;        // edge ids, node a to node b
};

/// The inter-node network as a graph of nodes and switches.
/// - fat-tree: leaf switches "leaf0" .. "leaf<L-1>" (switch indexes 0..L-1) of
///   `nodes_per_leaf` consecutive nodes, then one "spine" (index L) above them; node-leaf
///   edges at `link`, leaf-spine edges at nodes_per_leaf x link / oversubscription (the
///   leaf's aggregate uplink).
/// - tree: the switches of the spec, in spec order; node-leaf edges at `link` (unconstrained
///   when absent), switch-parent edges at the child's `uplink` (unconstrained when absent).
/// - none: no switches; every pair of distinct nodes is "not connected" (modelled() false).
class ClusterTopology {
 public:
  ClusterTopology() = default;
  ClusterTopology(const ClusterTopology& o);  // as NodeTopology: edges looked up again
  ClusterTopology& operator=(const ClusterTopology& o);
  ClusterTopology(ClusterTopology&& o) noexcept;
  ClusterTopology& operator=(ClusterTopology&& o) noexcept;

  [[nodiscard]] const NetGraph& graph() const { return g_; }
  [[nodiscard]] bool modelled() const { return kind_ != NetworkSpec::Kind::kNone; }
  [[nodiscard]] int node_count() const { return node_count_; }
  [[nodiscard]] int switch_count() const { return static_cast<int>(switch_v_.size()); }
  [[nodiscard]] const std::string& switch_name(int sw) const;
  [[nodiscard]] int find_switch(const std::string& name) const;
  [[nodiscard]] const NetEdge& edge(int id) const;
  [[nodiscard]] int edge_count() const { return static_cast<int>(edges_.size()); }

  /// The leaf switch a node hangs off, -1 when none.
  [[nodiscard]] int leaf_of(int node) const;
  /// The switches above a node, leaf first, up to the top of its tree.
  [[nodiscard]] std::vector<int> switches_above(int node) const;
  /// Every node below a switch, in node order.
  [[nodiscard]] std::vector<int> nodes_under(int sw) const;
  /// Switches a message from node a to node b crosses: 0 same node, 1 same leaf, 3 through
  /// a spine, ...; -1 when not connected.
  [[nodiscard]] int switch_hops(int node_a, int node_b) const;
  /// Bottleneck bandwidth between two nodes, bytes/s per direction.
  [[nodiscard]] double bandwidth_Bps(int node_a, int node_b) const;
  [[nodiscard]] NetPathInfo path(int node_a, int node_b) const;

 private:
  friend ClusterTopology build_cluster_topology(const Cluster&);
  NetGraph g_;
  std::vector<NetGraph::edge_descriptor> edges_;
  std::vector<int> switch_v_;        // switch index -> vertex
  std::vector<int> switch_parent_;   // switch index -> parent switch, -1 = top
  std::vector<int> leaf_;            // node -> leaf switch, -1 = none
  int node_count_ = 0;
  NetworkSpec::Kind kind_ = NetworkSpec::Kind::kNone;
  SimTime hop_latency_;
};

/// Builds the network graph of a cluster (nodes are vertices 0 .. nodes-1).
[[nodiscard]] ClusterTopology build_cluster_topology(const Cluster& c);

}  // namespace gcsim
