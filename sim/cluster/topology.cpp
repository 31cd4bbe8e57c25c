// Builds the node and cluster topology graphs and answers path queries on them
// (breadth-first search with a predecessor-edge map over the PCIe/SMP tree and the
// switch tree; NVLink bonds are direct GPU-GPU or GPU-NVSwitch adjacency).
#include "sim/cluster/topology.hpp"

#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/filtered_graph.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

namespace gcsim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double lane_rate_Bps(int gen) {
  switch (gen) {
    case 1: return 0.25e9;
    case 2: return 0.5e9;
    case 3: return 0.985e9;
    case 4: return 1.969e9;
    case 5: return 3.938e9;
    case 6: return 7.563e9;
    default: return gen > 6 ? 7.563e9 * (1 << (gen - 6)) : 0.985e9;
  }
}

bool contains(const std::string& s, std::string_view what) { return s.find(what) != std::string::npos; }

/// PCIe generation of a GPU on a root port, from its product name.
int gpu_pcie_gen(const GpuSpec& g) { return gpu_pcie_generation(g.model.empty() ? g.gres_type : g.model); }

}  // namespace

int gpu_pcie_generation(const std::string& m) {
  for (std::string_view k : {"B200", "B100", "B300", "H100", "H200", "H800", "H20", "GH200", "b200", "h100", "h200"})
    if (contains(m, k)) return 5;
  // Volta, Pascal, Turing and Kepler parts are Gen3, data-center and GeForce alike
  // (RTX 20xx, TITAN RTX/V, GTX 10xx).
  for (std::string_view k : {"V100", "P100", "P40", "T4", "K80", "v100", "p100", "t4", "RTX 20", "2080", "2070", "2060",
                             "TITAN RTX", "TITAN V", "GTX 10", "1080"})
    if (contains(m, k)) return 3;
  return 4;
}

namespace {

int nic_pcie_gen(const NicSpec& n) {
  if (n.bandwidth_bps >= 400e9) return 5;
  if (n.bandwidth_bps >= 200e9) return 4;
  return 3;
}

/// "0000:07:00.1" -> "0000:07:00"; "" stays "".
std::string without_function(const std::string& bus_id) {
  auto dot = bus_id.rfind('.');
  return dot == std::string::npos ? bus_id : bus_id.substr(0, dot);
}

/// Vertex sequence and edge descriptors from `from` to `to` in g (empty if unreachable).
template <class Graph>
bool bfs_path(const Graph& g, size_t n_vertices, size_t from, size_t to,
              std::vector<size_t>* vertices,
              std::vector<typename boost::graph_traits<Graph>::edge_descriptor>* edges) {
  using Edge = typename boost::graph_traits<Graph>::edge_descriptor;
  std::vector<Edge> pred(n_vertices);
  std::vector<bool> reached(n_vertices, false);
  std::vector<boost::default_color_type> color(n_vertices, boost::white_color);
  struct Vis : boost::default_bfs_visitor {
    std::vector<Edge>* pred;
    std::vector<bool>* reached;
    void tree_edge(Edge e, const Graph& gr) const {
      auto t = boost::target(e, gr);
      (*pred)[t] = e;
      (*reached)[t] = true;
    }
  } vis;
  vis.pred = &pred;
  vis.reached = &reached;
  auto cmap = boost::make_iterator_property_map(color.begin(), boost::get(boost::vertex_index, g));
  boost::breadth_first_search(g, from, boost::visitor(vis).color_map(cmap));
  vertices->clear();
  edges->clear();
  if (from != to && !reached[to]) return false;
  size_t v = to;
  vertices->push_back(v);
  while (v != from) {
    Edge e = pred[v];
    edges->push_back(e);
    v = boost::source(e, g) == v ? boost::target(e, g) : boost::source(e, g);
    vertices->push_back(v);
  }
  std::reverse(vertices->begin(), vertices->end());
  std::reverse(edges->begin(), edges->end());
  return true;
}

}  // namespace

std::string_view path_class_name(PathClass c) {
  switch (c) {
    case PathClass::kSelf: return "X";
    case PathClass::kNvlink: return "NV";
    case PathClass::kPix: return "PIX";
    case PathClass::kPxb: return "PXB";
    case PathClass::kPhb: return "PHB";
    case PathClass::kNode: return "NODE";
    case PathClass::kSys: return "SYS";
  }
  return "?";
}

