// LinkRegistry (directed link ids over every node graph and the network graph, with the
// GPU-GPU and GPU-NIC routes of each node template computed once), the Ring and pairwise
// flow builders, and ContentionSolver: progressive filling on a compact copy of the touched
// components, with a lazy min-heap of link saturation levels.
#include "models/network/contention.hpp"

#include <boost/graph/adjacency_list.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <stdexcept>

namespace gcsim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

const char* dir_name(LinkDir d) { return d == LinkDir::kUp ? "up" : "down"; }

}  // namespace

// ---------------------------------------------------------------------------------------
// LinkRegistry
// ---------------------------------------------------------------------------------------

LinkRegistry::LinkRegistry(const Cluster& cluster, const LinkModel& model)
    : net_(new ClusterTopology(build_cluster_topology(cluster))) {
  templates_.reserve(cluster.templates.size());
  for (const NodeTemplate& t : cluster.templates) {
    TemplateData td;
    td.topo.reset(new NodeTopology(build_node_topology(t, model)));
    const NodeTopology& topo = *td.topo;
    const int E = topo.edge_count(), V = topo.vertex_count();
    // GPUs and NICs on the device side (the first end) of every PCIe/SMP-tree edge.
    auto in_tree = [&](int e) {
      const TopoEdgeKind k = topo.edge(e).kind;
      return k != TopoEdgeKind::kNvlink && k != TopoEdgeKind::kNicPort;
    };
    std::vector<std::vector<std::pair<int, int>>> adj(static_cast<size_t>(V));  // (edge, other end)
    for (int e = 0; e < E; ++e)
      if (in_tree(e)) {
        auto [x, y] = topo.edge_ends(e);
        adj[static_cast<size_t>(x)].push_back({e, y});
        adj[static_cast<size_t>(y)].push_back({e, x});
      }
    std::vector<int> own_gpu(static_cast<size_t>(E), -1), own_nic(static_cast<size_t>(E), -1);
    for (int e = 0; e < E; ++e) {
      if (!in_tree(e)) continue;
      std::vector<char> seen(static_cast<size_t>(V), 0);
      std::vector<int> stack = {topo.edge_ends(e).first};
      seen[static_cast<size_t>(stack[0])] = 1;
      int gpus = 0, nics = 0, gpu = -1, nic = -1;
      while (!stack.empty()) {
        const int v = stack.back();
        stack.pop_back();
        const TopoVertex& tv = topo.vertex(v);
        if (tv.kind == TopoVertexKind::kGpu) ++gpus, gpu = tv.index;
        if (tv.kind == TopoVertexKind::kNic) ++nics, nic = tv.index;
        for (auto [e2, w] : adj[static_cast<size_t>(v)])
          if (e2 != e && !seen[static_cast<size_t>(w)]) {
            seen[static_cast<size_t>(w)] = 1;
            stack.push_back(w);
          }
      }
      if (gpus == 1 && nics == 0) own_gpu[static_cast<size_t>(e)] = gpu;
      if (nics == 1 && gpus == 0) own_nic[static_cast<size_t>(e)] = nic;
    }
    td.shared_index.assign(static_cast<size_t>(E), -1);
    td.nic_own.assign(static_cast<size_t>(E), 0);
    for (int e = 0; e < E; ++e) {
      const TopoEdge& ed = topo.edge(e);
      if (ed.kind == TopoEdgeKind::kNvlink || own_gpu[static_cast<size_t>(e)] >= 0) continue;
      if (own_nic[static_cast<size_t>(e)] >= 0) {
        td.nic_own[static_cast<size_t>(e)] = 1;
        continue;
      }
      double cap = ed.bandwidth_Bps;
      if (ed.kind == TopoEdgeKind::kNicPort) {
        const int nic = topo.vertex(topo.edge_ends(e).first).index;
        for (int e2 = 0; e2 < E; ++e2)
          if (own_nic[static_cast<size_t>(e2)] == nic) cap = std::min(cap, topo.edge(e2).bandwidth_Bps);
      }
      td.shared_index[static_cast<size_t>(e)] = td.shared_count++;
      td.shared_edges.push_back(e);
      td.shared_cap.push_back(cap);
    }
    // A path as directed edges, walking its vertices from v.
    auto directed = [&](int v, const std::vector<int>& edges) {
      std::vector<DirEdge> out;
      out.reserve(edges.size());
      for (int e : edges) {
        auto [x, y] = topo.edge_ends(e);
        if (x == v) {
          out.push_back(2 * e + static_cast<int>(LinkDir::kUp));
          v = y;
        } else {
          out.push_back(2 * e + static_cast<int>(LinkDir::kDown));
          v = x;
        }
      }
      return out;
    };
    const int G = topo.gpu_count(), K = topo.nic_count();
    td.gpu_gpu.resize(static_cast<size_t>(G) * static_cast<size_t>(G));
    for (int a = 0; a < G; ++a)
      for (int b = 0; b < G; ++b)
        if (a != b)
          td.gpu_gpu[static_cast<size_t>(a * G + b)] =
              directed(topo.vertex_of(DeviceRef::gpu(a)), topo.path(DeviceRef::gpu(a), DeviceRef::gpu(b)).edges);
    td.gpu_out.resize(static_cast<size_t>(G) * static_cast<size_t>(K));
    std::vector<std::vector<int>> candidates(static_cast<size_t>(G));
    for (int g = 0; g < G; ++g) {
      PathClass best_cls = PathClass::kSys;
      double best_bw = -1;
      for (int k = 0; k < K; ++k) {
        const PathInfo p = topo.path(DeviceRef::gpu(g), DeviceRef::nic(k));
        std::vector<int> edges = p.edges;
        const int port = topo.nic_port_edge(k);
        edges.push_back(port);
        td.gpu_out[static_cast<size_t>(g * K + k)] = directed(topo.vertex_of(DeviceRef::gpu(g)), edges);
        const double bw = std::min(p.bandwidth_Bps, topo.edge(port).bandwidth_Bps);
        auto& cand = candidates[static_cast<size_t>(g)];
        if (cand.empty() || p.cls < best_cls || (p.cls == best_cls && bw > best_bw)) {
          cand = {k};
          best_cls = p.cls;
          best_bw = bw;
        } else if (p.cls == best_cls && bw == best_bw) {
          cand.push_back(k);
        }
      }
    }
    td.nic_of_gpu.assign(static_cast<size_t>(G), -1);
    for (int g = 0; g < G; ++g) {
      const auto& cand = candidates[static_cast<size_t>(g)];
      if (cand.empty()) continue;
      int before = 0;
      for (int h = 0; h < g; ++h)
        if (candidates[static_cast<size_t>(h)] == cand) ++before;
      td.nic_of_gpu[static_cast<size_t>(g)] = cand[static_cast<size_t>(before) % cand.size()];
    }
    templates_.push_back(std::move(td));
  }

  // Node links, node by node.
  const int nodes = static_cast<int>(cluster.nodes.size());
  for (int n = 0; n < nodes; ++n) {
    const int ti = cluster.nodes[static_cast<size_t>(n)].template_index;
    const TemplateData& td = templates_.at(static_cast<size_t>(ti));
    node_template_.push_back(ti);
    node_base_.push_back(static_cast<int>(links_.size()));
    node_names_.push_back(cluster.nodes[static_cast<size_t>(n)].name);
    for (size_t i = 0; i < td.shared_edges.size(); ++i)
      for (LinkDir d : {LinkDir::kUp, LinkDir::kDown}) links_.push_back({n, td.shared_edges[i], d, td.shared_cap[i]});
  }

  // Network links, and the tree above every node.
  net_base_ = static_cast<int>(links_.size());
  const NetGraph& g = net_->graph();
  for (int e = 0; e < net_->edge_count(); ++e)
    for (LinkDir d : {LinkDir::kUp, LinkDir::kDown}) links_.push_back({-1, e, d, net_->edge(e).bandwidth_Bps});
  node_chain_.resize(static_cast<size_t>(nodes));
  switch_parent_.assign(static_cast<size_t>(net_->switch_count()), -1);
  for (int n = 0; n < nodes; ++n) {
    node_chain_[static_cast<size_t>(n)] = net_->switches_above(n);
    const auto& chain = node_chain_[static_cast<size_t>(n)];
    for (size_t i = 0; i + 1 < chain.size(); ++i) switch_parent_[static_cast<size_t>(chain[i])] = chain[i + 1];
  }
  node_up_edge_.assign(static_cast<size_t>(nodes), -1);
  switch_up_edge_.assign(static_cast<size_t>(net_->switch_count()), -1);
  net_edge_names_.assign(static_cast<size_t>(net_->edge_count()), std::string());
  for (auto [it, end] = boost::edges(g); it != end; ++it) {
    const NetVertex& u = g[boost::source(*it, g)];
    const NetVertex& v = g[boost::target(*it, g)];
    const int id = g[*it].id;
    const bool u_node = u.kind == NetVertex::Kind::kNode, v_node = v.kind == NetVertex::Kind::kNode;
    if (u_node != v_node) {
      const NetVertex& node = u_node ? u : v;
      const NetVertex& sw = u_node ? v : u;
      net_edge_names_[static_cast<size_t>(id)] = node.name + "-" + sw.name;
      if (net_->leaf_of(node.index) == sw.index) node_up_edge_[static_cast<size_t>(node.index)] = id;
    } else if (!u_node) {
      const bool u_child = switch_parent_[static_cast<size_t>(u.index)] == v.index;
      const NetVertex& child = u_child ? u : v;
      const NetVertex& parent = u_child ? v : u;
      net_edge_names_[static_cast<size_t>(id)] = child.name + "-" + parent.name;
      if (switch_parent_[static_cast<size_t>(child.index)] == parent.index)
        switch_up_edge_[static_cast<size_t>(child.index)] = id;
    }
  }
}

