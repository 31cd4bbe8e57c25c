// FitBound and Allocator::fits (sim/placement/allocator): the node-by-node bound that
// EASY's shadow search and the submit-time check use instead of placing. On the shipped
// clusters, filled step by step with real placements, for CPU and GPU shapes under every
// placement mode:
//  - the bound never refuses what allocate() places (it is a necessary condition);
//  - where the allocator calls it exact (packed CPU-only shapes, slurm/unbound/linear),
//    fits() agrees with allocate() every time;
//  - a bound kept current by refresh() after each allocate/release equals a fresh one;
//  - for packed CPU-only shapes it equals the node-by-node sum computed here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <tuple>

#include "models/placement/placement.hpp"
#include "sim/cluster/cluster_yaml.hpp"
#include "sim/cluster/import_slurm_conf.hpp"
#include "sim/placement/job_shape.hpp"
#include "sim/workload/sbatch_options.hpp"
#include "tests/unit/state_walk.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;

namespace {

JobShape shape_of(const Cluster& c, const std::string& args) {
  Job j;
  j.id = JobId(1);
  Diagnostics d;
  REQUIRE(parse_sbatch_options(args, SourceLoc{"test", 1, 1}, j.req, d));
  std::string why;
  auto s = make_job_shape(j, c, &why);
  INFO(args << ": " << why);
  REQUIRE(s);
  return *s;
}

// mixed.yaml with one partition of every node, as an SWF-inferred cluster has.
Cluster mixed_one_partition() {
  Cluster c = load_cluster_yaml(test::src("configs/mixed.yaml"));
  auto& every = c.partitions[static_cast<size_t>(c.default_partition())].nodes;
  every.resize(c.nodes.size());
  for (size_t n = 0; n < every.size(); ++n) every[n] = static_cast<int>(n);
  return c;
}

// Every node filled, with its cores' share of memory, but for 3 free cores on each of
// the first three (9 free cores in all, none of them a pair on one node beyond 3).
ClusterState filled_leaving_three(const Cluster& c) {
  Allocation fill;
  for (int n = 0; n < static_cast<int>(c.nodes.size()); ++n) {
    NodeAlloc na;
    na.node = n;
    na.tasks = 1;
    const int keep = n < 3 ? 3 : 0;
    const int cores = c.tmpl(n).cores();
    for (int core = 0; core < cores - keep; ++core) na.cores.push_back(core);
    na.mem_mb = c.tmpl(n).memory_mb * (cores - keep) / cores;
    fill.nodes.push_back(na);
  }
  ClusterState state(c);
  state.allocate(fill);
  REQUIRE(state.free_cores_total() == 9);
  return state;
}

}  // namespace