std::string PathInfo::label() const {
  if (cls == PathClass::kNvlink) return "NV" + std::to_string(nvlinks);
  return std::string(path_class_name(cls));
}

double pcie_bandwidth_Bps(int gen, int width) { return lane_rate_Bps(gen) * std::max(width, 1); }

// ---------------------------------------------------------------------------------------

int NodeTopology::add_vertex(TopoVertex v) { return static_cast<int>(boost::add_vertex(std::move(v), g_)); }

int NodeTopology::add_edge(int a, int b, TopoEdge e) {
  e.id = static_cast<int>(edges_.size());
  auto [d, ok] = boost::add_edge(static_cast<size_t>(a), static_cast<size_t>(b), e, g_);
  (void)ok;
  edges_.push_back(d);
  return e.id;
}

namespace {

// The descriptor of every edge, by its id, found in `g` itself.
template <typename Graph>
std::vector<typename Graph::edge_descriptor> edges_by_id(const Graph& g, size_t count) {
  std::vector<typename Graph::edge_descriptor> out(count);
  for (auto [it, end] = boost::edges(g); it != end; ++it) out.at(static_cast<size_t>(g[*it].id)) = *it;
  return out;
}

}  // namespace

NodeTopology::NodeTopology(const NodeTopology& o)
    : g_(o.g_),
      edges_(edges_by_id(g_, o.edges_.size())),
      socket_v_(o.socket_v_),
      numa_v_(o.numa_v_),
      gpu_v_(o.gpu_v_),
      nic_v_(o.nic_v_),
      nic_port_e_(o.nic_port_e_),
      gpu_nvs_e_(o.gpu_nvs_e_),
      nvswitch_v_(o.nvswitch_v_) {}

NodeTopology& NodeTopology::operator=(const NodeTopology& o) {
  if (this != &o) {
    NodeTopology tmp(o);
    *this = std::move(tmp);
  }
  return *this;
}

NodeTopology::NodeTopology(NodeTopology&& o) noexcept { *this = std::move(o); }

NodeTopology& NodeTopology::operator=(NodeTopology&& o) noexcept {
  if (this == &o) return *this;
  const size_t n = o.edges_.size();
  g_ = std::move(o.g_);
  edges_ = edges_by_id(g_, n);
  o.edges_.clear();
  socket_v_ = std::move(o.socket_v_);
  numa_v_ = std::move(o.numa_v_);
  gpu_v_ = std::move(o.gpu_v_);
  nic_v_ = std::move(o.nic_v_);
  nic_port_e_ = std::move(o.nic_port_e_);
  gpu_nvs_e_ = std::move(o.gpu_nvs_e_);
  nvswitch_v_ = o.nvswitch_v_;
  return *this;
}

const TopoEdge& NodeTopology::edge(int id) const { return g_[edges_.at(static_cast<size_t>(id))]; }

std::pair<int, int> NodeTopology::edge_ends(int id) const {
  auto d = edges_.at(static_cast<size_t>(id));
  return {static_cast<int>(boost::source(d, g_)), static_cast<int>(boost::target(d, g_))};
}

int NodeTopology::vertex_of(DeviceRef d) const {
  switch (d.kind) {
    case DeviceRef::Kind::kGpu: return gpu_v_.at(static_cast<size_t>(d.index));
    case DeviceRef::Kind::kNic: return nic_v_.at(static_cast<size_t>(d.index));
    case DeviceRef::Kind::kNuma: return numa_v_.at(static_cast<size_t>(d.index));
  }
  throw std::out_of_range("bad device kind");
}

int NodeTopology::gpu_numa(int gpu) const { return vertex(gpu_v_.at(static_cast<size_t>(gpu))).numa; }
int NodeTopology::nic_numa(int nic) const { return vertex(nic_v_.at(static_cast<size_t>(nic))).numa; }

std::vector<int> NodeTopology::numa_cores(int numa) const {
  const TopoVertex& v = vertex(numa_v_.at(static_cast<size_t>(numa)));
  std::vector<int> out(static_cast<size_t>(v.core_count));
  for (int i = 0; i < v.core_count; ++i) out[static_cast<size_t>(i)] = v.first_core + i;
  return out;
}

std::vector<int> NodeTopology::gpu_local_cores(int gpu) const { return numa_cores(gpu_numa(gpu)); }

