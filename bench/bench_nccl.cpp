// One collective cost evaluation, cached and uncached: the NCCL model of a communicator
// (topology analysis, channel search, cost tables) is built once per GPU set; a new
// message size is then one table lookup and a few multiplications.
//  BM_NcclCostCached:   nccl_cost on a built model (AllReduce, sizes 8 B .. 8 GiB in turn)
//  BM_NcclCostUncached: build the model for the GPU set, then nccl_cost once
// Communicators: 8 GPUs of one DGX A100 node (NVSwitch), 4 nodes x 8 (32 GPUs), and an
// 8-GPU PCIe-only node (the slowest analysis: its ring order is searched).
#include <benchmark/benchmark.h>

#include "models/collective/nccl_model.hpp"
#include "models/collective/nccl_tuning.hpp"
#include "sim/cluster/cluster_yaml.hpp"

using namespace gcsim;

namespace {

struct Setup {
  Cluster cluster;
  NcclTuning tuning;
  CommSpec spec;
  Setup(const std::string& config, int nodes) {
    cluster = load_cluster_yaml(std::string(GCSIM_SOURCE_DIR) + "/configs/" + config + ".yaml");
    tuning = load_nccl_tuning(default_nccl_tuning_path(GCSIM_SOURCE_DIR));
    spec.cluster = &cluster;
    for (int n = 0; n < nodes; ++n)
      for (int g = 0; g < static_cast<int>(cluster.tmpl(n).gpus.size()); ++g) spec.gpus.push_back({n, g});
  }
};

const char* config_of(int which) { return which == 2 ? "pcie-8gpu" : "dgx-a100-pod"; }
int nodes_of(int which) { return which == 1 ? 4 : 1; }

void BM_NcclCostCached(benchmark::State& state) {
  const Setup s(config_of(static_cast<int>(state.range(0))), nodes_of(static_cast<int>(state.range(0))));
  const NcclModel model(s.tuning, s.spec);
  int64_t bytes = 8;
  double sink = 0;
  for (auto _ : state) {
    sink += nccl_cost(model, Collective::kAllReduce, bytes).time_us;
    bytes = bytes >= (int64_t{8} << 30) ? 8 : bytes * 2;
  }
  benchmark::DoNotOptimize(sink);
  state.SetLabel(std::to_string(s.spec.gpus.size()) + " GPUs, " + config_of(static_cast<int>(state.range(0))));
}
BENCHMARK(BM_NcclCostCached)->Arg(0)->Arg(1)->Arg(2);

void BM_NcclCostUncached(benchmark::State& state) {
  const Setup s(config_of(static_cast<int>(state.range(0))), nodes_of(static_cast<int>(state.range(0))));
  double sink = 0;
  for (auto _ : state) {
    const NcclModel model(s.tuning, s.spec);
    sink += nccl_cost(model, Collective::kAllReduce, int64_t{1} << 30).time_us;
  }
  benchmark::DoNotOptimize(sink);
  state.SetLabel(std::to_string(s.spec.gpus.size()) + " GPUs, " + config_of(static_cast<int>(state.range(0))));
}
BENCHMARK(BM_NcclCostUncached)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

}  // namespace