TEST_CASE("FitBound never refuses a placement and is exact where the allocator says so", "[placement][fitbound]") {
  const std::vector<std::string> args = {"-n 1", "-n 3", "-n 7 -c 2", "-n 40", "-n 130", "-N 2 -n 4",
                                         "-N 3 --ntasks-per-node=5", "-n 2 --mem-per-cpu=4G", "-n 3 --mem=300G",
                                         "-n 5 --mem-per-cpu=40G", "--exclusive -n 20",
                                         "-n 1 --gpus=1", "-n 2 --gpus=3", "-N 2 --gpus-per-node=2",
                                         "-n 4 --gpus-per-task=1", "-n 1 -c 4 --gpus=2"};
  // The last entry is mixed.yaml as a cluster inferred from an SWF log would be: memory
  // not modelled, one partition of every node. One-core-per-task shapes then take the
  // free-core-total path.
  for (const std::string file : {"configs/pcie-8gpu.yaml", "configs/dgx-a100-pod.yaml", "configs/mixed.yaml",
                                 "configs/mixed.yaml (no memory)"}) {
    const bool no_memory = file.ends_with("(no memory)");
    Cluster c = load_cluster_yaml(test::src(no_memory ? "configs/mixed.yaml" : file));
    if (no_memory) {
      for (auto& t : c.templates) t.memory_mb = 0;
      c.def_mem_per_cpu_mb.reset();
      c.def_mem_per_gpu_mb.reset();
      auto& every = c.partitions[static_cast<size_t>(c.default_partition())].nodes;  // it takes every node
      every.resize(c.nodes.size());
      for (size_t n = 0; n < every.size(); ++n) every[n] = static_cast<int>(n);
    }
    std::vector<JobShape> shapes;
    for (const auto& a : args) shapes.push_back(shape_of(c, a));
    for (PlacementMode mode : {PlacementMode::kSlurm, PlacementMode::kUnbound, PlacementMode::kNumaBound,
                               PlacementMode::kK8sSingleNuma}) {
      PlacementAllocator alloc(mode);
      alloc.keep_cpu_job_bindings(false);
      ClusterState state(c);
      std::mt19937_64 rng(7);
      std::vector<FitBound> bounds;
      for (const auto& s : shapes) bounds.emplace_back(s, state, partition_node_order(c, s.partition));
      std::vector<Allocation> held;
      int exact_checked = 0, placed = 0, whole_cluster_checked = 0, memory_decided = 0, memory_not_decided = 0;
      for (int step = 0; step < 300; ++step) {
        const auto& s = shapes[rng() % shapes.size()];
        const auto& order = partition_node_order(c, s.partition);
        auto a = alloc.allocate(s, state, order);
        const bool bound = FitBound(s, state, order).may_fit();
        INFO(file << " " << placement_mode_name(mode) << " step " << step);
        if (a) CHECK(bound);
        if (alloc.bound_is_exact(s)) {
          CHECK(bound == a.has_value());
          ++exact_checked;
        }
        CHECK(alloc.fits(s, state, order) == a.has_value());
        // Packed CPU-only shapes: the bound summed node by node here, as the oracle (the
        // allocator decides one-core-per-task shapes from the free-core total alone).
        if (!s.fixed_nodes && s.gpus_total == 0 && s.gpus_per_node == 0 && s.gpus_per_task == 0 &&
            s.cpus_per_gpu == 0) {
          int64_t sum = 0;
          for (int n : order) sum += std::min(s.tasks, max_tasks_on_node(s, state, n));
          CHECK(bound == (totals_allow(s, state) && sum >= s.tasks));
          if (order.size() == state.size() && s.cpus_per_task <= 1 && s.mem_per_cpu_mb <= 0 && !s.exclusive)
            ++whole_cluster_checked;
        }
        // Where the free-core total decides (memory per CPU included, while no held
        // allocation takes more than its cores' share of a node's memory), it agrees
        // with the node-by-node bound.
        if (FitBound::decided_by_free_cores(s, state, order)) {
          CHECK(bound == (state.free_cores_total() >= s.tasks));
          if (s.mem_per_cpu_mb > 0) ++memory_decided;
        } else if (s.mem_per_cpu_mb > 0 && order.size() == state.size() && !s.exclusive && s.cpus_per_task <= 1 &&
                   s.gpus_total == 0 && !s.fixed_nodes && s.tasks_per_node <= 0) {
          ++memory_not_decided;
        }
        // Hold it, or release an older one (about one in three steps).
        placed += test::hold_or_release(state, held, a, rng, 3, [&](const Allocation& x) {
          for (auto& b : bounds) b.refresh(x);
        });
        for (size_t i = 0; i < shapes.size(); ++i)
          CHECK(bounds[i].may_fit() ==
                FitBound(shapes[i], state, partition_node_order(c, shapes[i].partition)).may_fit());
      }
      CHECK(placed > 20);
      if (no_memory) CHECK(whole_cluster_checked > 20);  // the free-core-total case is exercised
      if (file == "configs/dgx-a100-pod.yaml") {
        // One partition of every node and DefMemPerCPU: memory per CPU decided by the
        // free cores while memory-light (early: GPU jobs' DefMemPerGPU and the heavy
        // shapes soon end that), node by node once a heavy job is held.
        CHECK(memory_decided > 0);
        CHECK(memory_not_decided > 10);
      }
      if (mode == PlacementMode::kSlurm || mode == PlacementMode::kUnbound) CHECK(exact_checked > 50);
    }
  }
}

TEST_CASE("FitBound on a memory-less cluster decides at the exact edge of the free cores", "[placement][fitbound]") {
  // mixed.yaml as an SWF-inferred cluster is: memory not modelled, one partition of
  // every node.
  Cluster c = mixed_one_partition();
  for (auto& t : c.templates) t.memory_mb = 0;
  c.def_mem_per_cpu_mb.reset();
  c.def_mem_per_gpu_mb.reset();
  ClusterState state = filled_leaving_three(c);
  PlacementAllocator alloc(PlacementMode::kSlurm);
  alloc.keep_cpu_job_bindings(false);
  const int tpc = c.tmpl(0).threads_per_core;
  REQUIRE(tpc == 2);
  // {sbatch options, fits}: one core per task fits up to the 9 free cores; two cores
  // per task (-c 4 on SMT2) fit one task per node, so 3 tasks and not 4.
  const std::vector<std::pair<std::string, bool>> cases = {
      {"-n 9", true}, {"-n 10", false}, {"-n 9 -c 2", true}, {"-n 10 -c 2", false},
      {"-n 3 -c 4", true}, {"-n 4 -c 4", false}, {"-n 1 -c 6", true}, {"-n 1 -c 8", false}};
  const auto& order = partition_node_order(c, c.default_partition());
  REQUIRE(order.size() == state.size());
  for (const auto& [args, fits] : cases) {
    INFO(args);
    const JobShape s = shape_of(c, args);
    CHECK(FitBound(s, state, order).may_fit() == fits);
    CHECK(alloc.fits(s, state, order) == fits);
    CHECK(alloc.allocate(s, state, order).has_value() == fits);
  }
}

