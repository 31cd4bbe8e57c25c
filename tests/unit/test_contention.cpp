// Contention between jobs (models/network): the link registry on the shipped configs, the
// max-min solver on hand-computed cases (the textbook two-link example, demand caps,
// weights, repeated links), ring and AllToAll flows of jobs on a fat-tree, NVSwitch and
// PCIe-switch nodes, removal, order independence and incremental against full solves.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <utility>

#include "models/network/contention.hpp"
#include "sim/cluster/cluster_yaml.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;

namespace {

Cluster load(const std::string& name) { return load_cluster_yaml(test::src("configs/" + name + ".yaml")); }

Flow flow(int owner, std::vector<int> links, double demand = kNoDemandCap, double weight = 1) {
  Flow f;
  f.owner = owner;
  f.links = std::move(links);
  f.demand_Bps = demand;
  f.weight = weight;
  return f;
}

std::vector<PlacedGpu> gpus_on(int node, std::vector<int> gpus) {
  std::vector<PlacedGpu> out;
  for (int g : gpus) out.push_back({node, g});
  return out;
}

/// DGX A100 pod whose leaf uplinks are one node link wide: the shipped config is
/// non-blocking (16 nodes x 200 Gb/s up per leaf); oversubscription 16 makes the
/// leaf-spine link 16 x 200 Gb/s / 16 = 200 Gb/s = 25 GB/s (the loader stores the
/// aggregate uplink, so it is set here as the loader would compute it).
Cluster thin_uplink_pod() {
  Cluster c = load("dgx-a100-pod");
  c.network.oversubscription = 16.0;
  c.network.uplink_bandwidth_bps = c.network.nodes_per_leaf * c.network.link_bandwidth_bps / 16.0;
  return c;
}

constexpr double kGen4x16 = 1.969e9 * 16;  // 31.504 GB/s, the topology's Gen4 x16 link
constexpr double kHdr = 200e9 / 8;         // 25 GB/s, a 200 Gb/s NIC port and node link

}  // namespace

TEST_CASE("max-min: the textbook two-link example", "[contention]") {
  // Link 0 has capacity 1, link 1 capacity 2. A uses link 0, B link 1, C both.
  // Link 0: 2 flows -> fair share 1/2; link 1: 2 flows -> 2/2 = 1. Link 0 saturates first:
  // A = C = 0.5. Link 1 then has 2 - 0.5 = 1.5 left for B alone: B = 1.5.
  ContentionSolver s({1.0, 2.0});
  const int a = s.add_flow(flow(1, {0}));
  const int b = s.add_flow(flow(2, {1}));
  const int c = s.add_flow(flow(3, {0, 1}));
  s.solve();
  CHECK(s.rate(a) == Approx(0.5));
  CHECK(s.rate(b) == Approx(1.5));
  CHECK(s.rate(c) == Approx(0.5));
  // Each alone: A 1, B 2, C min(1, 2) = 1. Slowdowns 1/0.5 = 2, 2/1.5 = 4/3, 1/0.5 = 2.
  CHECK(s.owner_slowdown(1) == Approx(2.0));
  CHECK(s.owner_slowdown(2) == Approx(4.0 / 3.0));
  CHECK(s.owner_slowdown(3) == Approx(2.0));
}