int NodeTopology::nic_port_edge(int nic) const { return nic_port_e_.at(static_cast<size_t>(nic)); }

int NodeTopology::nvlinks_between(int a, int b) const {
  if (a == b) return -1;
  const size_t va = static_cast<size_t>(gpu_v_.at(static_cast<size_t>(a)));
  const size_t vb = static_cast<size_t>(gpu_v_.at(static_cast<size_t>(b)));
  auto [e, found] = boost::edge(va, vb, g_);
  if (found && g_[e].kind == TopoEdgeKind::kNvlink) return g_[e].nvlinks;
  const int ea = gpu_nvs_e_[static_cast<size_t>(a)], eb = gpu_nvs_e_[static_cast<size_t>(b)];
  if (ea >= 0 && eb >= 0) return std::min(edge(ea).nvlinks, edge(eb).nvlinks);
  return 0;
}

PathInfo NodeTopology::tree_path(int va, int vb) const {
  // The PCIe/SMP tree: every edge but NVLink and NIC ports.
  struct NotNvlink {
    const TopoGraph* g = nullptr;
    bool operator()(const TopoGraph::edge_descriptor& e) const {
      auto k = (*g)[e].kind;
      return k != TopoEdgeKind::kNvlink && k != TopoEdgeKind::kNicPort;
    }
  };
  boost::filtered_graph<TopoGraph, NotNvlink> tree(g_, NotNvlink{&g_});
  std::vector<size_t> verts;
  std::vector<TopoGraph::edge_descriptor> es;
  PathInfo p;
  if (!bfs_path(tree, boost::num_vertices(g_), static_cast<size_t>(va), static_cast<size_t>(vb), &verts, &es)) {
    p.cls = PathClass::kSys;
    p.bandwidth_Bps = 0;
    return p;
  }
  p.bandwidth_Bps = kInf;
  for (const auto& e : es) {
    p.edges.push_back(g_[e].id);
    p.bandwidth_Bps = std::min(p.bandwidth_Bps, g_[e].bandwidth_Bps);
    p.latency_ns += g_[e].latency_ns;
  }
  // Classify as nvidia-smi does: SYS when the path touches two NUMA domains (or a
  // socket), NODE when it passes through one NUMA domain between two host bridges, PHB
  // when it crosses a host bridge, PXB for several bridges below it, PIX for at most one.
  int numas = 0, sockets = 0, host_bridges = 0, bridges = 0;
  for (size_t i = 0; i < verts.size(); ++i) {
    const bool inner = i != 0 && i + 1 != verts.size();
    switch (g_[verts[i]].kind) {
      case TopoVertexKind::kNuma: ++numas; break;
      case TopoVertexKind::kSocket: ++sockets; break;
      case TopoVertexKind::kHostBridge: ++host_bridges; break;
      case TopoVertexKind::kRootPort:
      case TopoVertexKind::kPcieSwitch:
        if (inner) ++bridges;
        break;
      default: break;
    }
  }
  if (numas >= 2 || sockets > 0) p.cls = PathClass::kSys;
  else if (numas == 1 && host_bridges >= 2) p.cls = PathClass::kNode;
  else if (host_bridges >= 1 || numas == 1) p.cls = PathClass::kPhb;
  else if (bridges <= 1) p.cls = PathClass::kPix;
  else p.cls = PathClass::kPxb;
  return p;
}

PathInfo NodeTopology::path(DeviceRef a, DeviceRef b) const {
  const int va = vertex_of(a), vb = vertex_of(b);
  if (va == vb) {
    PathInfo p;
    p.cls = PathClass::kSelf;
    p.bandwidth_Bps = kInf;
    return p;
  }
  if (a.kind == DeviceRef::Kind::kGpu && b.kind == DeviceRef::Kind::kGpu) {
    auto [e, found] = boost::edge(static_cast<size_t>(va), static_cast<size_t>(vb), g_);
    if (found && g_[e].kind == TopoEdgeKind::kNvlink) {
      PathInfo p;
      p.cls = PathClass::kNvlink;
      p.nvlinks = g_[e].nvlinks;
      p.bandwidth_Bps = g_[e].bandwidth_Bps;
      p.latency_ns = g_[e].latency_ns;
      p.edges = {g_[e].id};
      return p;
    }
    const int ea = gpu_nvs_e_[static_cast<size_t>(a.index)], eb = gpu_nvs_e_[static_cast<size_t>(b.index)];
    if (ea >= 0 && eb >= 0) {
      PathInfo p;
      p.cls = PathClass::kNvlink;
      p.nvlinks = std::min(edge(ea).nvlinks, edge(eb).nvlinks);
      p.bandwidth_Bps = std::min(edge(ea).bandwidth_Bps, edge(eb).bandwidth_Bps);
      p.latency_ns = edge(ea).latency_ns + edge(eb).latency_ns;
      p.edges = {ea, eb};
      return p;
    }
  }
  return tree_path(va, vb);
}

