// ClusterState's free-core bits (sim/placement/node_state): every node's cores live in
// one flat word array, so a copy (EASY's shadow state) is two memcpys. On
// configs/mixed.yaml (nodes of 40, 128 and 64 cores: bits that end mid-word, exactly
// on a word, and span two words), random allocate/release steps are checked against a
// plain per-core model, and a copied state is checked to be independent of its source.
#include <catch2/catch.hpp>

#include <random>

#include "sim/cluster/cluster_yaml.hpp"
#include "sim/placement/node_state.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;

namespace {

using Model = std::vector<std::vector<bool>>;  // [node][core] free

void require_equal(const ClusterState& s, const Model& m) {
  int64_t total = 0;
  for (size_t n = 0; n < m.size(); ++n) {
    const CoreBits bits = s.core_free(static_cast<int>(n));
    REQUIRE(bits.size() == static_cast<int>(m[n].size()));
    int free = 0;
    for (size_t c = 0; c < m[n].size(); ++c) {
      INFO("node " << n << " core " << c);
      REQUIRE(bits[static_cast<int>(c)] == m[n][c]);
      free += m[n][c] ? 1 : 0;
    }
    REQUIRE(bits.count() == free);
    REQUIRE(bits.all() == (free == bits.size()));
    REQUIRE(s.node(static_cast<int>(n)).free_cores == free);
    total += free;
  }
  REQUIRE(s.free_cores_total() == total);
}

}  // namespace

TEST_CASE("ClusterState keeps each node's core bits apart and copies by value", "[placement][node_state]") {
  const Cluster c = load_cluster_yaml(test::src("configs/mixed.yaml"));
  REQUIRE(c.nodes.size() >= 3);
  ClusterState s(c);
  Model m(c.nodes.size());
  for (size_t n = 0; n < m.size(); ++n) m[n].assign(static_cast<size_t>(c.tmpl(static_cast<int>(n)).cores()), true);
  require_equal(s, m);

  std::mt19937_64 rng(17);
  std::vector<Allocation> held;
  for (int step = 0; step < 400; ++step) {
    if (!held.empty() && rng() % 3 == 0) {
      const size_t k = rng() % held.size();
      s.release(held[k]);
      for (const auto& na : held[k].nodes)
        for (int core : na.cores) m[static_cast<size_t>(na.node)][static_cast<size_t>(core)] = true;
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(k));
    } else {
      // Up to three nodes, a random subset of each one's free cores (word edges included).
      Allocation a;
      std::vector<int> nodes(c.nodes.size());
      for (size_t n = 0; n < nodes.size(); ++n) nodes[n] = static_cast<int>(n);
      std::shuffle(nodes.begin(), nodes.end(), rng);
      nodes.resize(std::min<size_t>(nodes.size(), 1 + rng() % 3));
      std::sort(nodes.begin(), nodes.end());
      for (int n : nodes) {
        NodeAlloc na;
        na.node = n;
        na.tasks = 1;
        for (size_t core = 0; core < m[static_cast<size_t>(n)].size(); ++core)
          if (m[static_cast<size_t>(n)][core] && rng() % 4 == 0) na.cores.push_back(static_cast<int>(core));
        if (!na.cores.empty()) a.nodes.push_back(na);
      }
      if (a.nodes.empty()) continue;
      REQUIRE(s.fits(a));
      s.allocate(a);
      for (const auto& na : a.nodes)
        for (int core : na.cores) m[static_cast<size_t>(na.node)][static_cast<size_t>(core)] = false;
      REQUIRE_FALSE(s.fits(a));
      held.push_back(a);
    }
    require_equal(s, m);
  }

  // A copy is a separate state: taking its cores leaves the source as it was.
  ClusterState copy = s;
  const Model before = m;
  for (const auto& a : held) copy.release(a);
  require_equal(s, before);
  Model all = m;
  for (auto& node : all) std::fill(node.begin(), node.end(), true);
  require_equal(copy, all);
}

TEST_CASE("CoreMask sets and clears single cores across word edges", "[placement][node_state]") {
  CoreMask mask(130);
  REQUIRE(mask.bits().all());
  for (int core : {0, 63, 64, 127, 128, 129}) {
    mask.set(core, false);
    REQUIRE_FALSE(mask[core]);
  }
  REQUIRE(mask.bits().count() == 124);
  REQUIRE(mask[1]);
  REQUIRE(mask[62]);
  REQUIRE(mask[65]);
  mask.set(64, true);
  REQUIRE(mask[64]);
  REQUIRE(mask.bits().count() == 125);
  REQUIRE(CoreMask(70, false).bits().count() == 0);
}