TEST_CASE("max-min: demand caps, weights and repeated links", "[contention]") {
  SECTION("a capped flow leaves its share to the others") {
    // Capacity 10, three flows: uncapped each gets 10/3. A capped at 2 freezes at level 2
    // (below 10/3); B and C split the remaining 8: 4 each.
    ContentionSolver s({10.0});
    const int a = s.add_flow(flow(1, {0}, 2.0));
    const int b = s.add_flow(flow(2, {0}));
    const int c = s.add_flow(flow(3, {0}));
    s.solve();
    CHECK(s.rate(a) == Approx(2.0));
    CHECK(s.rate(b) == Approx(4.0));
    CHECK(s.rate(c) == Approx(4.0));
    // A cap above the fair share does not bind: cap 5 > 10/3.
    ContentionSolver t({10.0});
    const int x = t.add_flow(flow(1, {0}, 5.0));
    t.add_flow(flow(2, {0}));
    t.add_flow(flow(3, {0}));
    t.solve();
    CHECK(t.rate(x) == Approx(10.0 / 3.0));
  }
  SECTION("weights split a bottleneck in proportion") {
    // Capacity 9, weights 2 and 1: level 9 / (2 + 1) = 3, rates 6 and 3.
    ContentionSolver s({9.0});
    const int a = s.add_flow(flow(1, {0}, kNoDemandCap, 2.0));
    const int b = s.add_flow(flow(2, {0}));
    s.solve();
    CHECK(s.rate(a) == Approx(6.0));
    CHECK(s.rate(b) == Approx(3.0));
  }
  SECTION("a link listed twice carries the rate twice") {
    // Capacity 10; X crosses it twice, Y once: 2r + r = 10, r = 10/3 each.
    ContentionSolver s({10.0});
    const int x = s.add_flow(flow(1, {0, 0}));
    const int y = s.add_flow(flow(2, {0}));
    s.solve();
    CHECK(s.rate(x) == Approx(10.0 / 3.0));
    CHECK(s.rate(y) == Approx(10.0 / 3.0));
  }
  SECTION("flows on no link") {
    ContentionSolver s({1.0});
    const int free_flow = s.add_flow(flow(1, {}));
    const int capped = s.add_flow(flow(2, {}, 5.0));
    const int unconstrained = s.add_flow(flow(3, {0}));
    s.solve();
    CHECK(std::isinf(s.rate(free_flow)));
    CHECK(s.rate(capped) == 5.0);
    CHECK(s.rate(unconstrained) == 1.0);
    CHECK(s.owner_slowdown(1) == 1.0);
  }
  SECTION("an unconstrained link") {
    ContentionSolver s({std::numeric_limits<double>::infinity(), 4.0});
    const int a = s.add_flow(flow(1, {0}));
    const int b = s.add_flow(flow(2, {0, 1}));
    s.solve();
    CHECK(std::isinf(s.rate(a)));
    CHECK(s.rate(b) == 4.0);
  }
}

TEST_CASE("solver: errors and pending changes", "[contention]") {
  ContentionSolver s({1.0, 1.0});
  CHECK_THROWS_AS(s.add_flow(flow(1, {2})), std::invalid_argument);
  CHECK_THROWS_AS(s.add_flow(flow(1, {-1})), std::invalid_argument);
  CHECK_THROWS_AS(s.add_flow(flow(1, {0}, -1.0)), std::invalid_argument);
  CHECK_THROWS_AS(s.add_flow(flow(1, {0}, kNoDemandCap, 0.0)), std::invalid_argument);
  const int a = s.add_flow(flow(1, {0}));
  CHECK(s.pending());
  CHECK_THROWS_AS(s.rate(a), std::logic_error);
  s.solve();
  CHECK_FALSE(s.pending());
  CHECK(s.rate(a) == 1.0);
  CHECK_THROWS_AS(s.rate(a + 1), std::out_of_range);
  // Removed ids are reused, smallest first.
  const int b = s.add_flow(flow(2, {1}));
  s.remove_flow(a);
  CHECK(s.add_flow(flow(3, {1})) == a);
  s.solve();
  CHECK(s.rate(b) == 0.5);
  CHECK(s.flow_count() == 2);
  s.remove_owner(42);  // no such owner: no-op
  CHECK_FALSE(s.pending());
}