NodeTopology build_node_topology(const NodeTemplate& t, const LinkModel& m) {
  NodeTopology topo;
  const int sockets = t.total_sockets();
  const int numas = t.numa_domains();

  auto pcie_edge = [&](int gen, int width) {
    TopoEdge e;
    e.kind = TopoEdgeKind::kPcie;
    e.pcie_gen = gen;
    e.pcie_width = width;
    e.bandwidth_Bps = pcie_bandwidth_Bps(gen, width) * m.pcie_efficiency;
    e.latency_ns = m.pcie_latency_ns;
    return e;
  };
  auto local_edge = [&]() {
    TopoEdge e;
    e.kind = TopoEdgeKind::kHostBridge;
    e.bandwidth_Bps = m.local_bandwidth_Bps;
    e.latency_ns = m.host_bridge_latency_ns;
    return e;
  };

  // CPU side: sockets, a full mesh of SMP links between them, NUMA domains.
  for (int s = 0; s < sockets; ++s)
    topo.socket_v_.push_back(topo.add_vertex({TopoVertexKind::kSocket, s, "socket" + std::to_string(s)}));
  for (int a = 0; a < sockets; ++a)
    for (int b = a + 1; b < sockets; ++b) {
      TopoEdge e;
      e.kind = TopoEdgeKind::kSmp;
      e.bandwidth_Bps = m.smp_bandwidth_Bps;
      e.latency_ns = m.smp_latency_ns;
      topo.add_edge(topo.socket_v_[static_cast<size_t>(a)], topo.socket_v_[static_cast<size_t>(b)], e);
    }
  for (int n = 0; n < numas; ++n) {
    TopoVertex v{TopoVertexKind::kNuma, n, "numa" + std::to_string(n), n};
    v.first_core = n * t.cores_per_numa;
    v.core_count = t.cores_per_numa;
    v.memory_mb = t.memory_mb_per_numa();
    topo.numa_v_.push_back(topo.add_vertex(v));
    TopoEdge e;
    e.kind = TopoEdgeKind::kNumaLocal;
    e.bandwidth_Bps = m.numa_fabric_bandwidth_Bps;
    e.latency_ns = m.numa_fabric_latency_ns;
    topo.add_edge(topo.numa_v_.back(), topo.socket_v_.at(static_cast<size_t>(t.socket_of_numa(n))), e);
  }

  // Host bridges: shared by known id within a NUMA domain, otherwise one per attachment.
  std::map<std::pair<int, int>, int> known_hb;
  int hb_count = 0;
  auto host_bridge = [&](int numa, int id) {
    if (id >= 0) {
      auto it = known_hb.find({numa, id});
      if (it != known_hb.end()) return it->second;
    }
    int v = topo.add_vertex({TopoVertexKind::kHostBridge, hb_count, "hb" + std::to_string(hb_count), numa});
    ++hb_count;
    topo.add_edge(v, topo.numa_v_.at(static_cast<size_t>(numa)), local_edge());
    if (id >= 0) known_hb[{numa, id}] = v;
    return v;
  };
  int rp_count = 0;
  auto root_port = [&](int numa, int hb_id) {
    int hb = host_bridge(numa, hb_id);
    int v = topo.add_vertex({TopoVertexKind::kRootPort, rp_count, "rp" + std::to_string(rp_count), numa});
    ++rp_count;
    topo.add_edge(v, hb, local_edge());
    return v;
  };

  // Switches, parents before children (the parent index may come later in the list).
  const size_t nsw = t.pcie_switches.size();
  std::vector<int> sw_v(nsw, -1), sw_numa(nsw, -1), sw_levels(nsw, 1);
  for (size_t i = 0; i < nsw; ++i) {
    const auto& s = t.pcie_switches[i];
    sw_levels[i] = s.levels > 0 ? s.levels : (s.gen >= 4 ? 2 : 1);
  }
  auto top_numa = [&](size_t i) {
    size_t guard = 0;
    while (t.pcie_switches[i].parent >= 0 && guard++ < nsw) i = static_cast<size_t>(t.pcie_switches[i].parent);
    return t.pcie_switches[i].numa;
  };
  std::vector<int> internal_count(nsw, 0);
  // Attaches vertex v below switch i: through levels-1 internal switch vertices of its own.
  auto attach_below = [&](size_t i, int v, int numa) {
    const auto& s = t.pcie_switches[i];
    int up = sw_v[i];
    for (int l = 1; l < sw_levels[i]; ++l) {
      int k = internal_count[i]++;
      int iv = topo.add_vertex({TopoVertexKind::kPcieSwitch, static_cast<int>(i),
                                s.name + "." + std::to_string(k), numa});
      topo.add_edge(iv, up, pcie_edge(s.gen, 16));
      up = iv;
    }
    topo.add_edge(v, up, pcie_edge(s.gen, 16));
  };
  std::vector<bool> placed(nsw, false);
  for (size_t round = 0; round <= nsw; ++round) {
    for (size_t i = 0; i < nsw; ++i) {
      const auto& s = t.pcie_switches[i];
      if (placed[i]) continue;
      if (s.parent >= 0 && !placed.at(static_cast<size_t>(s.parent))) continue;
      sw_numa[i] = top_numa(i);
      sw_v[i] = topo.add_vertex({TopoVertexKind::kPcieSwitch, static_cast<int>(i), s.name, sw_numa[i]});
      if (s.parent >= 0) {
        // The uplink of a child switch runs at the child's own gen x width.
        int up = sw_v[static_cast<size_t>(s.parent)];
        topo.add_edge(sw_v[i], up, pcie_edge(s.gen, s.width));
      } else {
        topo.add_edge(sw_v[i], root_port(s.numa, s.host_bridge), pcie_edge(s.gen, s.width));
      }
      placed[i] = true;
    }
  }
  for (size_t i = 0; i < nsw; ++i)
    if (!placed[i]) throw std::out_of_range("pcie switch parent cycle at " + t.pcie_switches[i].name);

  // GPUs.
  for (size_t gi = 0; gi < t.gpus.size(); ++gi) {
    const auto& g = t.gpus[gi];
    const bool on_switch = g.pcie_switch >= 0;
    const size_t si = static_cast<size_t>(g.pcie_switch);
    const int numa = on_switch ? sw_numa.at(si) : g.numa;
    int v = topo.add_vertex({TopoVertexKind::kGpu, static_cast<int>(gi), "gpu" + std::to_string(gi), numa});
    topo.gpu_v_.push_back(v);
    if (on_switch) attach_below(si, v, numa);
    else topo.add_edge(v, root_port(numa, -1), pcie_edge(gpu_pcie_gen(g), 16));
  }

  // NICs; ports of one adapter on a root port share it.
  std::map<std::pair<int, std::string>, int> adapter_rp;
  for (size_t ni = 0; ni < t.nics.size(); ++ni) {
    const auto& n = t.nics[ni];
    const bool on_switch = n.pcie_switch >= 0;
    const size_t si = static_cast<size_t>(n.pcie_switch);
    const int numa = on_switch ? sw_numa.at(si) : n.numa;
    int v = topo.add_vertex({TopoVertexKind::kNic, static_cast<int>(ni), n.name, numa});
    topo.nic_v_.push_back(v);
    if (on_switch) {
      attach_below(si, v, numa);
    } else {
      auto key = std::make_pair(numa, without_function(n.bus_id));
      auto it = adapter_rp.find(key);
      int rp = it != adapter_rp.end() ? it->second : (adapter_rp[key] = root_port(numa, -1));
      topo.add_edge(v, rp, pcie_edge(nic_pcie_gen(n), 16));
    }
    int port = topo.add_vertex({TopoVertexKind::kNetPort, static_cast<int>(ni), n.name + ":1", numa});
    TopoEdge e;
    e.kind = TopoEdgeKind::kNicPort;
    e.bandwidth_Bps = n.bandwidth_bps / 8;
    e.latency_ns = m.nic_port_latency_ns;
    topo.nic_port_e_.push_back(topo.add_edge(v, port, e));
  }

  // NVLink.
  topo.gpu_nvs_e_.assign(t.gpus.size(), -1);
  const double link_Bps = t.nvlink.link_bandwidth_bps / 8;
  if (t.nvlink.kind == NvlinkKind::kNvswitch && !t.gpus.empty()) {
    topo.nvswitch_v_ = topo.add_vertex({TopoVertexKind::kNvswitch, 0, "nvswitch", -1});
    for (size_t gi = 0; gi < t.gpus.size(); ++gi) {
      TopoEdge e;
      e.kind = TopoEdgeKind::kNvlink;
      e.nvlinks = t.nvlink.links_per_gpu;
      e.bandwidth_Bps = link_Bps * t.nvlink.links_per_gpu;
      e.latency_ns = m.nvlink_latency_ns;
      topo.gpu_nvs_e_[gi] = topo.add_edge(topo.gpu_v_[gi], topo.nvswitch_v_, e);
    }
  } else if (t.nvlink.kind == NvlinkKind::kPairs) {
    for (const auto& p : t.nvlink.pairs) {
      TopoEdge e;
      e.kind = TopoEdgeKind::kNvlink;
      e.nvlinks = p.links;
      e.bandwidth_Bps = link_Bps * p.links;
      e.latency_ns = m.nvlink_latency_ns;
      topo.add_edge(topo.gpu_v_.at(static_cast<size_t>(p.a)), topo.gpu_v_.at(static_cast<size_t>(p.b)), e);
    }
  }
  return topo;
}

