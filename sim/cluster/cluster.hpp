// The cluster description: node templates (sockets, NUMA domains, cores, memory,
// GPUs, PCIe switches, NVLink, NICs), the nodes made from them, partitions and the
// inter-node network. Plain data; loaders fill it, the topology graph reads it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/diagnostics.hpp"
#include "sim/core/hostlist.hpp"
#include "sim/core/time.hpp"

namespace gcsim {

struct GpuSpec {
  std::string gres_type;     // Slurm GRES type, e.g. "a100_80gb"
  std::string model;         // product, e.g. "NVIDIA A100-SXM4-80GB"
  int64_t memory_bytes = 0;
  int numa = 0;              // NUMA domain index within the node (0-based)
  int pcie_switch = -1;      // index into NodeTemplate::pcie_switches, -1 = on the root port
  std::string bus_id;        // PCI bus id when known ("0000:07:00.0")
};

struct NicSpec {
  std::string name;          // e.g. "mlx5_0"
  double bandwidth_bps = 0;  // line rate, bits per second
  int numa = 0;
  int pcie_switch = -1;
  std::string bus_id;
};

struct PcieSwitchSpec {
  std::string name;
  int numa = 0;              // the NUMA domain whose root port it hangs off
  int gen = 4;               // PCIe generation of the uplink
  int width = 16;            // lanes of the uplink
  int parent = -1;           // upstream switch (index into pcie_switches), -1 = root port
  int host_bridge = -1;      // root complex / host bridge id within its NUMA domain, -1 = unknown
  /// Bridge levels the switch shows the OS between its uplink and the devices on it
  /// (added for the topology graph): 1 = one switch, two devices on it are PIX; 2 = an
  /// upstream switch over one internal switch per device, as Broadcom PEX88xxx (Gen4) and
  /// PEX89xxx (Gen5) parts present themselves (DGX A100/H100: devices on it are PXB).
  /// 0 = not known: 2 for gen >= 4, else 1. Importers that write the real bridge tree
  /// (one PcieSwitchSpec per level, linked by `parent`) set 1.
  int levels = 0;
};

enum class NvlinkKind { kNone, kNvswitch, kPairs };

struct NvlinkSpec {
  NvlinkKind kind = NvlinkKind::kNone;
  int links_per_gpu = 0;          // NVSwitch: links from each GPU into the switch fabric
  double link_bandwidth_bps = 0;  // one link, one direction
  struct Pair {
    int a = 0, b = 0, links = 0;
  };
  std::vector<Pair> pairs;        // kPairs: explicit GPU-GPU link counts
};

/// Sizes every cluster reader refuses: Slurm keeps a node's CPU count in a uint16_t
/// (node_info_t::cpus); a cluster has at most hostlist::max_hosts() nodes (a million).
inline constexpr int64_t kMaxNodeCpus = 65535;
inline size_t max_cluster_nodes() { return hostlist::max_hosts(); }

struct NodeTemplate {
  std::string name;
  int boards = 1;
  int sockets = 1;           // per board
  int numa_per_socket = 1;
  int cores_per_numa = 1;
  int threads_per_core = 1;
  int64_t memory_mb = 0;     // RealMemory, MiB
  std::vector<GpuSpec> gpus;
  std::vector<PcieSwitchSpec> pcie_switches;
  NvlinkSpec nvlink;
  std::vector<NicSpec> nics;
  /// OS PU (hwloc physical) index of each abstract CPU (core * threads_per_core + thread),
  /// when imported from a real machine; empty = identity.
  std::vector<int> cpu_os_ids;