TEST_CASE("link registry: shared links, capacities, network routes", "[contention]") {
  const Cluster c = load("dgx-a100-pod");
  const LinkRegistry reg(c);
  const NodeTopology& topo = reg.node_topology(0);
  const ClusterTopology& net = reg.network();
  int shared = 0, uplinks = 0, gpu_links = 0;
  for (int e = 0; e < topo.edge_count(); ++e) {
    const TopoEdge& ed = topo.edge(e);
    auto [a, b] = topo.edge_ends(e);
    const TopoVertexKind ka = topo.vertex(a).kind, kb = topo.vertex(b).kind;
    const int up = reg.node_link(0, e, LinkDir::kUp), down = reg.node_link(0, e, LinkDir::kDown);
    CHECK((up < 0) == (down < 0));
    if (ed.kind == TopoEdgeKind::kNvlink) {
      // NVSwitch ports are private per GPU.
      CHECK(up == -1);
      continue;
    }
    if (ka == TopoVertexKind::kGpu) {
      // A GPU's own PCIe link: only its traffic crosses it.
      CHECK(up == -1);
      ++gpu_links;
    }
    if (ka == TopoVertexKind::kPcieSwitch && kb == TopoVertexKind::kRootPort) {
      // A PCIe switch uplink: shared by the 2 GPUs and 2 NICs below it.
      CHECK(up >= 0);
      ++uplinks;
    }
    if (up < 0) continue;
    ++shared;
    for (LinkDir d : {LinkDir::kUp, LinkDir::kDown}) {
      const int id = reg.node_link(0, e, d);
      CHECK(reg.link(id).node == 0);
      CHECK(reg.link(id).edge == e);
      CHECK(reg.link(id).dir == d);
      CHECK(reg.link(id).capacity_Bps == ed.bandwidth_Bps);
    }
  }
  CHECK(gpu_links == 8);
  CHECK(uplinks == 4);
  CHECK(shared > 0);
  // 32 identical nodes, then the network: 32 node-leaf + 2 leaf-spine edges, two directions.
  CHECK(net.edge_count() == 34);
  CHECK(reg.link_count() == 32 * 2 * shared + 2 * 34);
  CHECK(reg.capacities().size() == static_cast<size_t>(reg.link_count()));

  // NIC ports at 25 GB/s; GPU0 and GPU1 share sw0 with mlx5_0/1 and take one each.
  const int port = reg.node_link(0, topo.nic_port_edge(0), LinkDir::kUp);
  CHECK(reg.link(port).capacity_Bps == kHdr);
  CHECK(reg.link_name(port) == "dgx001:mlx5_0-mlx5_0:1:up");
  CHECK(reg.nearest_nic(0, 0) == 0);
  CHECK(reg.nearest_nic(0, 1) == 1);
  CHECK(reg.nearest_nic(0, 2) == 2);
  CHECK(reg.nearest_nic(0, 7) == 7);

  // dgx001 (leaf0) to dgx017 (leaf1): node-leaf up, leaf-spine up, spine-leaf down,
  // leaf-node down, the same edges as ClusterTopology::path.
  const std::vector<int> r = reg.network_route(0, 16);
  const NetPathInfo p = net.path(0, 16);
  REQUIRE(r.size() == 4);
  REQUIRE(p.edges.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    CHECK(reg.link(r[i]).network());
    CHECK(reg.link(r[i]).edge == p.edges[i]);
    CHECK(reg.link(r[i]).dir == (i < 2 ? LinkDir::kUp : LinkDir::kDown));
  }
  CHECK(reg.link_name(r[0]) == "net:dgx001-leaf0:up");
  CHECK(reg.link_name(r[1]) == "net:leaf0-spine:up");
  CHECK(reg.link_name(r[2]) == "net:leaf1-spine:down");
  CHECK(reg.link_name(r[3]) == "net:dgx017-leaf1:down");
  CHECK(reg.link(r[1]).capacity_Bps == 16 * kHdr);  // non-blocking: 16 x 25 GB/s
  CHECK(reg.network_route(0, 1).size() == 2);       // same leaf
  CHECK(reg.network_route(3, 3).empty());

  // A GPU route out of the node: GPU0 -> its own 2 PCIe links (device link, internal
  // switch level: private) -> sw0 -> mlx5_0's own 2 PCIe links (stood for by its port) ->
  // port -> network (4) -> port -> mlx5_0 -> GPU0 (2 private links).
  const Route gr = reg.route({0, 0}, {16, 0});
  CHECK(gr.private_links.size() == 4);
  CHECK(gr.links.size() == 1 + 4 + 1);
  CHECK(gr.private_links[0].capacity_Bps == kGen4x16);
  // Inside the node GPU to GPU is NVLink only: nothing shared.
  const Route nv = reg.route({0, 0}, {0, 5});
  CHECK(nv.links.empty());
  CHECK(nv.private_links.size() == 2);
  CHECK(nv.private_links[0].capacity_Bps == 12 * 25e9);
}