std::vector<double> LinkRegistry::capacities() const {
  std::vector<double> out;
  out.reserve(links_.size());
  for (const LinkInfo& l : links_) out.push_back(l.capacity_Bps);
  return out;
}

const NodeTopology& LinkRegistry::node_topology(int node) const {
  return *templates_[static_cast<size_t>(node_template_.at(static_cast<size_t>(node)))].topo;
}

int LinkRegistry::node_link(int node, int edge, LinkDir dir) const {
  const TemplateData& td = templates_[static_cast<size_t>(node_template_.at(static_cast<size_t>(node)))];
  const int idx = td.shared_index.at(static_cast<size_t>(edge));
  return idx < 0 ? -1 : node_base_[static_cast<size_t>(node)] + 2 * idx + static_cast<int>(dir);
}

int LinkRegistry::network_link(int edge, LinkDir dir) const {
  if (edge < 0 || edge >= net_->edge_count()) throw std::out_of_range("network edge id");
  return net_base_ + 2 * edge + static_cast<int>(dir);
}

std::string LinkRegistry::link_name(int id) const {
  const LinkInfo& l = link(id);
  if (l.network()) return "net:" + net_edge_names_[static_cast<size_t>(l.edge)] + ":" + dir_name(l.dir);
  const NodeTopology& topo = node_topology(l.node);
  auto [a, b] = topo.edge_ends(l.edge);
  return node_names_[static_cast<size_t>(l.node)] + ":" + topo.vertex(a).name + "-" + topo.vertex(b).name + ":" +
         dir_name(l.dir);
}

