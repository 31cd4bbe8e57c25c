// PackedAllocation (sim/placement/node_state): how a finished job keeps its allocation
// to the end of a run. Packing must lose nothing the outputs read:
//  - real placements on the shipped clusters (CPU and GPU shapes, every placement mode)
//    unpack to the same nodes, tasks, memory, cores and GPUs, in their order, and
//    for_each_node reads the same in place;
//  - hand-made allocations with gaps, unsorted GPUs, repeated and differing neighbours
//    and memory above 4 TiB do too;
//  - append_id_runs writes what append_id_list writes for the unpacked ids;
//  - a run that packs ended jobs (what `gcsim run` does) writes the same sacct rows,
//    summary and comparison figures as one that keeps them whole.
#include <catch2/catch.hpp>

#include <random>

#include "models/placement/placement.hpp"
#include "models/sched/registry.hpp"
#include "sim/cluster/cluster_yaml.hpp"
#include "sim/cluster/import_slurm_conf.hpp"
#include "sim/core/input_file.hpp"
#include "sim/io/run_outputs.hpp"
#include "sim/metrics/compare.hpp"
#include "sim/metrics/summary.hpp"
#include "sim/placement/job_shape.hpp"
#include "sim/sched/simulation.hpp"
#include "sim/workload/sbatch_options.hpp"
#include "sim/workload/trace_readers.hpp"
#include "tests/unit/state_walk.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;

namespace {

void check_round_trip(const Allocation& a) {
  const PackedAllocation p(a);
  CHECK(p.empty() == a.nodes.empty());
  Allocation u;
  u.nodes.resize(3);  // leftovers must go
  p.unpack(u);
  REQUIRE(u.nodes.size() == a.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const NodeAlloc &x = a.nodes[i], &y = u.nodes[i];
    CHECK(x.node == y.node);
    CHECK(x.tasks == y.tasks);
    CHECK(x.mem_mb == y.mem_mb);
    CHECK(x.whole_node == y.whole_node);
    CHECK(x.cores == y.cores);
    CHECK(x.gpus == y.gpus);
    CHECK(y.bindings.empty());
  }
  size_t i = 0;
  p.for_each_node([&](const PackedAllocation::NodeView& v) {
    REQUIRE(i < a.nodes.size());
    const NodeAlloc& x = a.nodes[i++];
    CHECK(v.node == x.node);
    CHECK(v.cores == static_cast<int>(x.cores.size()));
    CHECK(v.gpus == static_cast<int>(x.gpus.size()));
    for (int scale : {1, 2, 4}) {
      std::string runs = "x", list = "x";
      append_id_runs(runs, v.core_runs, v.runs, scale);
      append_id_list(list, x.cores, scale);
      CHECK(runs == list);
    }
  });
  CHECK(i == a.nodes.size());
}

NodeAlloc node_alloc(int node, int tasks, std::vector<int> cores, std::vector<int> gpus, int64_t mem) {
  NodeAlloc na;
  na.node = node;
  na.tasks = tasks;
  na.cores = std::move(cores);
  na.gpus = std::move(gpus);
  na.mem_mb = mem;
  return na;
}

std::string run_sacct(const Cluster& c, const Trace& t, bool keep, std::string* summary, std::vector<JobRow>* rows) {
  auto policy = make_policy("easy");
  PlacementAllocator alloc(PlacementMode::kSlurm);
  SimulationOptions opt;
  opt.keep_task_bindings = keep;
  Simulation sim(c, t, *policy, alloc, opt);
  REQUIRE(sim.run().completed);
  size_t packed = 0;
  for (const auto& o : sim.outcomes()) packed += !o.packed.empty();
  CHECK((packed > 0) == !keep);
  *summary = format_summary_json(summarize(c, t, sim.outcomes()));
  *rows = variant_metrics("v", "", c, t, sim.outcomes()).jobs;
  return format_sacct(c, t, sim.outcomes());
}

}  // namespace