TEST_CASE("link registry: switch trees and clusters without a network", "[contention]") {
  Cluster c = load("mixed");
  const int v1 = c.find_node("v100-01"), a1 = c.find_node("a100-01");
  {
    // topology.conf-style tree: v100-01 -> leaf1 -> spine -> leaf2 -> a100-01.
    const LinkRegistry reg(c);
    const std::vector<int> r = reg.network_route(v1, a1);
    const NetPathInfo p = reg.network().path(v1, a1);
    REQUIRE(r.size() == p.edges.size());
    REQUIRE(r.size() == 4);
    for (size_t i = 0; i < r.size(); ++i) CHECK(reg.link(r[i]).edge == p.edges[i]);
    CHECK(reg.link(r[1]).capacity_Bps == 800e9 / 8);  // leaf1's uplink
    // A ring of GPU0 on each: NIC ports and node links at 100 Gb/s = 12.5 GB/s bind.
    ContentionSolver s(reg.capacities());
    const auto f = s.add_flows(ring_flows(reg, 1, {{v1, 0}, {a1, 0}}, 1));
    s.solve();
    CHECK(s.rate(f[0]) == Approx(12.5e9));
  }
  {
    // No network in the description: inter-node hops cross the NIC ports only.
    c.network = NetworkSpec();
    const LinkRegistry reg(c);
    CHECK(reg.network().edge_count() == 0);
    CHECK(reg.network_route(v1, a1).empty());
    const Route r = reg.route({v1, 0}, {a1, 0});
    REQUIRE(r.links.size() == 2);
    CHECK(reg.link_name(r.links[0]) == "v100-01:mlx5_0-mlx5_0:1:up");
    CHECK(reg.link_name(r.links[1]) == "a100-01:mlx5_0-mlx5_0:1:down");
  }
}

TEST_CASE("two jobs whose rings share one leaf uplink each get half", "[contention]") {
  const Cluster c = thin_uplink_pod();
  const LinkRegistry reg(c);
  ContentionSolver s(reg.capacities());
  // Job 1: GPU0 of dgx001 (leaf0) and dgx017 (leaf1); job 2: GPU0 of dgx002 and dgx018.
  // Each ring (one channel) crosses: 4 PCIe links at 31.504 GB/s, a NIC port at 25 GB/s,
  // the node link at 25 GB/s, the leaf uplink at 25 GB/s, and back on the other leaf.
  const auto f1 = s.add_flows(ring_flows(reg, 1, {{0, 0}, {16, 0}}, 1));
  s.solve();
  REQUIRE(f1.size() == 1);
  // Alone: min(31.504, 25, 25, 25) = 25 GB/s.
  CHECK(s.rate(f1[0]) == Approx(kHdr));
  CHECK(s.owner_slowdown(1) == 1.0);

  const auto f2 = s.add_flows(ring_flows(reg, 2, {{1, 0}, {17, 0}}, 1));
  s.solve();
  // leaf0 -> spine carries hop dgx001 -> dgx017 of job 1 and dgx002 -> dgx018 of job 2:
  // 25 / 2 = 12.5 GB/s each (likewise spine -> leaf0 for the hops back). Node links and
  // NIC ports are each job's own.
  CHECK(s.rate(f1[0]) == Approx(kHdr / 2));
  CHECK(s.rate(f2[0]) == Approx(kHdr / 2));
  CHECK(s.alone_rate(f2[0]) == Approx(kHdr));
  CHECK(s.owner_slowdown(1) == Approx(2.0));
  CHECK(s.owner_slowdown(2) == Approx(2.0));

  SECTION("removing a job restores the other's rate") {
    s.remove_owner(2);
    s.solve();
    CHECK(s.rate(f1[0]) == Approx(kHdr));
    CHECK(s.owner_slowdown(1) == 1.0);
    CHECK(s.owner_slowdown(2) == 1.0);  // gone
    CHECK(s.owner_flows(2).empty());
  }
  SECTION("a job on the same leaf does not touch the uplink") {
    // Job 3: dgx003 and dgx004, both on leaf0: node links and NIC ports of its own only.
    const auto f3 = s.add_flows(ring_flows(reg, 3, {{2, 0}, {3, 0}}, 1));
    s.solve();
    CHECK(s.rate(f3[0]) == Approx(kHdr));
    CHECK(s.owner_slowdown(3) == 1.0);
    CHECK(s.owner_slowdown(1) == Approx(2.0));
  }
}