int LinkRegistry::nearest_nic(int node, int gpu) const {
  const TemplateData& td = templates_[static_cast<size_t>(node_template_.at(static_cast<size_t>(node)))];
  return td.nic_of_gpu.at(static_cast<size_t>(gpu));
}

void LinkRegistry::append(int node, const std::vector<DirEdge>& path, bool reversed, Route* r) const {
  const TemplateData& td = templates_[static_cast<size_t>(node_template_[static_cast<size_t>(node)])];
  const int base = node_base_[static_cast<size_t>(node)];
  const size_t n = path.size();
  for (size_t i = 0; i < n; ++i) {
    const DirEdge de = reversed ? path[n - 1 - i] : path[i];
    const int e = de / 2;
    const int d = (de % 2) ^ (reversed ? 1 : 0);
    if (td.nic_own[static_cast<size_t>(e)]) continue;  // carried by the NIC's port link
    const int idx = td.shared_index[static_cast<size_t>(e)];
    if (idx >= 0) r->links.push_back(base + 2 * idx + d);
    else r->private_links.push_back({node, e, static_cast<LinkDir>(d), td.topo->edge(e).bandwidth_Bps});
  }
}

std::vector<int> LinkRegistry::network_route(int a, int b) const {
  if (a < 0 || b < 0 || a >= node_count() || b >= node_count()) throw std::out_of_range("node index");
  std::vector<int> out;
  if (a == b) return out;
  const auto& ca = node_chain_[static_cast<size_t>(a)];
  const auto& cb = node_chain_[static_cast<size_t>(b)];
  const int ua = node_up_edge_[static_cast<size_t>(a)], ub = node_up_edge_[static_cast<size_t>(b)];
  if (ua < 0 || ub < 0) return out;
  size_t ia = 0, ib = 0;
  bool found = false;
  for (ia = 0; ia < ca.size() && !found; ++ia)
    for (ib = 0; ib < cb.size(); ++ib)
      if (ca[ia] == cb[ib]) {
        found = true;
        break;
      }
  if (!found) return out;
  --ia;  // the loop stepped past the common switch
  out.push_back(network_link(ua, LinkDir::kUp));
  for (size_t i = 0; i < ia; ++i) out.push_back(network_link(switch_up_edge_[static_cast<size_t>(ca[i])], LinkDir::kUp));
  for (size_t j = ib; j-- > 0;) out.push_back(network_link(switch_up_edge_[static_cast<size_t>(cb[j])], LinkDir::kDown));
  out.push_back(network_link(ub, LinkDir::kDown));
  return out;
}

Route LinkRegistry::route(PlacedGpu from, PlacedGpu to) const {
  Route r;
  append_route(from, to, &r);
  return r;
}

