// SlurmSelector::may_select (models/sched/slurm_select): the free-core test the slurm
// policy's backfill runs at every will-run batch instead of choosing nodes. On the
// shipped Curie slurm.conf (memory per CPU, three node kinds) and the oracle's GPU and
// topology/tree cases, filled step by step with real selections and restricted to
// random node masks as backfill's reservation table restricts them:
//  - may_select never refuses what select() chooses (a necessary condition);
//  - where it calls itself exact, select() succeeds every time (backfill then takes
//    the batch as fitting without choosing), and on Curie both outcomes occur;
//  - at the edge (just enough free cores on the allowed nodes, and one node fewer) it
//    decides as select() does;
//  - may_select_counted, given the allowed nodes' free-core sum, and may_select given
//    them as bits answer as may_select;
//  - select() with capacities from free counts (exact shapes) chooses and places as
//    with capacity() on every node;
//  - plan_nodes (backfill's reservation nodes for exact shapes) gives select()'s nodes.
#include <catch2/catch.hpp>

#include <random>

#include "models/sched/slurm_select.hpp"
#include "sim/cluster/import_slurm_conf.hpp"
#include "sim/placement/job_shape.hpp"
#include "sim/workload/sbatch_options.hpp"
#include "tests/unit/state_walk.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;

TEST_CASE("may_select never refuses a selection and is exact where it says so", "[slurm][select]") {
  const std::vector<std::string> args = {"-n 1",          "-n 16",          "-n 17",          "-n 600",
                                         "-n 4000",       "-n 30000",       "-n 9 -c 2",      "-N 2 -n 4",      "-N 3 --ntasks-per-node=5",
                                         "-n 5 --mem-per-cpu=20G",          "-n 3 --mem=60G", "--exclusive -n 8",
                                         "-n 1 --gpus=1", "-N 2 --gpus-per-node=2",           "-n 2 --gpus-per-task=1"};
  for (const std::string conf : {"configs/curie/slurm.conf", "tests/oracle/gpu-sockets/slurm.conf",
                                 "tests/oracle/topo-tree/slurm.conf"}) {
    Diagnostics w;
    const Cluster c = load_slurm_conf(test::src(conf), w);
    const SlurmSchedConfig cfg = read_slurm_sched_config(c, {}, w);
    const SlurmSelector sel(c, cfg);
    SlurmSelector general(c, cfg);  // capacities from capacity() for every shape
    general.set_count_caps(false);
  // light: no shape takes more than its cores' share of memory, as in an SWF log under
  // DefMemPerCPU, so the free cores decide (a held memory-heavy job ends that for good)
  for (bool light : {false, true}) {
    std::vector<JobShape> shapes;
    for (const auto& a : args) {
      if (light && (a.find("--mem") != std::string::npos || a.find("--exclusive") != std::string::npos)) continue;
      // shapes the cluster cannot hold at all (GPUs on Curie's thin-only mask, say) stay in
      Job j;
      j.id = JobId(1);
      Diagnostics d;
      REQUIRE(parse_sbatch_options(a, SourceLoc{"test", 1, 1}, j.req, d));
      std::string why;
      if (auto s = make_job_shape(j, c, &why)) shapes.push_back(*s);
    }
    REQUIRE(shapes.size() > 6);
    ClusterState state(c);
    std::mt19937_64 rng(11);
    std::vector<Allocation> held;
    int placed = 0, exact_fit = 0, refused = 0, edges = 0, counted = 0, planned = 0;
    for (int step = 0; step < 400; ++step) {
      const JobShape& s = shapes[rng() % shapes.size()];
      std::vector<uint8_t> allowed(c.nodes.size(), 0);
      const bool masked = rng() % 2 == 0;  // about half the steps leave a random fifth out
      for (int n : c.partitions[s.partition].nodes) allowed[n] = masked ? rng() % 5 != 0 : 1;
      const auto plan = sel.select(s, state, allowed, SimTime{}, nullptr, false);
      // the count-built capacities of exact shapes choose what capacity() would
      const auto general_plan = general.select(s, state, allowed, SimTime{}, nullptr, false);
      REQUIRE(plan.has_value() == general_plan.has_value());
      if (plan) {
        REQUIRE(plan->nodes.size() == general_plan->nodes.size());
        for (size_t i = 0; i < plan->nodes.size(); ++i) {
          CHECK(plan->nodes[i].node == general_plan->nodes[i].node);
          CHECK(plan->nodes[i].tasks == general_plan->nodes[i].tasks);
        }
      }
      // the allowed nodes as bits, as backfill keeps them
      std::vector<uint64_t> words(state.node_words(), 0);
      for (size_t n = 0; n < allowed.size(); ++n)
        if (allowed[n]) words[n >> 6] |= uint64_t{1} << (n & 63);
      if (sel.select_is_exact(s, state)) {
        // backfill's reservation nodes are select()'s
        const auto ranges = sel.plan_nodes(s, state, words.data());
        REQUIRE(ranges.has_value() == plan.has_value());
        if (plan) {
          std::vector<int> nodes, want;
          for (const auto& [first, last] : *ranges) {
            CHECK(first <= last);
            for (int n = first; n <= last; ++n) nodes.push_back(n);
          }
          for (const auto& na : plan->nodes) want.push_back(na.node);
          CHECK(nodes == want);
          ++planned;
        }
      } else {
        CHECK_THROWS_AS(sel.plan_nodes(s, state, state.open_bits()), std::logic_error);
      }
      bool is_exact = false, words_exact = false;
      const bool may = sel.may_select(s, state, allowed, &is_exact);
      CHECK(sel.may_select(s, state, words.data(), &words_exact) == may);
      CHECK(words_exact == is_exact);
      INFO(conf << " step " << step << " tasks " << s.tasks);
      if (plan) CHECK(may);
      if (SlurmSelector::free_core_sum_decides_bound(s)) {
        // the counted form, as backfill calls it with the sum it keeps, answers the same
        int64_t free = 0;
        for (size_t n = 0; n < allowed.size(); ++n)
          if (allowed[n]) free += state.node(static_cast<int>(n)).free_cores;
        bool counted_exact = false;
        CHECK(sel.may_select_counted(s, state, free, &counted_exact) == may);
        CHECK(counted_exact == is_exact);
        if (free > 0) CHECK_FALSE(sel.may_select_counted(s, state, std::min<int64_t>(free, s.tasks) - 1, &counted_exact));
        ++counted;
      }
      if (is_exact) {
        CHECK(plan.has_value());
        ++exact_fit;
      }
      if (!may) ++refused;  // select() failed too (checked above)
      // At the edge: the fewest nodes, in partition order, whose free cores hold the
      // tasks, and the same less the last one. The first must select, the second not.
      if (is_exact && !s.exclusive) {
        std::vector<uint8_t> edge(c.nodes.size(), 0);
        int64_t sum = 0;
        int last = -1;
        for (int n : c.partitions[s.partition].nodes) {
          if (sum >= s.tasks) break;
          if (!allowed[n] || state.node(n).free_cores == 0) continue;
          edge[n] = 1;
          sum += state.node(n).free_cores;
          last = n;
        }
        REQUIRE(last >= 0);
        bool e = false;
        CHECK(sel.may_select(s, state, edge, &e));
        CHECK(e);
        CHECK(sel.select(s, state, edge, SimTime{}, nullptr, false).has_value());
        edge[last] = 0;
        CHECK_FALSE(sel.may_select(s, state, edge, &e));
        CHECK_FALSE(sel.select(s, state, edge, SimTime{}, nullptr, false).has_value());
        ++edges;
      }
      if (plan && !s.cpu_only()) CHECK(plan->nodes.front().gpus.size() > 0);  // GPU plans are placed
      // Hold a placed selection, or release an older one (about one step in three).
      auto a = sel.select(s, state, allowed, SimTime{});
      CHECK(a.has_value() == plan.has_value());
      if (a) {
        const auto g = general.select(s, state, allowed, SimTime{});
        REQUIRE(g.has_value());
        REQUIRE(g->nodes.size() == a->nodes.size());
        for (size_t i = 0; i < a->nodes.size(); ++i) CHECK(g->nodes[i].cores == a->nodes[i].cores);
      }
      placed += test::hold_or_release(state, held, a, rng, 3);
    }
    INFO(conf << (light ? " light" : "") << ": " << exact_fit << " exact fits, " << refused << " refused");
    CHECK(placed > 30);
    if (light && conf == "configs/curie/slurm.conf") {  // memory per CPU, no topology: the backfill case
      CHECK(exact_fit > 20);
      CHECK(refused > 5);
      CHECK(edges > 20);
      CHECK(counted > 50);
      CHECK(planned > 20);
    }
  }
  }
}

