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