void LinkRegistry::append_route(PlacedGpu from, PlacedGpu to, Route* r) const {
  if (from.node < 0 || from.node >= node_count() || to.node < 0 || to.node >= node_count())
    throw std::out_of_range("node index");
  const TemplateData& ta = templates_[static_cast<size_t>(node_template_[static_cast<size_t>(from.node)])];
  const TemplateData& tb = templates_[static_cast<size_t>(node_template_[static_cast<size_t>(to.node)])];
  const int Ga = ta.topo->gpu_count(), Gb = tb.topo->gpu_count();
  if (from.gpu < 0 || from.gpu >= Ga || to.gpu < 0 || to.gpu >= Gb) throw std::out_of_range("gpu index");
  if (from.node == to.node) {
    if (from.gpu != to.gpu) append(from.node, ta.gpu_gpu[static_cast<size_t>(from.gpu * Ga + to.gpu)], false, r);
    return;
  }
  const int ka = ta.nic_of_gpu[static_cast<size_t>(from.gpu)], kb = tb.nic_of_gpu[static_cast<size_t>(to.gpu)];
  if (ka < 0 || kb < 0)
    throw std::invalid_argument("inter-node route from node " + node_names_[static_cast<size_t>(from.node)] + " to " +
                                node_names_[static_cast<size_t>(to.node)] + " on a node without NICs");
  append(from.node, ta.gpu_out[static_cast<size_t>(from.gpu * ta.topo->nic_count() + ka)], false, r);
  for (int l : network_route(from.node, to.node)) r->links.push_back(l);
  append(to.node, tb.gpu_out[static_cast<size_t>(to.gpu * tb.topo->nic_count() + kb)], true, r);
}

// ---------------------------------------------------------------------------------------
// Flow builders
// ---------------------------------------------------------------------------------------

namespace {

void check_distinct(const std::vector<PlacedGpu>& ranks) {
  thread_local std::vector<std::pair<int, int>> seen;
  seen.clear();
  for (const PlacedGpu& g : ranks) seen.emplace_back(g.node, g.gpu);
  std::sort(seen.begin(), seen.end());
  const auto dup = std::adjacent_find(seen.begin(), seen.end());
  if (dup != seen.end())
    throw std::invalid_argument("GPU " + std::to_string(dup->second) + " of node " + std::to_string(dup->first) +
                                " listed twice");
}

/// Demand caps from private links: each one's bandwidth split evenly over the job's
/// crossings of it (a flow crossing it twice counts twice).
void cap_private(std::vector<Flow>& flows, const std::vector<std::vector<PrivateLink>>& privates, double demand) {
  // Crossings counted in one sorted list (a map took a node per link crossed).
  thread_local std::vector<PrivateLink> all;
  all.clear();
  for (const auto& ps : privates) all.insert(all.end(), ps.begin(), ps.end());
  std::sort(all.begin(), all.end());
  for (size_t i = 0; i < flows.size(); ++i) {
    double cap = demand;
    for (const PrivateLink& p : privates[i]) {
      const auto [lo, hi] = std::equal_range(all.begin(), all.end(), p);
      cap = std::min(cap, p.capacity_Bps / static_cast<int>(hi - lo));
    }
    flows[i].demand_Bps = cap;
  }
}

}  // namespace

std::vector<Flow> ring_flows(const LinkRegistry& reg, int owner, const std::vector<PlacedGpu>& ranks, int channels,
                             double demand_Bps) {
  if (channels < 1) throw std::invalid_argument("a ring needs at least one channel");
  check_distinct(ranks);
  std::vector<Flow> flows;
  const size_t n = ranks.size();
  if (n < 2) return flows;
  // Runs of consecutive ranks on one node.
  std::vector<std::pair<size_t, size_t>> runs;
  for (size_t b = 0; b < n;) {
    size_t e = b + 1;
    while (e < n && ranks[e].node == ranks[b].node) ++e;
    runs.push_back({b, e});
    b = e;
  }
  std::vector<std::vector<PrivateLink>> privates;
  std::vector<PlacedGpu> order(n);
  for (int c = 0; c < channels; ++c) {
    size_t k = 0;
    for (auto [b, e] : runs) {
      const size_t m = e - b, s = static_cast<size_t>(c) % m;
      for (size_t i = 0; i < m; ++i) order[k++] = ranks[b + (s + i) % m];
    }
    // The channel's hops chained into one route: its shared and its private links.
    Route ring;
    for (size_t i = 0; i < n; ++i) reg.append_route(order[i], order[(i + 1) % n], &ring);
    Flow f;
    f.owner = owner;
    f.links = std::move(ring.links);
    flows.push_back(std::move(f));
    privates.push_back(std::move(ring.private_links));
  }
  cap_private(flows, privates, demand_Bps);
  return flows;
}

std::vector<Flow> pair_flows(const LinkRegistry& reg, int owner, const std::vector<std::pair<PlacedGpu, PlacedGpu>>& pairs,
                             double demand_Bps) {
  std::vector<Flow> flows;
  std::vector<std::vector<PrivateLink>> privates;
  for (const auto& [a, b] : pairs) {
    if (a == b) throw std::invalid_argument("a pair from a GPU to itself");
    Route r = reg.route(a, b);
    Flow f;
    f.owner = owner;
    f.links = std::move(r.links);
    flows.push_back(std::move(f));
    privates.push_back(std::move(r.private_links));
  }
  cap_private(flows, privates, demand_Bps);
  return flows;
}