TEST_CASE("whole-word sums choose as node sums do", "[slurm][select]") {
  // Curie: thin nodes 0-5039 (16 cores), fat 5040-5399 (32). Allowed: one word of 64 fat
  // nodes (5056-5119) and a run of 70 thin ones. For 17 to 31 tasks a fat node counts
  // min(32, tasks): the fat set (64 x tasks CPUs) is tighter than the thin run (70 x 16)
  // up to 17 tasks, looser from 18. Counting the fat word's 32 free cores per node
  // would call it looser at 17 too. Both sets hold the job, so the tighter one gives
  // the node: one fat node, or two thin ones.
  Diagnostics w;
  const Cluster c = load_slurm_conf(test::src("configs/curie/slurm.conf"), w);
  const SlurmSchedConfig cfg = read_slurm_sched_config(c, {}, w);
  const SlurmSelector sel(c, cfg);
  SlurmSelector general(c, cfg);
  general.set_count_caps(false);
  const ClusterState state(c);
  std::vector<uint8_t> allowed(c.nodes.size(), 0);
  std::vector<uint64_t> words(state.node_words(), 0);
  auto allow = [&](int n) {
    allowed[n] = 1;
    words[static_cast<size_t>(n) >> 6] |= uint64_t{1} << (n & 63);
  };
  // plan_nodes against the general select on the allowed nodes: the nodes both chose
  // (empty when neither found any)
  auto chosen = [&](int tasks) {
    Job j;
    j.id = JobId(1);
    Diagnostics d;
    REQUIRE(parse_sbatch_options("-n " + std::to_string(tasks), SourceLoc{"test", 1, 1}, j.req, d));
    const auto s = make_job_shape(j, c, nullptr);
    REQUIRE(s);
    REQUIRE(sel.select_is_exact(*s, state));
    const auto want = general.select(*s, state, allowed, SimTime{}, nullptr, false);
    const auto got = sel.plan_nodes(*s, state, words.data());
    INFO("tasks " << tasks);
    REQUIRE(want.has_value() == got.has_value());
    std::vector<int> nodes, want_nodes;
    if (!want) return want_nodes;
    for (const auto& [first, last] : *got)
      for (int n = first; n <= last; ++n) nodes.push_back(n);
    for (const auto& na : want->nodes) want_nodes.push_back(na.node);
    CHECK(nodes == want_nodes);
    return want_nodes;
  };
  for (int n = 5056; n < 5120; ++n) allow(n);
  for (int n = 100; n < 170; ++n) allow(n);
  for (int tasks : {1, 16, 17, 18, 31, 32, 33, 64, 2000}) {
    const auto want_nodes = chosen(tasks);
    INFO("tasks " << tasks);
    if (want_nodes.empty()) continue;
    if (tasks == 17) CHECK(want_nodes.front() >= 5056);  // the fat set is the tighter
    if (tasks == 18) CHECK(want_nodes.front() < 5040);
  }
  // Two whole words: thin 128-191 (1,024 cores) and the fat word. At 1,024 tasks the
  // thin word holds the job exactly, so it is the tighter sufficient set; one core short
  // in its word sum and the fat word would be chosen.
  std::fill(allowed.begin(), allowed.end(), 0);
  std::fill(words.begin(), words.end(), 0);
  for (int n = 5056; n < 5120; ++n) allow(n);
  for (int n = 128; n < 192; ++n) allow(n);
  for (int tasks : {1023, 1024, 1025}) {
    const auto want_nodes = chosen(tasks);
    INFO("tasks " << tasks);
    REQUIRE(!want_nodes.empty());
    if (tasks == 1024) CHECK(want_nodes.front() == 128);
  }
}