// ---------------------------------------------------------------------------------------

const std::string& ClusterTopology::switch_name(int sw) const {
  return g_[static_cast<size_t>(switch_v_.at(static_cast<size_t>(sw)))].name;
}

int ClusterTopology::find_switch(const std::string& name) const {
  for (size_t i = 0; i < switch_v_.size(); ++i)
    if (g_[static_cast<size_t>(switch_v_[i])].name == name) return static_cast<int>(i);
  return -1;
}

ClusterTopology::ClusterTopology(const ClusterTopology& o)
    : g_(o.g_),
      edges_(edges_by_id(g_, o.edges_.size())),
      switch_v_(o.switch_v_),
      switch_parent_(o.switch_parent_),
      leaf_(o.leaf_),
      node_count_(o.node_count_),
      kind_(o.kind_),
      hop_latency_(o.hop_latency_) {}

ClusterTopology& ClusterTopology::operator=(const ClusterTopology& o) {
  if (this != &o) {
    ClusterTopology tmp(o);
    *this = std::move(tmp);
  }
  return *this;
}

ClusterTopology::ClusterTopology(ClusterTopology&& o) noexcept { *this = std::move(o); }

ClusterTopology& ClusterTopology::operator=(ClusterTopology&& o) noexcept {
  if (this == &o) return *this;
  const size_t n = o.edges_.size();
  g_ = std::move(o.g_);
  edges_ = edges_by_id(g_, n);
  o.edges_.clear();
  switch_v_ = std::move(o.switch_v_);
  switch_parent_ = std::move(o.switch_parent_);
  leaf_ = std::move(o.leaf_);
  node_count_ = o.node_count_;
  kind_ = o.kind_;
  hop_latency_ = o.hop_latency_;
  return *this;
}