std::vector<Flow> alltoall_flows(const LinkRegistry& reg, int owner, const std::vector<PlacedGpu>& ranks,
                                 double demand_Bps) {
  check_distinct(ranks);
  std::vector<std::pair<PlacedGpu, PlacedGpu>> pairs;
  for (size_t i = 0; i < ranks.size(); ++i)
    for (size_t j = 0; j < ranks.size(); ++j)
      if (i != j) pairs.push_back({ranks[i], ranks[j]});
  return pair_flows(reg, owner, pairs, demand_Bps);
}

// ---------------------------------------------------------------------------------------
// Progressive filling
// ---------------------------------------------------------------------------------------

void ContentionSolver::progressive_fill(const Problem& p, Work& w) {
  const size_t L = p.cap.size(), F = p.weight.size();
  w.link.resize(L);
  for (size_t l = 0; l < L; ++l) w.link[l] = {p.cap[l], 0.0, 0};
  for (size_t f = 0; f < F; ++f)
    for (int k = p.f_off[f]; k < p.f_off[f + 1]; ++k) {
      LinkState& ls = w.link[static_cast<size_t>(p.f_link[static_cast<size_t>(k)])];
      ls.wsum += p.f_mult[static_cast<size_t>(k)] * p.weight[f];
      ++ls.open;
    }
  // Min-heap of (saturation level, link). A link's level only rises as flows freeze, so a
  // stored key is a lower bound; a popped key below the current level is pushed again.
  using Entry = std::pair<double, int>;
  const auto later = std::greater<Entry>();
  w.heap.clear();
  for (size_t l = 0; l < L; ++l)
    if (w.link[l].open > 0) w.heap.push_back({w.link[l].rem / w.link[l].wsum, static_cast<int>(l)});
  std::make_heap(w.heap.begin(), w.heap.end(), later);
  // Demand caps as levels, ascending (ties: lowest flow).
  w.caps.clear();
  for (size_t f = 0; f < F; ++f)
    if (p.demand[f] < kInf) w.caps.push_back({p.demand[f] / p.weight[f], static_cast<int>(f)});
  std::sort(w.caps.begin(), w.caps.end());

  w.frozen.assign(F, 0);
  w.rate.assign(F, 0.0);
  size_t left = F, ci = 0;
  double t = 0;
  auto freeze = [&](size_t f, double r) {
    w.frozen[f] = 1;
    w.rate[f] = r;
    --left;
    for (int k = p.f_off[f]; k < p.f_off[f + 1]; ++k) {
      LinkState& ls = w.link[static_cast<size_t>(p.f_link[static_cast<size_t>(k)])];
      const double m = p.f_mult[static_cast<size_t>(k)];
      ls.rem -= m * r;
      ls.wsum -= m * p.weight[f];
      --ls.open;
    }
  };
  auto level = [&](size_t l) {
    LinkState& ls = w.link[l];
    if (!(ls.wsum > 0)) {
      // Rounding ate the weight sum of the flows still open: add it up again.
      ls.wsum = 0;
      for (int k = p.l_off[l]; k < p.l_off[l + 1]; ++k) {
        const size_t f = static_cast<size_t>(p.l_flow[static_cast<size_t>(k)]);
        if (w.frozen[f]) continue;
        for (int j = p.f_off[f]; j < p.f_off[f + 1]; ++j)
          if (static_cast<size_t>(p.f_link[static_cast<size_t>(j)]) == l)
            ls.wsum += p.f_mult[static_cast<size_t>(j)] * p.weight[f];
      }
    }
    return std::max(ls.rem / ls.wsum, t);
  };
  while (left > 0) {
    double tl = kInf;
    int lbest = -1;
    while (!w.heap.empty()) {
      const auto [key, l] = w.heap.front();
      std::pop_heap(w.heap.begin(), w.heap.end(), later);
      if (w.link[static_cast<size_t>(l)].open == 0) {
        w.heap.pop_back();
        continue;
      }
      const double cur = level(static_cast<size_t>(l));
      if (cur > key) {
        w.heap.back() = {cur, l};
        std::push_heap(w.heap.begin(), w.heap.end(), later);
        continue;
      }
      // The lowest level: keep it at the back until it is taken.
      tl = cur;
      lbest = l;
      std::push_heap(w.heap.begin(), w.heap.end(), later);
      break;
    }
    while (ci < w.caps.size() && w.frozen[static_cast<size_t>(w.caps[ci].second)]) ++ci;
    const double tc = ci < w.caps.size() ? w.caps[ci].first : kInf;
    if (tl == kInf && tc == kInf) {
      // What is left crosses only unconstrained links and has no cap.
      for (size_t f = 0; f < F; ++f)
        if (!w.frozen[f]) w.rate[f] = kInf;
      break;
    }
    if (tc <= tl) {
      const size_t f = static_cast<size_t>(w.caps[ci].second);
      t = std::max(t, tc);
      freeze(f, p.demand[f]);
      ++ci;
    } else {
      std::pop_heap(w.heap.begin(), w.heap.end(), later);
      w.heap.pop_back();
      t = std::max(t, tl);
      const size_t l = static_cast<size_t>(lbest);
      for (int k = p.l_off[l]; k < p.l_off[l + 1]; ++k) {
        const size_t f = static_cast<size_t>(p.l_flow[static_cast<size_t>(k)]);
        if (!w.frozen[f]) freeze(f, p.weight[f] * t);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// ContentionSolver
// ---------------------------------------------------------------------------------------

ContentionSolver::ContentionSolver(std::vector<double> link_capacity_Bps) : capacity_(std::move(link_capacity_Bps)) {
  for (double c : capacity_)
    if (std::isnan(c) || c < 0) throw std::invalid_argument("link capacity must be >= 0");
  link_flows_.resize(capacity_.size());
  lk_.assign(capacity_.size(), LinkScratch());
}

int ContentionSolver::add_flow(Flow f) {
  if (!(f.weight > 0) || std::isinf(f.weight)) throw std::invalid_argument("flow weight must be finite and > 0");
  if (std::isnan(f.demand_Bps) || f.demand_Bps < 0) throw std::invalid_argument("flow demand must be >= 0");
  for (int l : f.links)
    if (l < 0 || l >= link_count()) throw std::invalid_argument("flow link id " + std::to_string(l) + " out of range");
  int id;
  if (!free_ids_.empty()) {
    std::pop_heap(free_ids_.begin(), free_ids_.end(), std::greater<int>());
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = static_cast<int>(slots_.size());
    slots_.emplace_back();
    rate_.push_back(0);
    alone_.push_back(0);
    flow_mark_.push_back(0);
  }
  Slot& s = slots_[static_cast<size_t>(id)];
  s.live = true;
  std::vector<int> sorted = f.links;
  std::sort(sorted.begin(), sorted.end());
  s.links.clear();
  s.mult.clear();
  s.pos.clear();
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    const int l = sorted[i];
    s.links.push_back(l);
    s.mult.push_back(static_cast<double>(j - i));
    s.pos.push_back(static_cast<int>(link_flows_[static_cast<size_t>(l)].size()));
    link_flows_[static_cast<size_t>(l)].push_back(id);
    dirty_links_.push_back(l);
    i = j;
  }
  if (s.links.empty()) dirty_free_.push_back(id);
  auto& ids = owners_[f.owner];
  ids.insert(std::lower_bound(ids.begin(), ids.end(), id), id);
  dirty_owners_.push_back(f.owner);
  s.flow = std::move(f);
  ++live_flows_;
  return id;
}

std::vector<int> ContentionSolver::add_flows(std::vector<Flow> flows) {
  std::vector<int> ids;
  ids.reserve(flows.size());
  for (Flow& f : flows) ids.push_back(add_flow(std::move(f)));
  return ids;
}

void ContentionSolver::remove_flow(int id) {
  if (!has_flow(id)) throw std::out_of_range("no flow " + std::to_string(id));
  Slot& s = slots_[static_cast<size_t>(id)];
  for (size_t i = 0; i < s.links.size(); ++i) {
    const int l = s.links[i];
    auto& lf = link_flows_[static_cast<size_t>(l)];
    const int p = s.pos[i];
    const int last = lf.back();
    lf[static_cast<size_t>(p)] = last;
    lf.pop_back();
    if (last != id) {
      Slot& m = slots_[static_cast<size_t>(last)];
      const size_t k = static_cast<size_t>(std::lower_bound(m.links.begin(), m.links.end(), l) - m.links.begin());
      m.pos[k] = p;
    }
    dirty_links_.push_back(l);
  }
  const int owner = s.flow.owner;
  auto it = owners_.find(owner);
  auto& ids = it->second;
  ids.erase(std::lower_bound(ids.begin(), ids.end(), id));
  if (ids.empty()) {
    owners_.erase(it);
    owner_alone_.erase(owner);
  } else {
    dirty_owners_.push_back(owner);
  }
  s = Slot();
  rate_[static_cast<size_t>(id)] = 0;
  alone_[static_cast<size_t>(id)] = 0;
  free_ids_.push_back(id);
  std::push_heap(free_ids_.begin(), free_ids_.end(), std::greater<int>());
  --live_flows_;
}

void ContentionSolver::remove_owner(int owner) {
  auto it = owners_.find(owner);
  if (it == owners_.end()) return;
  const std::vector<int> ids = it->second;
  for (int id : ids) remove_flow(id);
}

void ContentionSolver::next_epoch() {
  if (++epoch_ == 0) {
    for (LinkScratch& x : lk_) x.mark = 0;
    std::fill(flow_mark_.begin(), flow_mark_.end(), 0);
    epoch_ = 1;
  }
}

void ContentionSolver::solve_flows(const std::vector<int>& flows, std::vector<double>* out) {
  // How many of these flows use each link.
  next_epoch();
  std::vector<int>& seen = links_seen_;
  seen.clear();
  size_t nnz = 0;
  for (int f : flows) {
    const Slot& s = slots_[static_cast<size_t>(f)];
    nnz += s.links.size();
    for (int l : s.links) {
      if (lk_[static_cast<size_t>(l)].mark != epoch_) {
        lk_[static_cast<size_t>(l)].mark = epoch_;
        lk_[static_cast<size_t>(l)].users = 0;
        seen.push_back(l);
      }
      ++lk_[static_cast<size_t>(l)].users;
    }
  }
  // A link of one flow is a cap of that flow (capacity / crossings): the same constraint,
  // kept out of the filling. Unconstrained links are dropped. The rest get local indices
  // in ascending link id.
  Problem& p = prob_;
  const size_t F = flows.size();
  p.weight.resize(F);
  p.demand.resize(F);
  const size_t total_links = seen.size();
  auto contended = [&](int l) {
    return lk_[static_cast<size_t>(l)].users >= 2 && capacity_[static_cast<size_t>(l)] < kInf;
  };
  for (int l : seen) lk_[static_cast<size_t>(l)].local = -1;
  if (total_links * 16 < capacity_.size()) {
    size_t n = 0;
    for (int l : seen)
      if (contended(l)) seen[n++] = l;
    seen.resize(n);
    std::sort(seen.begin(), seen.end());
  } else {
    // Most links are in: a scan in id order is cheaper than a sort.
    seen.clear();
    for (size_t l = 0; l < capacity_.size(); ++l)
      if (lk_[l].mark == epoch_ && contended(static_cast<int>(l))) seen.push_back(static_cast<int>(l));
  }
  const size_t kept = seen.size();
  p.cap.resize(kept);
  for (size_t i = 0; i < kept; ++i) {
    lk_[static_cast<size_t>(seen[i])].local = static_cast<int>(i);
    p.cap[i] = capacity_[static_cast<size_t>(seen[i])];
  }
  p.f_off.resize(F + 1);
  p.f_link.clear();
  p.f_mult.clear();
  p.l_off.assign(kept + 1, 0);
  for (size_t i = 0; i < F; ++i) {
    const Slot& s = slots_[static_cast<size_t>(flows[i])];
    p.f_off[i] = static_cast<int>(p.f_link.size());
    p.weight[i] = s.flow.weight;
    double demand = s.flow.demand_Bps;
    for (size_t k = 0; k < s.links.size(); ++k) {
      const int ll = lk_[static_cast<size_t>(s.links[k])].local;
      if (ll < 0) {
        demand = std::min(demand, capacity_[static_cast<size_t>(s.links[k])] / s.mult[k]);
        continue;
      }
      p.f_link.push_back(ll);
      p.f_mult.push_back(s.mult[k]);
      ++p.l_off[static_cast<size_t>(ll) + 1];
    }
    p.demand[i] = demand;
  }
  p.f_off[F] = static_cast<int>(p.f_link.size());
  for (size_t l = 0; l < kept; ++l) p.l_off[l + 1] += p.l_off[l];
  p.l_flow.resize(p.f_link.size());
  work_.fill.assign(p.l_off.begin(), p.l_off.end() - 1);
  for (size_t i = 0; i < F; ++i)
    for (int k = p.f_off[i]; k < p.f_off[i + 1]; ++k)
      p.l_flow[static_cast<size_t>(work_.fill[static_cast<size_t>(p.f_link[static_cast<size_t>(k)])]++)] =
          static_cast<int>(i);

  progressive_fill(p, work_);
  for (size_t i = 0; i < F; ++i) (*out)[static_cast<size_t>(flows[i])] = work_.rate[i];
  last_.links = static_cast<int>(total_links);
  last_.flows = static_cast<int>(F);
  last_.incidences = static_cast<int64_t>(nnz);
  last_.contended_links = static_cast<int>(kept);
}

void ContentionSolver::solve_alone(int owner) {
  auto it = owners_.find(owner);
  if (it == owners_.end()) return;
  const SolveStats keep = last_;
  solve_flows(it->second, &alone_);
  last_ = keep;
  double m = kInf;
  for (int f : it->second) m = std::min(m, alone_[static_cast<size_t>(f)]);
  owner_alone_[owner] = m;
}

const std::vector<double>& ContentionSolver::solve() {
  if (!pending()) {
    solved_owners_.clear();
    return rate_;
  }
  // The components of the flow-link graph that hold a changed link.
  next_epoch();
  std::vector<int>& queue = queue_;
  std::vector<int>& comp = comp_;
  queue.clear();
  comp.clear();
  for (int l : dirty_links_)
    if (lk_[static_cast<size_t>(l)].mark != epoch_) {
      lk_[static_cast<size_t>(l)].mark = epoch_;
      queue.push_back(l);
    }
  // Once the search has found half the flows, solving all of them is cheaper than
  // finishing it (untouched components come out the same).
  const size_t enough = static_cast<size_t>(live_flows_) / 2 + 1;
  bool all = false;
  for (size_t qi = 0; qi < queue.size() && !all; ++qi)
    for (int f : link_flows_[static_cast<size_t>(queue[qi])]) {
      if (flow_mark_[static_cast<size_t>(f)] == epoch_) continue;
      flow_mark_[static_cast<size_t>(f)] = epoch_;
      comp.push_back(f);
      for (int l : slots_[static_cast<size_t>(f)].links)
        if (lk_[static_cast<size_t>(l)].mark != epoch_) {
          lk_[static_cast<size_t>(l)].mark = epoch_;
          queue.push_back(l);
        }
      if (comp.size() >= enough && live_flows_ > 64) {
        all = true;
        break;
      }
    }
  if (all) {
    comp.clear();
    for (size_t f = 0; f < slots_.size(); ++f)
      if (slots_[f].live) comp.push_back(static_cast<int>(f));
  } else {
    for (int f : dirty_free_)
      if (has_flow(f) && slots_[static_cast<size_t>(f)].links.empty()) comp.push_back(f);
    std::sort(comp.begin(), comp.end());
    comp.erase(std::unique(comp.begin(), comp.end()), comp.end());
  }
  solve_flows(comp, &rate_);
  note_solved(comp);
  return finish_solve();
}

void ContentionSolver::note_solved(const std::vector<int>& flows) {
  solved_owners_.clear();
  for (int f : flows) solved_owners_.push_back(slots_[static_cast<size_t>(f)].flow.owner);
  std::sort(solved_owners_.begin(), solved_owners_.end());
  solved_owners_.erase(std::unique(solved_owners_.begin(), solved_owners_.end()), solved_owners_.end());
}

// After a solve: the changed owners' alone rates (their slowdown's baseline), and the
// change log cleared.
const std::vector<double>& ContentionSolver::finish_solve() {
  std::sort(dirty_owners_.begin(), dirty_owners_.end());
  dirty_owners_.erase(std::unique(dirty_owners_.begin(), dirty_owners_.end()), dirty_owners_.end());
  const std::vector<int> owners = std::move(dirty_owners_);
  dirty_links_.clear();
  dirty_free_.clear();
  dirty_owners_.clear();
  for (int o : owners) solve_alone(o);
  return rate_;
}

const std::vector<double>& ContentionSolver::solve_full() {
  std::vector<int> all;
  all.reserve(static_cast<size_t>(live_flows_));
  for (size_t f = 0; f < slots_.size(); ++f)
    if (slots_[f].live) all.push_back(static_cast<int>(f));
  solve_flows(all, &rate_);
  note_solved(all);
  return finish_solve();
}

void ContentionSolver::check_solved() const {
  if (pending()) throw std::logic_error("ContentionSolver: flows changed since the last solve()");
}

bool ContentionSolver::has_flow(int id) const {
  return id >= 0 && static_cast<size_t>(id) < slots_.size() && slots_[static_cast<size_t>(id)].live;
}

const Flow& ContentionSolver::flow(int id) const {
  if (!has_flow(id)) throw std::out_of_range("no flow " + std::to_string(id));
  return slots_[static_cast<size_t>(id)].flow;
}

double ContentionSolver::rate(int id) const {
  check_solved();
  if (!has_flow(id)) throw std::out_of_range("no flow " + std::to_string(id));
  return rate_[static_cast<size_t>(id)];
}

double ContentionSolver::alone_rate(int id) const {
  check_solved();
  if (!has_flow(id)) throw std::out_of_range("no flow " + std::to_string(id));
  return alone_[static_cast<size_t>(id)];
}

std::vector<int> ContentionSolver::owner_flows(int owner) const {
  auto it = owners_.find(owner);
  return it == owners_.end() ? std::vector<int>() : it->second;
}

double ContentionSolver::owner_rate(int owner) const {
  check_solved();
  auto it = owners_.find(owner);
  if (it == owners_.end()) return kInf;
  double m = kInf;
  for (int f : it->second) m = std::min(m, rate_[static_cast<size_t>(f)]);
  return m;
}

double ContentionSolver::owner_slowdown(int owner) const {
  check_solved();
  auto it = owner_alone_.find(owner);
  if (it == owner_alone_.end()) return 1;
  const double alone = it->second, now = owner_rate(owner);
  if (alone == now) return 1;  // both infinite, or both 0
  if (now == 0) return kInf;
  return std::max(1.0, alone / now);
}

}  // namespace gcsim
