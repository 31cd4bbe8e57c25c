// FitBound and Allocator::fits (sim/placement/allocator): the node-by-node bound that
// EASY's shadow search and the submit-time check use instead of placing. On the shipped
// clusters, filled step by step with real placements, for CPU and GPU shapes under every
// placement mode:
//  - the bound never refuses what allocate() places (it is a necessary condition);
//  - where the allocator calls it exact (packed CPU-only shapes, slurm/unbound/linear),
//    fits() agrees with allocate() every time;
//  - a bound kept current by refresh() after each allocate/release equals a fresh one.
#include <catch2/catch.hpp>

#include <random>

#include "models/placement/placement.hpp"
#include "sim/cluster/cluster_yaml.hpp"
#include "sim/placement/job_shape.hpp"
#include "sim/workload/sbatch_options.hpp"
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

}  // namespace

TEST_CASE("FitBound never refuses a placement and is exact where the allocator says so", "[placement][fitbound]") {
  const std::vector<std::string> args = {"-n 1", "-n 3", "-n 7 -c 2", "-n 40", "-n 130", "-N 2 -n 4",
                                         "-N 3 --ntasks-per-node=5", "-n 2 --mem-per-cpu=4G", "--exclusive -n 20",
                                         "-n 1 --gpus=1", "-n 2 --gpus=3", "-N 2 --gpus-per-node=2",
                                         "-n 4 --gpus-per-task=1", "-n 1 -c 4 --gpus=2"};
  for (const char* file : {"configs/pcie-8gpu.yaml", "configs/dgx-a100-pod.yaml", "configs/mixed.yaml"}) {
    const Cluster c = load_cluster_yaml(test::src(file));
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
      int exact_checked = 0, placed = 0;
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
        // Hold it, or release an older one (about one in three steps).
        if (a && rng() % 3 != 0) {
          state.allocate(*a);
          for (auto& b : bounds) b.refresh(*a);
          held.push_back(std::move(*a));
          ++placed;
        } else if (!held.empty()) {
          const size_t k = rng() % held.size();
          state.release(held[k]);
          for (auto& b : bounds) b.refresh(held[k]);
          held.erase(held.begin() + static_cast<long>(k));
        }
        for (size_t i = 0; i < shapes.size(); ++i)
          CHECK(bounds[i].may_fit() ==
                FitBound(shapes[i], state, partition_node_order(c, shapes[i].partition)).may_fit());
      }
      CHECK(placed > 20);
      if (mode == PlacementMode::kSlurm || mode == PlacementMode::kUnbound) CHECK(exact_checked > 50);
    }
  }
}