TEST_CASE("a whole-node ring spreads its channels over the node's NICs", "[contention]") {
  // 8 GPUs on each of dgx001 and dgx017, 8 channels. Channel c leaves each node from GPU
  // (c + 7) mod 8 through its own NIC, so every NIC port carries one channel each way,
  // but the network model has one 25 GB/s link per node: 8 channels share it, 25/8 each.
  const Cluster c = load("dgx-a100-pod");
  const LinkRegistry reg(c);
  ContentionSolver s(reg.capacities());
  std::vector<PlacedGpu> ranks = gpus_on(0, {0, 1, 2, 3, 4, 5, 6, 7});
  for (const PlacedGpu& g : gpus_on(16, {0, 1, 2, 3, 4, 5, 6, 7})) ranks.push_back(g);
  const auto f = s.add_flows(ring_flows(reg, 1, ranks, 8));
  REQUIRE(f.size() == 8);
  s.solve();
  for (int id : f) CHECK(s.rate(id) == Approx(kHdr / 8));
  // Every NIC port up link of dgx001 is used by exactly one channel.
  const NodeTopology& topo = reg.node_topology(0);
  for (int k = 0; k < 8; ++k) {
    const int port = reg.node_link(0, topo.nic_port_edge(k), LinkDir::kUp);
    int users = 0;
    for (int id : f)
      for (int l : s.flow(id).links) users += l == port;
    CHECK(users == 1);
  }
}

TEST_CASE("jobs on disjoint GPUs of an NVSwitch node do not slow each other", "[contention]") {
  const Cluster c = load("dgx-a100-pod");
  const LinkRegistry reg(c);
  ContentionSolver s(reg.capacities());
  // Two 4-GPU rings of 2 channels on dgx001. Every hop is NVLink through the NVSwitch:
  // no shared link. Each channel enters and leaves each GPU port once, so a port's
  // 12 x 25 GB/s = 300 GB/s is split over 2 channels: cap 150 GB/s per channel.
  const auto a = s.add_flows(ring_flows(reg, 1, gpus_on(0, {0, 1, 2, 3}), 2));
  const auto b = s.add_flows(ring_flows(reg, 2, gpus_on(0, {4, 5, 6, 7}), 2));
  s.solve();
  for (int id : a) {
    CHECK(s.flow(id).links.empty());
    CHECK(s.rate(id) == Approx(150e9));
  }
  for (int id : b) CHECK(s.rate(id) == Approx(150e9));
  CHECK(s.owner_slowdown(1) == 1.0);
  CHECK(s.owner_slowdown(2) == 1.0);
}

TEST_CASE("jobs on one PCIe switch of a PCIe-only node share its uplink", "[contention]") {
  const Cluster c = load("pcie-8gpu");
  const LinkRegistry reg(c);
  ContentionSolver s(reg.capacities());
  // pcie001: GPU0,1 on sw0 and GPU2,3 on sw1, both switches on socket 0 (own host
  // bridges). Job 1 = GPU0 + GPU2, job 2 = GPU1 + GPU3: every hop goes GPU -> sw0 ->
  // root port -> host bridge -> NUMA 0 -> host bridge -> root port -> sw1 -> GPU, all
  // PCIe Gen4 x16 (31.504 GB/s) or host-bridge links (5000 GB/s).
  const auto j1 = s.add_flows(ring_flows(reg, 1, gpus_on(0, {0, 2}), 1));
  s.solve();
  CHECK(s.rate(j1[0]) == Approx(kGen4x16));
  const auto j2 = s.add_flows(ring_flows(reg, 2, gpus_on(0, {1, 3}), 1));
  // Job 3 = GPU4 + GPU5, both on sw2: its hops turn inside the switch and never use an uplink.
  const auto j3 = s.add_flows(ring_flows(reg, 3, gpus_on(0, {4, 5}), 1));
  s.solve();
  // sw0's uplink carries hop 0 -> 2 of job 1 and hop 1 -> 3 of job 2 (up), and the hops
  // back (down): 31.504 / 2 = 15.752 GB/s each.
  CHECK(s.rate(j1[0]) == Approx(kGen4x16 / 2));
  CHECK(s.rate(j2[0]) == Approx(kGen4x16 / 2));
  CHECK(s.owner_slowdown(1) == Approx(2.0));
  CHECK(s.owner_slowdown(2) == Approx(2.0));
  CHECK(s.rate(j3[0]) == Approx(kGen4x16));
  CHECK(s.owner_slowdown(3) == 1.0);
  // Another node's identical job shares nothing with these.
  const auto j4 = s.add_flows(ring_flows(reg, 4, gpus_on(1, {0, 2}), 1));
  s.solve();
  CHECK(s.owner_slowdown(4) == 1.0);
  CHECK(s.owner_slowdown(1) == Approx(2.0));
  s.remove_owner(2);
  s.solve();
  CHECK(s.rate(j1[0]) == Approx(kGen4x16));
  CHECK(s.owner_slowdown(1) == 1.0);
  (void)j4;
}

