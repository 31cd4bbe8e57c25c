// Placement of one job on one node (models/placement, take_on_node): the per-node step
// every allocation and every cons_tres capacity test runs. A DGX A100 node of the
// shipped pod (2 sockets, 8 NUMA domains, 128 cores, 8 GPUs under 4 PCIe switches),
// empty or with a quarter of its cores and two GPUs held, for GPU jobs of 1, 4 and 8
// GPUs under the slurm (cons_tres), numa-bound and unbound modes.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "models/placement/placement.hpp"
#include "sim/cluster/cluster_yaml.hpp"
#include "sim/placement/job_shape.hpp"
#include "sim/workload/sbatch_options.hpp"

using namespace gcsim;

namespace {

const std::vector<std::string> kShapes = {"-n 1 -c 8 --gpus=1", "-n 4 -c 16 --gpus-per-task=1",
                                          "-n 8 -c 16 --gpus-per-task=1"};
const std::vector<PlacementMode> kModes = {PlacementMode::kSlurm, PlacementMode::kNumaBound, PlacementMode::kUnbound};

void BM_PlaceOneNode(benchmark::State& state) {
  static const Cluster c = load_cluster_yaml(std::string(GCSIM_SOURCE_DIR) + "/configs/dgx-a100-pod.yaml");
  Job j;
  j.id = JobId(1);
  Diagnostics d;
  if (!parse_sbatch_options(kShapes[static_cast<size_t>(state.range(0))], SourceLoc{"bench", 1, 1}, j.req, d)) {
    state.SkipWithError("bad shape");
    return;
  }
  std::string why;
  const auto shape = make_job_shape(j, c, &why);
  if (!shape) {
    state.SkipWithError(why.c_str());
    return;
  }
  PlacementAllocator alloc(kModes[static_cast<size_t>(state.range(1))]);
  alloc.keep_cpu_job_bindings(false);
  ClusterState st(c);
  if (state.range(2) != 0) {  // a quarter of node 0's cores (from the top) and GPUs 6, 7 held
    NodeAlloc na;
    na.node = 0;
    na.tasks = 1;
    const int cores = c.tmpl(0).cores();
    for (int core = cores - cores / 4; core < cores; ++core) na.cores.push_back(core);
    na.gpus = {6, 7};
    Allocation a;
    a.nodes.push_back(na);
    st.allocate(a);
  }
  const int gpus = static_cast<int>(shape->requested_gpus());
  int placed = 0;
  for (auto _ : state) {
    auto na = alloc.take_on_node(*shape, st, 0, shape->tasks, gpus);
    placed += na.has_value();
    benchmark::DoNotOptimize(na);
  }
  state.counters["placed"] = static_cast<double>(placed) / static_cast<double>(state.iterations());
  state.SetLabel(kShapes[static_cast<size_t>(state.range(0))] + " " + alloc.name() +
                 (state.range(2) != 0 ? " busy" : " empty"));
}

}  // namespace

BENCHMARK(BM_PlaceOneNode)->ArgsProduct({{0, 1, 2}, {0, 1, 2}, {0, 1}})->Unit(benchmark::kMicrosecond);