TEST_CASE("Free cores decide memory per CPU only while no held job is memory-heavy", "[placement][fitbound]") {
  // mixed.yaml with its memory and DefMemPerCPU=3GiB, one partition of every node: the
  // least memory per CPU of its nodes is 4 GiB (1 TiB over 128 cores of 2 threads).
  const Cluster c = mixed_one_partition();
  ClusterState state = filled_leaving_three(c);
  PlacementAllocator alloc(PlacementMode::kSlurm);
  alloc.keep_cpu_job_bindings(false);
  const auto& order = partition_node_order(c, c.default_partition());
  auto check = [&](const std::string& args, bool decided, bool fits) {
    INFO(args);
    const JobShape s = shape_of(c, args);
    REQUIRE(s.mem_per_cpu_mb > 0);
    CHECK(FitBound::decided_by_free_cores(s, state, order) == decided);
    CHECK(FitBound(s, state, order).may_fit() == fits);
    CHECK(alloc.fits(s, state, order) == fits);
    CHECK(alloc.allocate(s, state, order).has_value() == fits);
  };
  check("-n 9", true, true);  // DefMemPerCPU
  check("-n 10", true, false);
  check("-n 9 --mem-per-cpu=4G", true, true);
  check("-n 9 --mem-per-cpu=5G", false, false);  // more than the 1 TiB nodes' share: node by node
  // A job holding node 0's memory but one GB and no core: node 0's free cores can no
  // longer take a task, and the free-core total no longer decides.
  Allocation heavy;
  NodeAlloc h;
  h.node = 0;
  h.mem_mb = state.node(0).free_mem_mb - 1024;
  heavy.nodes.push_back(h);
  REQUIRE(state.memory_heavy(h));
  state.allocate(heavy);
  check("-n 9", false, false);
  check("-n 6", false, true);
  state.release(heavy);
  check("-n 9", true, true);
}

namespace {

// What a one-node job gets in Slurm's order computed the plain way: every node of the
// order ranked by (sched_weight, available CPUs, position), fully sorted, and the first
// one take_on_node accepts.
std::optional<Allocation> one_node_by_full_sort(const PlacementAllocator& alloc, const JobShape& s,
                                                const ClusterState& state, const std::vector<int>& order) {
  std::vector<std::tuple<int64_t, int64_t, size_t, int>> keys;
  for (size_t i = 0; i < order.size(); ++i) {
    const int n = order[i];
    keys.emplace_back(slurm_sched_weight(s, state, n),
                      int64_t{state.node(n).free_cores} * state.cluster().tmpl(n).threads_per_core, i, n);
  }
  std::sort(keys.begin(), keys.end());
  const int gpus = s.gpus_total > 0 ? s.gpus_total : s.gpus_per_task > 0 ? s.gpus_per_task * s.tasks : s.gpus_per_node;
  if (!totals_allow(s, state)) return std::nullopt;
  for (const auto& k : keys)
    if (auto na = alloc.take_on_node(s, state, std::get<3>(k), s.tasks, gpus)) {
      Allocation a;
      a.nodes.push_back(std::move(*na));
      return a;
    }
  return std::nullopt;
}

// The nodes a one-node job may try, in the order of one_node_by_full_sort: those with a
// free core (and a free GPU, for a GPU job) that could hold the whole job.
std::vector<int> one_node_candidates_by_full_sort(const JobShape& s, const ClusterState& state,
                                                  const std::vector<int>& order) {
  std::vector<std::tuple<int64_t, int64_t, size_t, int>> keys;
  for (size_t i = 0; i < order.size(); ++i) {
    const int n = order[i];
    if (state.node(n).free_cores == 0 || (s.requested_gpus() > 0 && state.node(n).free_gpus == 0)) continue;
    if (!node_may_hold_one_node_job(s, state, n)) continue;
    keys.emplace_back(slurm_sched_weight(s, state, n),
                      int64_t{state.node(n).free_cores} * state.cluster().tmpl(n).threads_per_core, i, n);
  }
  std::sort(keys.begin(), keys.end());
  std::vector<int> nodes;
  for (const auto& k : keys) nodes.push_back(std::get<3>(k));
  return nodes;
}

bool same_allocation(const std::optional<Allocation>& x, const std::optional<Allocation>& y) {
  if (x.has_value() != y.has_value()) return false;
  if (!x) return true;
  if (x->nodes.size() != y->nodes.size()) return false;
  for (size_t i = 0; i < x->nodes.size(); ++i) {
    const auto &a = x->nodes[i], &b = y->nodes[i];
    if (a.node != b.node || a.tasks != b.tasks || a.cores != b.cores || a.gpus != b.gpus || a.mem_mb != b.mem_mb)
      return false;
  }
  return true;
}

}  // namespace