TEST_CASE("AllToAll: pair flows share the node links", "[contention]") {
  // GPU0 of dgx001..dgx004 (one leaf, non-blocking): 12 pair flows. Each node sends 3 of
  // them out of its NIC port and node link (25 GB/s) and receives 3: 25/3 GB/s each.
  const Cluster c = load("dgx-a100-pod");
  const LinkRegistry reg(c);
  ContentionSolver s(reg.capacities());
  const auto f = s.add_flows(alltoall_flows(reg, 1, {{0, 0}, {1, 0}, {2, 0}, {3, 0}}));
  REQUIRE(f.size() == 12);
  s.solve();
  for (int id : f) CHECK(s.rate(id) == Approx(kHdr / 3));
  CHECK(s.owner_rate(1) == Approx(kHdr / 3));
  CHECK(s.owner_slowdown(1) == 1.0);
  // Inside one NVSwitch node: GPU0's port sends to 3 peers, 300 / 3 = 100 GB/s per pair.
  const auto g = s.add_flows(alltoall_flows(reg, 2, gpus_on(5, {0, 1, 2, 3})));
  s.solve();
  for (int id : g) CHECK(s.rate(id) == Approx(100e9));
  CHECK_THROWS_AS(ring_flows(reg, 3, {{0, 1}, {0, 1}}, 1), std::invalid_argument);
  CHECK_THROWS_AS(ring_flows(reg, 3, {{0, 1}, {0, 2}}, 0), std::invalid_argument);
  CHECK_THROWS_AS(pair_flows(reg, 3, {{{0, 1}, {0, 1}}}), std::invalid_argument);
  CHECK_THROWS_AS(reg.route({0, 8}, {0, 1}), std::out_of_range);
}

namespace {

/// A mix of jobs with contention on the thin-uplink pod: rings across leaves, a ring of
/// full nodes, AllToAll, a capped ring, a weighted pair.
std::vector<std::vector<Flow>> mixed_jobs(const LinkRegistry& reg) {
  std::vector<std::vector<Flow>> jobs;
  jobs.push_back(ring_flows(reg, 0, {{0, 0}, {16, 0}, {1, 0}, {17, 0}}, 2));
  jobs.push_back(ring_flows(reg, 1, {{2, 0}, {2, 1}, {18, 0}, {18, 1}}, 4));
  std::vector<PlacedGpu> big = gpus_on(4, {0, 1, 2, 3, 4, 5, 6, 7});
  for (const PlacedGpu& g : gpus_on(20, {0, 1, 2, 3, 4, 5, 6, 7})) big.push_back(g);
  jobs.push_back(ring_flows(reg, 2, big, 8));
  jobs.push_back(alltoall_flows(reg, 3, {{1, 1}, {17, 1}, {5, 0}, {21, 0}}));
  jobs.push_back(ring_flows(reg, 4, {{6, 0}, {22, 0}}, 1, 5e9));
  auto w = pair_flows(reg, 5, {{{7, 0}, {23, 0}}, {{23, 1}, {7, 1}}});
  for (Flow& f : w) f.weight = 2;
  jobs.push_back(w);
  return jobs;
}

}  // namespace