  [[nodiscard]] int total_sockets() const { return boards * sockets; }
  [[nodiscard]] int numa_domains() const { return total_sockets() * numa_per_socket; }
  [[nodiscard]] int cores() const { return numa_domains() * cores_per_numa; }
  [[nodiscard]] int cpus() const { return cores() * threads_per_core; }
  [[nodiscard]] int cores_per_socket() const { return numa_per_socket * cores_per_numa; }
  /// Slurm's abstract core numbering: socket-major, NUMA domains consecutive.
  [[nodiscard]] int numa_of_core(int core) const { return core / cores_per_numa; }
  [[nodiscard]] int socket_of_core(int core) const { return core / cores_per_socket(); }
  [[nodiscard]] int socket_of_numa(int numa) const { return numa / numa_per_socket; }
  /// Memory of one NUMA domain (the node's memory split evenly), MiB.
  [[nodiscard]] int64_t memory_mb_per_numa() const { return memory_mb / numa_domains(); }
};

struct Node {
  std::string name;
  int template_index = 0;
  int weight = 1;
  std::vector<std::string> features;
  std::vector<int> partitions;  // indices into Cluster::partitions
};

struct Partition {
  std::string name;
  std::vector<int> nodes;       // indices into Cluster::nodes, in node order
  bool is_default = false;
  SimTime max_time = SimTime::infinite();
  std::optional<SimTime> default_time;
  int priority_tier = 1;
  /// Every other key of a PartitionName line, as written in slurm.conf (OverSubscribe,
  /// DefMemPerCPU, MaxNodes, State, ...), for the policies; empty for YAML clusters.
  std::map<std::string, std::string> params;
};

/// Inter-node network: a two-level fat-tree (leaves of `nodes_per_leaf`) or an
/// explicit switch tree as topology.conf describes it.
struct NetworkSpec {
  enum class Kind { kNone, kFatTree, kTree } kind = Kind::kNone;
  int nodes_per_leaf = 0;          // fat-tree
  double link_bandwidth_bps = 0;   // node-leaf link
  double uplink_bandwidth_bps = 0; // leaf-spine, per leaf, aggregate
  double oversubscription = 1.0;   // leaf down/up ratio
  SimTime hop_latency;
  struct Switch {
    std::string name;
    std::vector<int> nodes;               // leaf: node indices
    std::vector<std::string> children;    // upper level: child switch names
    double uplink_bandwidth_bps = 0;
  };
  std::vector<Switch> switches;           // kTree
};

struct Cluster {
  std::string name;
  std::string source;              // where it was read from (file, or "inferred from X")
  int schema_version = 1;
  std::vector<NodeTemplate> templates;
  std::vector<Node> nodes;
  std::vector<Partition> partitions;
  NetworkSpec network;
  std::optional<int64_t> def_mem_per_cpu_mb;  // cluster-wide DefMemPerCPU
  std::optional<int64_t> def_mem_per_gpu_mb;  // cluster-wide DefMemPerGPU
  /// Cluster-wide slurm.conf keys gcsim keeps for the policies (SchedulerType,
  /// SchedulerParameters, PriorityWeight*, SelectTypeParameters, ...); empty for YAML clusters.
  std::map<std::string, std::string> slurm_params;
  /// Where each of them was written (file:line:col of the value), for diagnostics.
  std::map<std::string, SourceLoc> slurm_param_locs;
  /// The value of slurm.conf key `key` (any case), std::nullopt when absent.
  [[nodiscard]] std::optional<std::string> slurm_param(const std::string& key) const;
  /// The location of slurm.conf key `key` (any case), else the file as a whole.
  [[nodiscard]] SourceLoc slurm_param_loc(const std::string& key) const;

  [[nodiscard]] const NodeTemplate& tmpl(int node) const { return templates[nodes[node].template_index]; }
  /// Index of the default partition, or the first one, or -1 when there are none.
  [[nodiscard]] int default_partition() const;
  [[nodiscard]] int find_partition(const std::string& name) const;
  [[nodiscard]] int find_node(const std::string& name) const;
  [[nodiscard]] int64_t total_cores() const;
  [[nodiscard]] int64_t total_cpus() const;
  [[nodiscard]] int64_t total_gpus() const;
  /// Every GRES type that some node has.
  [[nodiscard]] std::vector<std::string> gpu_types() const;
  /// Rebuilds the name index; loaders call it once nodes are final.
  void index();

 private:
  std::map<std::string, int> node_index_;
};

/// `nodes` copies of one node template, named node[001-N] (or `prefix`[...]), in one
/// default partition "batch": what `--cluster X.xml --nodes N` builds from an imported node.
[[nodiscard]] Cluster make_homogeneous_cluster(const std::string& name, NodeTemplate node, int nodes,
                                               const std::string& source, const std::string& prefix = "node");

/// A homogeneous CPU-only cluster, as `gcsim run --trace X.swf` infers it from the
/// SWF header (MaxNodes nodes of MaxProcs/MaxNodes cores, memory not modelled).
[[nodiscard]] Cluster make_cpu_cluster(const std::string& name, int nodes, int cores_per_node,
                                       const std::string& source);

}  // namespace gcsim