TEST_CASE("Walking only nodes with free cores and ranking one-node jobs lazily place as the full walk does",
          "[placement][fitbound]") {
  // The allocator walks only nodes with a free core when handed a state's own
  // partition order that is ascending (Curie, the oracle's GPU case), and ranks a
  // one-node job's candidates in a heap popped on demand. A copy of the same order is
  // walked node by node: every placement must be the same, and one-node jobs must get
  // the node a full sort of every node picks. two-types has node Weights, so its order
  // is not ascending and always walked.
  const std::vector<std::string> args = {"-n 1", "-n 4", "-N 1 -n 6", "-n 40", "-n 130 -c 2", "-n 3000", "-N 2 -n 4",
                                         "-N 3 --ntasks-per-node=5", "-n 2 --mem-per-cpu=4G", "--exclusive -N 2",
                                         "-n 1 --gpus=1", "-n 1 -c 3 --gpus=2", "-N 1 --gpus-per-node=2",
                                         "-n 4 --gpus-per-task=1"};
  for (const std::string conf : {"configs/curie/slurm.conf", "tests/oracle/gpu-sockets/slurm.conf",
                                 "tests/oracle/two-types/slurm.conf"}) {
    Diagnostics w;
    const Cluster c = load_slurm_conf(test::src(conf), w);
    const bool has_gpus = c.total_gpus() > 0;
    std::vector<JobShape> shapes;
    for (const auto& a : args) {
      if (!has_gpus && a.find("gpu") != std::string::npos) continue;
      shapes.push_back(shape_of(c, a));
    }
    PlacementAllocator alloc(PlacementMode::kSlurm);
    alloc.keep_cpu_job_bindings(false);
    ClusterState state(c);
    const int p = c.default_partition();
    const bool ascending = std::is_sorted(state.partition_order(p).begin(), state.partition_order(p).end());
    CHECK(ascending == (conf != "tests/oracle/two-types/slurm.conf"));
    CHECK((state.scannable_members(state.partition_order(p), p) != nullptr) == ascending);
    const std::vector<int> copy = state.partition_order(p);  // the same nodes, never scanned
    CHECK(state.scannable_members(copy, p) == nullptr);
    std::mt19937_64 rng(11);
    std::vector<Allocation> held;
    int one_node_checked = 0, placed = 0;
    size_t candidates_checked = 0;
    for (int step = 0; step < 1500; ++step) {
      const auto& s = shapes[rng() % shapes.size()];
      INFO(conf << " step " << step);
      const ClusterState shadow = state;  // a copy keeps the shared orders
      REQUIRE((shadow.scannable_members(state.partition_order(p), p) != nullptr) == ascending);
      auto a = alloc.allocate(s, shadow, state.partition_order(p));
      CHECK(same_allocation(a, alloc.allocate(s, state, copy)));
      if (s.nodes_max == 1) {
        CHECK(same_allocation(a, one_node_by_full_sort(alloc, s, state, copy)));
        // The order hands out its best first, found by a pruned scan, and every other
        // candidate after it, in the full sort's order.
        NodeOrder order;
        alloc.order_nodes(s, state, state.partition_order(p), order);
        std::vector<int> drained;
        for (int n = order.next(); n >= 0; n = order.next()) drained.push_back(n);
        CHECK(drained == one_node_candidates_by_full_sort(s, state, copy));
        candidates_checked += drained.size();
        ++one_node_checked;
      }
      placed += test::hold_or_release(state, held, a, rng, 4);
      for (int i = 0; i < 8; ++i) {
        const int n = static_cast<int>(rng() % state.size());
        CHECK(count_free_gpus_of_type(s, state, n) == static_cast<int>(free_gpus_of_type(s, state, n).size()));
      }
      // The open-node bits follow the free cores.
      int open = 0;
      state.for_each_open([&](int n) {
        CHECK(state.node(n).free_cores > 0);
        ++open;
      });
      int with_free = 0;
      for (size_t n = 0; n < state.size(); ++n) with_free += state.node(static_cast<int>(n)).free_cores > 0;
      CHECK(open == with_free);
    }
    CHECK(placed > 200);
    CHECK(one_node_checked > 200);
    CHECK(candidates_checked > 1000);
  }
}