TEST_CASE("the answer does not depend on the order flows are added", "[contention]") {
  const Cluster c = thin_uplink_pod();
  const LinkRegistry reg(c);
  const auto jobs = mixed_jobs(reg);
  // (job, index within job) of every flow, in three orders: job order, reversed, and a
  // fixed shuffle.
  std::vector<std::pair<int, int>> order;
  for (size_t j = 0; j < jobs.size(); ++j)
    for (size_t i = 0; i < jobs[j].size(); ++i) order.push_back({static_cast<int>(j), static_cast<int>(i)});
  std::vector<std::vector<std::pair<int, int>>> orders = {order, {order.rbegin(), order.rend()}, order};
  uint64_t x = 12345;
  auto& sh = orders[2];
  for (size_t i = sh.size(); i > 1; --i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    std::swap(sh[i - 1], sh[static_cast<size_t>((x >> 33) % i)]);
  }
  std::vector<std::map<std::pair<int, int>, double>> results;
  std::vector<std::vector<double>> slowdowns;
  for (const auto& ord : orders) {
    ContentionSolver s(reg.capacities());
    std::map<std::pair<int, int>, int> id;
    for (const auto& key : ord) id[key] = s.add_flow(jobs[static_cast<size_t>(key.first)][static_cast<size_t>(key.second)]);
    s.solve();
    std::map<std::pair<int, int>, double> r;
    for (const auto& [key, fid] : id) r[key] = s.rate(fid);
    results.push_back(r);
    std::vector<double> sd;
    for (size_t j = 0; j < jobs.size(); ++j) sd.push_back(s.owner_slowdown(static_cast<int>(j)));
    slowdowns.push_back(sd);
  }
  bool contended = false;
  for (double sd : slowdowns[0]) contended = contended || sd > 1.01;
  CHECK(contended);
  for (size_t k = 1; k < results.size(); ++k) {
    for (const auto& [key, r] : results[0]) CHECK(std::abs(results[k].at(key) - r) <= 1e-12 * r);
    for (size_t j = 0; j < jobs.size(); ++j)
      CHECK(std::abs(slowdowns[k][j] - slowdowns[0][j]) <= 1e-12 * slowdowns[0][j]);
  }
}

TEST_CASE("incremental re-solve agrees with a full solve", "[contention]") {
  const Cluster c = thin_uplink_pod();
  const LinkRegistry reg(c);
  const auto jobs = mixed_jobs(reg);
  ContentionSolver s(reg.capacities());
  for (const auto& j : jobs) s.add_flows(j);
  s.solve();
  // Jobs end and start in turns; after each change, solve() (touched components only)
  // against solve_full() on a copy.
  const std::vector<std::pair<bool, int>> steps = {{false, 2}, {false, 0}, {true, 2}, {false, 4}, {true, 0}, {true, 4}};
  for (auto [add, j] : steps) {
    if (add) s.add_flows(jobs[static_cast<size_t>(j)]);
    else s.remove_owner(j);
    ContentionSolver full = s;
    const std::vector<double> inc = s.solve();
    const std::vector<double> all = full.solve_full();
    REQUIRE(inc.size() == all.size());
    for (size_t f = 0; f < inc.size(); ++f) CHECK(std::abs(inc[f] - all[f]) <= 1e-12 * all[f]);
    for (size_t o = 0; o < jobs.size(); ++o)
      CHECK(s.owner_slowdown(static_cast<int>(o)) == Approx(full.owner_slowdown(static_cast<int>(o))).epsilon(1e-12));
  }
  // Removing a job of one node leaves the other components alone: a single-node PCIe
  // job on its own is a component of its own.
  const Cluster pc = load("pcie-8gpu");
  const LinkRegistry preg(pc);
  ContentionSolver p(preg.capacities());
  for (int n = 0; n < 16; ++n) p.add_flows(ring_flows(preg, n, gpus_on(n, {0, 2, 4, 6}), 2));
  p.solve();
  p.remove_owner(5);
  p.solve();
  CHECK(p.last_solve().flows == 0);
  p.add_flows(ring_flows(preg, 5, gpus_on(5, {0, 2, 4, 6}), 2));
  p.solve();
  CHECK(p.last_solve().flows == 2);
}
