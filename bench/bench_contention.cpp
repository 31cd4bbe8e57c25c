// One contention recomputation with 1,000 running ring jobs: 2,048 DGX A100-like nodes
// (8 GPUs on NVSwitch, 4 PCIe switches, 8 NICs of 200 Gb/s) on a 2:1 fat-tree of 32 nodes
// per leaf. Jobs of 8, 12 or 16 GPUs are made of 4-GPU halves of nodes drawn at random
// over the whole cluster, so most rings cross leaves and share uplinks; 8 channels each.
// BM_ContentionRecompute: one job ends and the touched components are re-solved (the job
// comes back untimed). BM_ContentionFullSolve: every flow from scratch.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "models/network/contention.hpp"

using namespace gcsim;

namespace {

NodeTemplate dgx_a100_like() {
  NodeTemplate t;
  t.name = "dgx";
  t.sockets = 2;
  t.numa_per_socket = 4;
  t.cores_per_numa = 16;
  t.threads_per_core = 2;
  t.memory_mb = 2 * 1024 * 1024;
  const int numa_of_switch[4] = {3, 1, 7, 5};
  for (int s = 0; s < 4; ++s) {
    PcieSwitchSpec sw;
    sw.name = "sw" + std::to_string(s);
    sw.numa = numa_of_switch[s];
    t.pcie_switches.push_back(sw);
  }
  for (int g = 0; g < 8; ++g) {
    GpuSpec gpu;
    gpu.gres_type = "a100";
    gpu.model = "NVIDIA A100-SXM4-80GB";
    gpu.pcie_switch = g / 2;
    gpu.numa = numa_of_switch[g / 2];
    t.gpus.push_back(gpu);
    NicSpec nic;
    nic.name = "mlx5_" + std::to_string(g);
    nic.bandwidth_bps = 200e9;
    nic.pcie_switch = g / 2;
    nic.numa = numa_of_switch[g / 2];
    t.nics.push_back(nic);
  }
  t.nvlink.kind = NvlinkKind::kNvswitch;
  t.nvlink.links_per_gpu = 12;
  t.nvlink.link_bandwidth_bps = 25e9 * 8;
  return t;
}

struct Setup {
  Cluster cluster;
  std::unique_ptr<LinkRegistry> reg;
  std::unique_ptr<ContentionSolver> solver;
  std::vector<std::vector<Flow>> jobs;
};

Setup& setup() {
  static std::unique_ptr<Setup> s = [] {
    auto p = std::make_unique<Setup>();
    constexpr int kNodes = 2048, kJobs = 1000, kChannels = 8;
    p->cluster = make_homogeneous_cluster("bench", dgx_a100_like(), kNodes, "bench");
    p->cluster.network.kind = NetworkSpec::Kind::kFatTree;
    p->cluster.network.nodes_per_leaf = 32;
    p->cluster.network.link_bandwidth_bps = 200e9;
    p->cluster.network.oversubscription = 2.0;
    p->reg = std::make_unique<LinkRegistry>(p->cluster);
    // Halves of nodes (GPUs 0-3 or 4-7) in a fixed random order.
    std::vector<int> halves(2 * kNodes);
    for (int i = 0; i < 2 * kNodes; ++i) halves[static_cast<size_t>(i)] = i;
    uint64_t x = 20240601;
    auto next = [&x] {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      return x >> 33;
    };
    for (size_t i = halves.size(); i > 1; --i) std::swap(halves[i - 1], halves[next() % i]);
    size_t h = 0;
    for (int j = 0; j < kJobs; ++j) {
      const int parts = 2 + static_cast<int>(next() % 3);  // 8, 12 or 16 GPUs
      std::vector<PlacedGpu> ranks;
      for (int k = 0; k < parts; ++k, ++h) {
        const int node = halves[h] / 2, first = (halves[h] % 2) * 4;
        for (int g = first; g < first + 4; ++g) ranks.push_back({node, g});
      }
      p->jobs.push_back(ring_flows(*p->reg, j, ranks, kChannels));
    }
    p->solver = std::make_unique<ContentionSolver>(p->reg->capacities());
    for (const auto& f : p->jobs) p->solver->add_flows(f);
    p->solver->solve();
    return p;
  }();
  return *s;
}

void counters(benchmark::State& state, const ContentionSolver& s) {
  state.counters["flows"] = static_cast<double>(s.last_solve().flows);
  state.counters["links"] = static_cast<double>(s.last_solve().links);
  state.counters["incidences"] = static_cast<double>(s.last_solve().incidences);
  state.counters["contended"] = static_cast<double>(s.last_solve().contended_links);
}

}  // namespace

static void BM_ContentionRecompute(benchmark::State& state) {
  Setup& s = setup();
  ContentionSolver& solver = *s.solver;
  int job = 0;
  for (auto _ : state) {
    solver.remove_owner(job);
    benchmark::DoNotOptimize(solver.solve().data());
    state.PauseTiming();
    counters(state, solver);
    solver.add_flows(s.jobs[static_cast<size_t>(job)]);
    solver.solve();
    job = (job + 1) % static_cast<int>(s.jobs.size());
    state.ResumeTiming();
  }
}
BENCHMARK(BM_ContentionRecompute)->Unit(benchmark::kMillisecond);

static void BM_ContentionFullSolve(benchmark::State& state) {
  Setup& s = setup();
  ContentionSolver& solver = *s.solver;
  for (auto _ : state) benchmark::DoNotOptimize(solver.solve_full().data());
  counters(state, solver);
}
BENCHMARK(BM_ContentionFullSolve)->Unit(benchmark::kMillisecond);