const NetEdge& ClusterTopology::edge(int id) const { return g_[edges_.at(static_cast<size_t>(id))]; }

int ClusterTopology::leaf_of(int node) const { return leaf_.at(static_cast<size_t>(node)); }

std::vector<int> ClusterTopology::switches_above(int node) const {
  std::vector<int> out;
  int s = leaf_of(node);
  while (s >= 0 && out.size() <= switch_v_.size()) {
    out.push_back(s);
    s = switch_parent_[static_cast<size_t>(s)];
  }
  return out;
}

std::vector<int> ClusterTopology::nodes_under(int sw) const {
  std::vector<int> out;
  for (int n = 0; n < node_count_; ++n) {
    auto up = switches_above(n);
    if (std::find(up.begin(), up.end(), sw) != up.end()) out.push_back(n);
  }
  return out;
}

NetPathInfo ClusterTopology::path(int a, int b) const {
  if (a < 0 || b < 0 || a >= node_count_ || b >= node_count_) throw std::out_of_range("node index");
  NetPathInfo p;
  if (a == b) {
    p.switch_hops = 0;
    p.bandwidth_Bps = kInf;
    return p;
  }
  std::vector<size_t> verts;
  std::vector<NetGraph::edge_descriptor> es;
  if (!bfs_path(g_, boost::num_vertices(g_), static_cast<size_t>(a), static_cast<size_t>(b), &verts, &es))
    return p;
  p.switch_hops = 0;
  for (size_t v : verts)
    if (g_[v].kind == NetVertex::Kind::kSwitch) ++p.switch_hops;
  p.bandwidth_Bps = kInf;
  for (const auto& e : es) {
    p.edges.push_back(g_[e].id);
    p.bandwidth_Bps = std::min(p.bandwidth_Bps, g_[e].bandwidth_Bps);
  }
  p.latency = SimTime::us(hop_latency_.count_us() * p.switch_hops);
  return p;
}