TEST_CASE("Packed allocations of real placements unpack to the same resources", "[placement][packed]") {
  const std::vector<std::string> args = {"-n 1", "-n 4", "-N 1 -n 6", "-n 40", "-n 130 -c 2", "-N 2 -n 4",
                                         "-N 3 --ntasks-per-node=5", "-n 2 --mem-per-cpu=4G", "--exclusive -N 2",
                                         "-n 1 --gpus=1", "-n 1 -c 3 --gpus=2", "-N 1 --gpus-per-node=2",
                                         "-n 4 --gpus-per-task=1", "-N 2 --gpus-per-node=3 -c 5"};
  for (const std::string conf : {"configs/curie/slurm.conf", "tests/oracle/gpu-sockets/slurm.conf",
                                 "configs/dgx-a100-pod.yaml"}) {
    Diagnostics w;
    const Cluster c = conf.ends_with(".yaml") ? load_cluster_yaml(test::src(conf))
                                              : load_slurm_conf(test::src(conf), w);
    for (PlacementMode mode : {PlacementMode::kSlurm, PlacementMode::kNumaBound, PlacementMode::kUnbound}) {
      PlacementAllocator alloc(mode);
      ClusterState state(c);
      std::mt19937_64 rng(5);
      std::vector<Allocation> held;
      int checked = 0;
      for (int step = 0; step < 300; ++step) {
        const std::string& a = args[rng() % args.size()];
        Job j;
        j.id = JobId(1);
        Diagnostics d;
        REQUIRE(parse_sbatch_options(a, SourceLoc{"test", 1, 1}, j.req, d));
        const auto shape = make_job_shape(j, c, nullptr);
        if (!shape) continue;  // no GPUs on this cluster
        auto placed = alloc.allocate(*shape, state, state.partition_order(shape->partition));
        if (placed) {
          INFO(conf << " " << a << " step " << step);
          check_round_trip(*placed);
          ++checked;
        }
        test::hold_or_release(state, held, placed, rng, 4);
      }
      CHECK(checked > 100);
    }
  }
}

TEST_CASE("Packed allocations keep gaps, order, neighbours and large memory", "[placement][packed]") {
  check_round_trip(Allocation{});
  Allocation a;
  // Two neighbours alike (one record), a third that differs only in its GPUs, a gap,
  // cores out of order and in short runs, GPUs unsorted, memory past 32 bits.
  a.nodes.push_back(node_alloc(4, 2, {0, 1, 2, 3}, {0, 1}, 4096));
  a.nodes.push_back(node_alloc(5, 2, {0, 1, 2, 3}, {0, 1}, 4096));
  a.nodes.push_back(node_alloc(6, 2, {0, 1, 2, 3}, {2, 3}, 4096));
  a.nodes.push_back(node_alloc(9, 7, {7, 3, 4, 5, 12, 40, 41, 100}, {63, 5, 0}, int64_t{6} << 40));
  a.nodes.push_back(node_alloc(10, 1, {0}, {}, 0));
  a.nodes.back().whole_node = true;
  a.nodes.push_back(node_alloc(3, 1, {}, {}, 1));  // not ascending
  check_round_trip(a);
  // Alike and consecutive nodes share one record; a 100-node whole-node job is small.
  Allocation big;
  for (int n = 0; n < 100; ++n) big.nodes.push_back(node_alloc(1000 + n, 16, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {}, 64000));
  check_round_trip(big);
  CHECK(PackedAllocation(big).bytes() == 8 * sizeof(uint32_t));
}

TEST_CASE("A run that packs ended jobs writes what one that keeps them writes", "[placement][packed][io]") {
  struct Case {
    std::string cluster, trace;
  };
  for (const Case& k : {Case{"configs/dgx-a100-pod.yaml", "traces/philly-d07-d21.csv"},
                        Case{"configs/mixed.yaml", "traces/philly-d07-d21-4gpu-p-gpu.csv"}}) {
    INFO(k.cluster << " " << k.trace);
    const Cluster c = load_cluster_yaml(test::src(k.cluster));
    Diagnostics w;
    const Trace t = read_trace(test::src(k.trace), w);
    std::string sum_kept, sum_packed;
    std::vector<JobRow> rows_kept, rows_packed;
    const std::string kept = run_sacct(c, t, true, &sum_kept, &rows_kept);
    const std::string packed = run_sacct(c, t, false, &sum_packed, &rows_packed);
    CHECK(kept.size() > 10000);
    CHECK(kept == packed);
    CHECK(sum_kept == sum_packed);
    REQUIRE(rows_kept.size() == rows_packed.size());
    int64_t gpus = 0;
    for (size_t i = 0; i < rows_kept.size(); ++i) {
      CHECK(rows_kept[i].gpus == rows_packed[i].gpus);
      gpus += rows_packed[i].gpus;
    }
    CHECK(gpus > 0);
  }
}
