#include "models/sched/bestfit.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <numeric>
#include <tuple>

#include "models/sched/baseline.hpp"
#include "sim/cluster/topology.hpp"

namespace gcsim {

namespace {

uint64_t gpu_mask(const std::vector<int>& gpus) {
  uint64_t m = 0;
  for (int g : gpus) m |= 1ULL << g;
  return m;
}

/// The switch at the top of a GPU's PCIe bridge chain, -1 when it sits on a root port.
int top_switch(const NodeTemplate& t, int gpu) {
  int s = t.gpus[gpu].pcie_switch;
  while (s >= 0 && t.pcie_switches[s].parent >= 0) s = t.pcie_switches[s].parent;
  return s;
}

/// GPUs joined by NVLink (a bond, or the NVSwitch fabric), as masks of two or more GPUs.
std::vector<uint64_t> nvlink_islands(const NodeTemplate& t) {
  const int n = static_cast<int>(t.gpus.size());
  std::vector<int> root(n);
  std::iota(root.begin(), root.end(), 0);
  auto find = [&](int x) {
    while (root[x] != x) x = root[x] = root[root[x]];
    return x;
  };
  auto unite = [&](int a, int b) {
    if (a >= 0 && b >= 0 && a < n && b < n) root[find(a)] = find(b);
  };
  if (t.nvlink.kind == NvlinkKind::kNvswitch && t.nvlink.links_per_gpu > 0)
    for (int g = 1; g < n; ++g) unite(0, g);
  if (t.nvlink.kind == NvlinkKind::kPairs)
    for (const auto& p : t.nvlink.pairs)
      if (p.links > 0) unite(p.a, p.b);
  std::map<int, uint64_t> by_root;
  for (int g = 0; g < n; ++g) by_root[find(g)] |= 1ULL << g;
  std::vector<uint64_t> out;
  for (const auto& [r, m] : by_root)
    if (std::popcount(m) > 1) out.push_back(m);
  return out;
}

/// A group of a node's GPUs a job can sit in, and how tight it is (gpu_spread_level).
struct Domain {
  int level;
  uint64_t mask;
};

/// The node's domains, tightest first: one per top PCIe switch (level 0), one per NVLink
/// island and per NUMA domain (level 1); within a level the smaller first; no repeats.
std::vector<Domain> gpu_domains(const NodeTemplate& t) {
  std::map<int, uint64_t> by_switch, by_numa;
  for (int g = 0; g < static_cast<int>(t.gpus.size()); ++g) {
    if (const int s = top_switch(t, g); s >= 0) by_switch[s] |= 1ULL << g;
    by_numa[t.gpus[g].numa] |= 1ULL << g;
  }
  std::vector<Domain> out;
  for (const auto& [s, m] : by_switch) out.push_back({0, m});
  for (uint64_t m : nvlink_islands(t)) out.push_back({1, m});
  for (const auto& [d, m] : by_numa) out.push_back({1, m});
  std::stable_sort(out.begin(), out.end(), [](const Domain& a, const Domain& b) {
    return std::pair(a.level, std::popcount(a.mask)) < std::pair(b.level, std::popcount(b.mask));
  });
  std::vector<Domain> unique;
  for (const auto& d : out)
    if (std::none_of(unique.begin(), unique.end(), [&](const Domain& u) { return u.mask == d.mask; }))
      unique.push_back(d);
  return unique;
}

/// The first (tightest) domain holding every GPU of `m`, -1 when none does.
int tightest_domain(const std::vector<Domain>& doms, uint64_t m) {
  for (size_t i = 0; i < doms.size(); ++i)
    if ((m & ~doms[i].mask) == 0) return static_cast<int>(i);
  return -1;
}

int spread_level(const std::vector<Domain>& doms, uint64_t m) {
  if (std::popcount(m) <= 1) return 0;
  const int d = tightest_domain(doms, m);
  return d < 0 ? 2 : doms[d].level;
}

}  // namespace

int gpu_spread_level(const NodeTemplate& t, const std::vector<int>& gpus) {
  return spread_level(gpu_domains(t), gpu_mask(gpus));
}

struct BestFitPolicy::Leaves {
  const Cluster* cluster = nullptr;
  size_t nodes = 0;
  std::vector<int> of;  // node -> leaf switch, -1 = none
  int count = 0;        // leaf indexes are below this
};

BestFitPolicy::BestFitPolicy() = default;
BestFitPolicy::~BestFitPolicy() = default;

std::vector<std::pair<std::string, std::string>> BestFitPolicy::parameters() const {
  return {{"order", "submit"},
          {"backfill", "easy"},
          {"reservations", "1"},
          {"planning_time", "time_limit"},
          {"one_node", "pcie_switch>nvlink_island|numa>node"},
          {"multi_node", "one_leaf_switch"},
          {"fit", "weight>tightness>fewest_free_gpus_left:node>leaf>island|numa>switch"},
          {"gpu_choice", "allocator_on_masked_view"}};
}

void BestFitPolicy::schedule(SchedContext& ctx) {
  easy_pass(ctx, ctx.pending(), [this](const SchedContext& c, int j, const ClusterState& s) { return place(c, j, s); });
}

const BestFitPolicy::Leaves& BestFitPolicy::leaves(const Cluster& c) const {
  if (leaves_ && leaves_->cluster == &c && leaves_->nodes == c.nodes.size()) return *leaves_;
  auto l = std::make_unique<Leaves>();
  l->cluster = &c;
  l->nodes = c.nodes.size();
  const ClusterTopology topo = build_cluster_topology(c);
  for (int n = 0; n < static_cast<int>(c.nodes.size()); ++n) {
    l->of.push_back(topo.leaf_of(n));
    l->count = std::max(l->count, l->of.back() + 1);
  }
  leaves_ = std::move(l);
  return *leaves_;
}

std::optional<Allocation> BestFitPolicy::place(const SchedContext& ctx, int j, const ClusterState& state) const {
  const JobShape& shape = ctx.shape(j);
  auto a = ctx.allocator().allocate(shape, state, ctx.node_order(j));
  if (!a) return std::nullopt;
  if (shape.nodes_max > 1) return place_multi_node(ctx, j, state, std::move(*a));
  if (shape.exclusive || shape.requested_gpus() <= 0) return a;
  return place_one_node(ctx, j, state, std::move(*a));
}

std::optional<Allocation> BestFitPolicy::place_one_node(const SchedContext& ctx, int j, const ClusterState& state,
                                                        Allocation fallback) const {
  const Cluster& c = state.cluster();
  const Allocator& alloc = ctx.allocator();
  const JobShape& shape = ctx.shape(j);
  const int need = static_cast<int>(shape.requested_gpus());
  const std::vector<int>& order = ctx.node_order(j);
  // Node Weight, spread level, then free GPUs left on the node, under its leaf switch, in
  // the NVLink island or NUMA domain holding the GPUs and under their PCIe switch (so the
  // biggest free blocks stay whole), then node order and try.
  using Key = std::tuple<int, int, int, int64_t, int, int, size_t, size_t>;
  const Leaves& l = leaves(c);
  std::vector<int64_t> leaf_free(static_cast<size_t>(l.count), 0);
  for (int n : order)
    if (l.of[n] >= 0) leaf_free[static_cast<size_t>(l.of[n])] += state.node(n).free_gpus;
  std::optional<Allocation> best;
  Key best_key;
  std::optional<ClusterState> scratch;  // the state with some GPUs shown busy
  for (size_t pos = 0; pos < order.size(); ++pos) {
    const int n = order[pos];
    const std::vector<int> only{n};
    auto plain = alloc.allocate(shape, state, only);
    if (!plain) continue;
    const auto doms = gpu_domains(c.tmpl(n));
    const uint64_t usable = gpu_mask(free_gpus_of_type(shape, state, n));
    auto consider = [&](Allocation a, size_t attempt) {
      const uint64_t m = gpu_mask(a.nodes.front().gpus);
      const int level = spread_level(doms, m);
      const int used = std::popcount(m);
      auto left_in = [&](int lvl) {  // in the smallest domain of that level holding the GPUs
        for (const auto& d : doms)
          if (d.level == lvl && (m & ~d.mask) == 0) return std::popcount(usable & d.mask) - used;
        return 0;
      };
      const int64_t leaf_left = l.of[n] < 0 ? 0 : leaf_free[static_cast<size_t>(l.of[n])] - used;
      const Key k{c.nodes[n].weight, level, state.node(n).free_gpus - used, leaf_left, left_in(1), left_in(0), pos, attempt};
      if (!best || k < best_key) {
        best = std::move(a);
        best_key = k;
      }
      return level;
    };
    const int plain_level = consider(std::move(*plain), 0);
    // Ask again with only one domain's GPUs visible, for domains as tight as that or tighter.
    for (size_t i = 0; i < doms.size() && doms[i].level <= plain_level; ++i) {
      const uint64_t hide = state.node(n).gpu_free & ~doms[i].mask;
      if (std::popcount(usable & doms[i].mask) < need || hide == 0) continue;
      Allocation hidden;
      hidden.nodes.emplace_back();
      hidden.nodes.front().node = n;
      for (int g = 0; g < 64; ++g)
        if (hide >> g & 1) hidden.nodes.front().gpus.push_back(g);
      if (!scratch) scratch.emplace(state);
      scratch->allocate(hidden);
      auto a = alloc.allocate(shape, *scratch, only);
      scratch->release(hidden);
      if (a) consider(std::move(*a), i + 1);
    }
  }
  return best ? best : std::optional<Allocation>(std::move(fallback));
}

std::optional<Allocation> BestFitPolicy::place_multi_node(const SchedContext& ctx, int j, const ClusterState& state,
                                                          Allocation fallback) const {
  const Leaves& l = leaves(state.cluster());
  if (l.count == 0) return fallback;
  const JobShape& shape = ctx.shape(j);
  const bool gpu_job = shape.requested_gpus() > 0;
  std::vector<std::vector<int>> by_leaf(static_cast<size_t>(l.count));
  for (int n : ctx.node_order(j))
    if (l.of[n] >= 0) by_leaf[static_cast<size_t>(l.of[n])].push_back(n);
  // Highest node Weight used, free GPUs (CPU jobs: cores) the leaf keeps, leaf.
  using Key = std::tuple<int, int64_t, size_t>;
  std::optional<Allocation> best;
  Key best_key;
  for (size_t leaf = 0; leaf < by_leaf.size(); ++leaf) {
    if (by_leaf[leaf].empty()) continue;
    auto a = ctx.allocator().allocate(shape, state, by_leaf[leaf]);
    if (!a) continue;
    int64_t left = gpu_job ? -a->gpus() : -a->cores();
    for (int n : by_leaf[leaf]) left += gpu_job ? state.node(n).free_gpus : state.node(n).free_cores;
    int weight = 0;
    for (const auto& na : a->nodes) weight = std::max(weight, state.cluster().nodes[na.node].weight);
    const Key k{weight, left, leaf};
    if (!best || k < best_key) {
      best = std::move(a);
      best_key = k;
    }
  }
  return best ? best : std::optional<Allocation>(std::move(fallback));
}

}  // namespace gcsim