int ClusterTopology::switch_hops(int a, int b) const { return path(a, b).switch_hops; }
double ClusterTopology::bandwidth_Bps(int a, int b) const { return path(a, b).bandwidth_Bps; }

ClusterTopology build_cluster_topology(const Cluster& c) {
  ClusterTopology topo;
  const NetworkSpec& net = c.network;
  topo.kind_ = net.kind;
  topo.hop_latency_ = net.hop_latency;
  topo.node_count_ = static_cast<int>(c.nodes.size());
  topo.leaf_.assign(c.nodes.size(), -1);
  for (size_t n = 0; n < c.nodes.size(); ++n)
    boost::add_vertex(NetVertex{NetVertex::Kind::kNode, static_cast<int>(n), c.nodes[n].name}, topo.g_);

  auto add_switch = [&](const std::string& name) {
    int idx = static_cast<int>(topo.switch_v_.size());
    topo.switch_v_.push_back(static_cast<int>(boost::add_vertex(NetVertex{NetVertex::Kind::kSwitch, idx, name}, topo.g_)));
    topo.switch_parent_.push_back(-1);
    return idx;
  };
  auto link = [&](int va, int vb, double bw) {
    NetEdge e;
    e.id = static_cast<int>(topo.edges_.size());
    e.bandwidth_Bps = bw > 0 ? bw : kInf;
    topo.edges_.push_back(boost::add_edge(static_cast<size_t>(va), static_cast<size_t>(vb), e, topo.g_).first);
  };
  const double node_link = net.link_bandwidth_bps / 8;

  if (net.kind == NetworkSpec::Kind::kFatTree && net.nodes_per_leaf > 0 && !c.nodes.empty()) {
    const int per = net.nodes_per_leaf;
    const int leaves = (topo.node_count_ + per - 1) / per;
    for (int l = 0; l < leaves; ++l) add_switch("leaf" + std::to_string(l));
    const int spine = add_switch("spine");
    const double oversub = net.oversubscription > 0 ? net.oversubscription : 1.0;
    const double uplink = net.uplink_bandwidth_bps > 0 ? net.uplink_bandwidth_bps / 8
                                                        : per * node_link / oversub;
    for (int l = 0; l < leaves; ++l) {
      topo.switch_parent_[static_cast<size_t>(l)] = spine;
      link(topo.switch_v_[static_cast<size_t>(l)], topo.switch_v_[static_cast<size_t>(spine)], uplink);
    }
    for (int n = 0; n < topo.node_count_; ++n) {
      topo.leaf_[static_cast<size_t>(n)] = n / per;
      link(n, topo.switch_v_[static_cast<size_t>(n / per)], node_link);
    }
  } else if (net.kind == NetworkSpec::Kind::kTree) {
    for (const auto& s : net.switches) add_switch(s.name);
    for (size_t i = 0; i < net.switches.size(); ++i) {
      const auto& s = net.switches[i];
      for (int n : s.nodes) {
        if (n < 0 || n >= topo.node_count_) continue;
        topo.leaf_[static_cast<size_t>(n)] = static_cast<int>(i);
        link(n, topo.switch_v_[i], node_link);
      }
      for (const auto& child : s.children) {
        int ci = topo.find_switch(child);
        if (ci < 0) continue;
        topo.switch_parent_[static_cast<size_t>(ci)] = static_cast<int>(i);
        link(topo.switch_v_[static_cast<size_t>(ci)], topo.switch_v_[i],
             net.switches[static_cast<size_t>(ci)].uplink_bandwidth_bps / 8);
      }
    }
  }
  return topo;
}

}  // namespace gcsim