TEST_CASE("CoreBits answers for a range of cores as a core-by-core walk does", "[placement][node_state]") {
  // any/count/for_each work a word at a time with masks at both ends; the ranges
  // here start and end inside, at and across word edges (socket ranges of a DGX
  // node's 128 cores, of a 3-socket 150-core node, and arbitrary ones).
  std::mt19937_64 rng(3);
  for (int cores : {1, 63, 64, 65, 128, 150, 200}) {
    CoreMask mask(cores, false);
    for (int round = 0; round < 40; ++round) {
      for (int k = 0; k < cores / 3 + 1; ++k) mask.set(static_cast<int>(rng() % cores), rng() % 2 == 0);
      const CoreBits bits = mask.bits();
      for (int t = 0; t < 30; ++t) {
        int first = static_cast<int>(rng() % (cores + 1)), last = static_cast<int>(rng() % (cores + 1));
        if (first > last) std::swap(first, last);
        std::vector<int> walk, listed;
        for (int c = first; c < last; ++c)
          if (bits[c]) walk.push_back(c);
        bits.for_each(first, last, [&](int c) { listed.push_back(c); });
        INFO(cores << " cores, [" << first << ", " << last << ")");
        CHECK(listed == walk);
        CHECK(bits.count(first, last) == static_cast<int>(walk.size()));
        CHECK(bits.any(first, last) == !walk.empty());
      }
    }
  }
}

TEST_CASE("A summary state follows allocate and release with the counters of a full one", "[placement][node_state]") {
  // Backfill's future states for the shapes free cores decide are summaries: what they
  // answer must be what the full state would, step for step, GPUs and memory included.
  const Cluster c = load_cluster_yaml(test::src("configs/mixed.yaml"));
  ClusterState full(c);
  std::mt19937_64 rng(23);
  std::vector<Allocation> held;
  auto take = [&](ClusterState& s) {
    Allocation a;
    for (size_t n = 0; n < c.nodes.size(); ++n) {
      if (rng() % 2 != 0) continue;
      NodeAlloc na;
      na.node = static_cast<int>(n);
      na.tasks = 1;
      const CoreBits free = s.core_free(na.node);
      for (int core = 0; core < free.size(); ++core)
        if (free[core] && rng() % 3 == 0) na.cores.push_back(core);
      const NodeState& ns = s.node(na.node);
      for (int g = 0; g < 64; ++g)
        if ((ns.gpu_free >> g & 1U) != 0 && rng() % 2 == 0) na.gpus.push_back(g);
      // a quarter of them hold more than their cores' share of memory
      const auto& t = c.tmpl(na.node);
      const int64_t share = t.memory_mb * static_cast<int64_t>(na.cores.size()) / std::max(1, t.cores());
      na.mem_mb = std::min<int64_t>(ns.free_mem_mb, rng() % 4 == 0 ? share + 1024 : share);
      if (!na.cores.empty()) a.nodes.push_back(na);
    }
    return a;
  };
  auto require_same = [&](const ClusterState& s, const ClusterState& f) {
    REQUIRE(s.summary());
    REQUIRE_FALSE(f.summary());
    REQUIRE(s.changes() == f.changes());
    REQUIRE(s.free_cores_total() == f.free_cores_total());
    REQUIRE(s.free_gpus_total() == f.free_gpus_total());
    REQUIRE(s.node_words() == f.node_words());
    for (size_t w = 0; w < f.node_words(); ++w) {
      REQUIRE(s.open_bits()[w] == f.open_bits()[w]);
      REQUIRE(s.word_free_cores(w) == f.word_free_cores(w));
    }
    for (size_t n = 0; n < c.nodes.size(); ++n) REQUIRE(s.free_cores_by_node()[n] == f.free_cores_by_node()[n]);
    for (int64_t mb : {0, 1024, 3072, 8192, 1 << 20}) REQUIRE(s.memory_follows_cores(mb) == f.memory_follows_cores(mb));
  };
  ClusterState sum = ClusterState::summary_of(full);
  require_same(sum, full);
  int heavy_seen = 0;
  for (int step = 0; step < 300; ++step) {
    if (!held.empty() && rng() % 3 == 0) {
      const size_t k = rng() % held.size();
      full.release(held[k]);
      sum.release(held[k]);
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(k));
    } else {
      Allocation a = take(full);
      if (a.nodes.empty()) continue;
      REQUIRE(sum.fits(a));
      full.allocate(a);
      sum.allocate(a);
      for (const auto& na : a.nodes) heavy_seen += full.memory_heavy(na) ? 1 : 0;
      held.push_back(std::move(a));
    }
    INFO("step " << step);
    require_same(sum, full);
    // a summary of a summary, made mid-way, goes on the same way
    if (step == 150) sum = ClusterState::summary_of(ClusterState::summary_of(full));
  }
  REQUIRE(heavy_seen > 0);
  REQUIRE_FALSE(full.memory_follows_cores(1));
  // a summary refuses cores that a node does not have free, as a full state does
  Allocation too_many;
  NodeAlloc na;
  na.node = 0;
  for (int core = 0; core < c.tmpl(0).cores(); ++core) na.cores.push_back(core);
  too_many.nodes.push_back(na);
  REQUIRE(full.free_cores_by_node()[0] < c.tmpl(0).cores());
  REQUIRE_FALSE(sum.fits(too_many));
  REQUIRE_THROWS_AS(sum.allocate(too_many), std::logic_error);
  require_same(sum, full);  // unchanged by the refusal
  for (const auto& a : held) {
    full.release(a);
    sum.release(a);
  }
  require_same(sum, full);
  REQUIRE(sum.free_cores_total() == ClusterState(c).free_cores_total());
}
