// Placement changes runtime (issue 5): the step model on the shipped clusters.
//  - unbound cores slow an 8-GPU job on a PCIe-only node by the host model's staging
//    factor on its host-routed NCCL traffic; on an NVSwitch node they barely matter;
//  - a job whose ring crosses the leaf uplinks of an oversubscribed fat-tree runs slower
//    while another such job shares them, and speeds up again when that job ends: the
//    Simulation moves its end event.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "models/collective/nccl_tuning.hpp"
#include "models/host/host_model.hpp"
#include "models/placement/placement.hpp"
#include "models/runtime/step_runtime.hpp"
#include "models/sched/registry.hpp"
#include "sim/cluster/cluster_yaml.hpp"
#include "sim/sched/simulation.hpp"
#include "sim/workload/sbatch_options.hpp"
#include "sim/workload/trace_readers.hpp"
#include "sim/workload/trace_writers.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;
using gcsim::test::src;

namespace {

struct Env {
  Cluster cluster;
  NcclTuning tuning = load_nccl_tuning(src("configs/nccl/default.yaml"));
  HostParams host = load_host_params(src("configs/host/default.yaml"));
  ProfileSet profiles;
  explicit Env(const std::string& config) : cluster(load_cluster_yaml(src("configs/" + config + ".yaml"))) {}
};

Job job_with(const std::string& args, SimTime duration, SimTime submit = SimTime()) {
  Job j;
  j.name = std::string(1, 'j');  // not = "j": GCC 12 reports a false -Wrestrict (PR 105329)
  j.duration = duration;
  j.submit = submit;
  Diagnostics d;
  REQUIRE(parse_sbatch_options(args, SourceLoc{"t", 1, 1}, j.req, d));
  return j;
}

Allocation place(const Env& e, const Job& j, PlacementMode mode) {
  std::string why;
  const auto shape = make_job_shape(j, e.cluster, &why);
  REQUIRE(shape);
  ClusterState empty(e.cluster);
  PlacementAllocator alloc(mode);
  auto a = alloc.allocate(*shape, empty, partition_node_order(e.cluster, shape->partition));
  REQUIRE(a);
  return *a;
}

// The step of an 8-GPU job bound (numa-bound) and unbound on one node of `config`.
std::pair<StepBreakdown, StepBreakdown> bound_and_unbound(const std::string& config, HostEffects* unbound_fx) {
  Env e(config);
  const Job j = job_with("--nodes=1 --ntasks-per-node=8 --gpus-per-node=8 --cpus-per-task=4 --time=12:00:00", SimTime::seconds(3600));
  StepRuntimeModel m(e.cluster, e.tuning, e.host, e.profiles);
  const Allocation bound = place(e, j, PlacementMode::kNumaBound);
  const Allocation unbound = place(e, j, PlacementMode::kUnbound);
  if (unbound_fx) {
    const NodeTopology topo = build_node_topology(e.cluster.tmpl(unbound.nodes[0].node));
    *unbound_fx = HostModel(e.host, e.cluster.tmpl(unbound.nodes[0].node), topo).host_effects(unbound.nodes[0]);
  }
  const StepBreakdown b = m.step(j, bound), u = m.step(j, unbound);
  // The model keeps host figures per node shape: asked again after the other shape,
  // each gets its own back, as a fresh model computes them.
  StepRuntimeModel fresh(e.cluster, e.tuning, e.host, e.profiles);
  for (const auto& [alloc, first] : {std::pair{&bound, &b}, std::pair{&unbound, &u}}) {
    const StepBreakdown again = m.step(j, *alloc), anew = fresh.step(j, *alloc);
    CHECK(again.step_s == first->step_s);
    CHECK(again.loader_factor == first->loader_factor);
    CHECK(again.staging_factor == first->staging_factor);
    CHECK(anew.step_s == first->step_s);
  }
  return {b, u};
}

}  // namespace

TEST_CASE("unbound cores slow a PCIe-GPU job by the modelled factor; an NVLink job barely", "[runtime]") {
  HostEffects fx;
  const auto [pb, pu] = bound_and_unbound("pcie-8gpu", &fx);
  INFO("PCIe: bound step " << pb.step_s << " s (comm " << pb.comm_s << "), unbound " << pu.step_s << " s (comm "
                           << pu.comm_s << ", staging " << pu.staging_factor << ")");
  // PCIe-only node: GPU pairs beyond one switch go through host memory (SHM), so NCCL's
  // traffic pays the host model's staging factor when the cores (and so the buffers) sit
  // on the other socket. The bound placement stages nothing remote (factor 1).
  REQUIRE(fx.host_staged);
  REQUIRE(fx.staging_factor < 0.9);
  REQUIRE(pb.staging_factor == Approx(1.0));
  REQUIRE(pu.staging_factor == Approx(fx.staging_factor));
  REQUIRE(pu.comm_s == Approx(pb.comm_s / fx.staging_factor).epsilon(1e-9));
  // The step follows the formula: max(compute + (1 - overlap) x comm, loader).
  const WorkloadProfile p = default_profile(8);
  REQUIRE(pu.step_s == Approx(std::max(p.compute_s + (1 - p.overlap) * pu.comm_s, pu.load_s)).epsilon(1e-12));
  const double pcie_slowdown = pu.step_s / pb.step_s;
  REQUIRE(pcie_slowdown > 1.05);

  const auto [nb, nu] = bound_and_unbound("dgx-a100-pod", nullptr);
  INFO("NVSwitch: bound " << nb.step_s << " s, unbound " << nu.step_s << " s");
  // NVSwitch node: NCCL's traffic stays on NVLink, and the data loader (half the compute
  // time on local cores) still hides behind compute at 0.7 of its speed.
  REQUIRE(nu.staging_factor == Approx(1.0));
  REQUIRE(nu.step_s / nb.step_s < 1.01);
  REQUIRE(nu.step_s / nb.step_s >= 1.0);
}

TEST_CASE("the simulated run time is the recorded one x step(actual) / step(reference)", "[runtime][e2e]") {
  Env e("pcie-8gpu");
  Trace t;
  t.jobs.push_back(job_with("--nodes=1 --ntasks-per-node=8 --gpus-per-node=8 --cpus-per-task=4 --time=12:00:00", SimTime::seconds(3600)));
  t.jobs[0].id = JobId(1);
  StepRuntimeModel m(e.cluster, e.tuning, e.host, e.profiles);
  auto policy = make_policy("fcfs");
  PlacementAllocator unbound(PlacementMode::kUnbound);
  SimulationOptions opt;
  opt.runtime = &m;
  Simulation sim(e.cluster, t, *policy, unbound, opt);
  REQUIRE(sim.run().completed);
  const auto& o = sim.outcomes()[0];
  const Allocation ideal = place(e, t.jobs[0], PlacementMode::kNumaBound);
  const double expect = 3600.0 * m.step(t.jobs[0], o.alloc).step_s / m.step(t.jobs[0], ideal).step_s;
  INFO("actual step " << m.step(t.jobs[0], o.alloc).step_s << " ideal " << m.step(t.jobs[0], ideal).step_s << " ref "
                      << m.reference_step_s(t.jobs[0], o.shape, o.alloc) << " speeds " << o.speed_min << ".." << o.speed_max);
  REQUIRE((o.end - o.start).to_seconds() == Approx(expect).margin(1e-6));
  REQUIRE(expect > 3600 * 1.05);
}

TEST_CASE("jobs sharing leaf uplinks slow each other until one ends", "[runtime][contention]") {
  // pcie-8gpu: 16 nodes, 8 per leaf (pcie001-008, pcie009-016), here with each leaf's
  // uplink at 200 Gb/s (one node link, 8:1): a 4-node ring with two nodes under each leaf
  // crosses it once each way, so a second such job shares it and both communicate more
  // slowly (the step slows by its exposed communication only). Job 3 takes four nodes
  // under one leaf and crosses no uplink.
  Env e("pcie-8gpu");
  e.cluster.network.uplink_bandwidth_bps = 200e9;
  const Job j = job_with("--nodes=4 --ntasks-per-node=8 --gpus-per-node=8 --cpus-per-task=4 --exclusive --time=12:00:00",
                         SimTime::seconds(3600));
  std::string why;
  const JobShape shape = *make_job_shape(j, e.cluster, &why);
  auto on_nodes = [&](std::vector<int> nodes) {
    Allocation a;
    for (int n : nodes) {
      NodeAlloc na;
      na.node = n;
      na.tasks = 8;
      for (int g = 0; g < 8; ++g) na.gpus.push_back(g);
      for (int c = 0; c < e.cluster.tmpl(n).cores(); ++c) na.cores.push_back(c);
      a.nodes.push_back(na);
    }
    return a;
  };
  StepRuntimeModel m(e.cluster, e.tuning, e.host, e.profiles);
  std::map<int, double> speed;
  auto update = [&] {
    std::vector<std::pair<int, double>> ch;
    m.changed_speeds(ch);
    for (auto [k, v] : ch) speed[k] = v;
  };
  m.job_started(1, j, shape, on_nodes({0, 1, 8, 9}));
  update();
  const double alone = speed.at(1);
  m.job_started(2, j, shape, on_nodes({2, 3, 10, 11}));
  update();
  const double shared = speed.at(1);
  REQUIRE(speed.at(2) == Approx(shared));  // symmetric jobs get the same share
  m.job_started(3, j, shape, on_nodes({4, 5, 6, 7}));
  update();
  INFO("job 1 speed alone " << alone << ", sharing uplinks " << shared << "; job 3 (one leaf) " << speed.at(3));
  REQUIRE(shared < alone);
  REQUIRE(speed.at(1) == Approx(shared));  // job 3 uses no uplink: nothing changes for 1 and 2
  // The same 4 nodes under one leaf beat the spread job that shares uplinks.
  REQUIRE(speed.at(3) > shared);
  m.job_ended(2);
  update();
  REQUIRE(speed.at(1) == Approx(alone));
}

namespace {

// A stand-in model: every running job runs at 1 / (number of running jobs).
class SharedSpeed final : public RuntimeModel {
 public:
  std::string name() const override { return "test"; }
  void job_started(int j, const Job&, const JobShape&, const Allocation&) override { running_.insert(j); }
  void job_ended(int j) override { running_.erase(j); }
  void changed_speeds(std::vector<std::pair<int, double>>& out) override {
    for (int j : running_) out.emplace_back(j, 1.0 / static_cast<double>(running_.size()));
  }

 private:
  std::set<int> running_;
};

}  // namespace

TEST_CASE("the Simulation moves a running job's end when its speed changes", "[runtime][kernel]") {
  // Job 1 (100 s of work) runs alone for 20 s, then at half speed beside job 2 (30 s of
  // work, 60 s at half speed) until t = 80 s, then alone again: 20 + 30 = 50 s of its work
  // is done at t = 80, the other 50 s take until t = 130.
  Env e("pcie-8gpu");
  Trace t;
  t.jobs.push_back(job_with("--nodes=1 --ntasks=1 --time=1:00:00", SimTime::seconds(100)));
  t.jobs.push_back(job_with("--nodes=1 --ntasks=1 --time=1:00:00", SimTime::seconds(30), SimTime::seconds(20)));
  for (size_t k = 0; k < t.jobs.size(); ++k) t.jobs[k].id = JobId(static_cast<int64_t>(k) + 1);
  SharedSpeed model;
  auto policy = make_policy("fcfs");
  PlacementAllocator alloc(PlacementMode::kSlurm);
  SimulationOptions opt;
  opt.runtime = &model;
  Simulation sim(e.cluster, t, *policy, alloc, opt);
  REQUIRE(sim.run().completed);
  const auto& o = sim.outcomes();
  REQUIRE(o[0].start == SimTime());
  REQUIRE(o[1].start == SimTime::seconds(20));
  REQUIRE(o[1].end == SimTime::seconds(80));
  REQUIRE(o[0].end == SimTime::seconds(130));
  REQUIRE(o[0].speed_min == Approx(0.5));
  // A time limit stays wall-clock: with --time=1 (minute) job 1 is killed at 60 s.
  Trace limited = t;
  limited.jobs[0].req.time_limit = SimTime::minutes(1);
  SharedSpeed model2;
  SimulationOptions opt2;
  opt2.runtime = &model2;
  auto policy2 = make_policy("fcfs");
  Simulation sim2(e.cluster, limited, *policy2, alloc, opt2);
  REQUIRE(sim2.run().completed);
  REQUIRE(sim2.outcomes()[0].timed_out);
  REQUIRE(sim2.outcomes()[0].end == SimTime::seconds(60));
}

TEST_CASE("a trace's profile column picks the named profile before any rule", "[runtime][profile]") {
  const ProfileSet set = parse_profiles(
      "profiles:\n"
      "  bert-large: {compute_s: 0.35, grad_bytes: 1.34GB, overlap: 0.6}\n"
      "  resnet50: {compute_s: 0.12, grad_bytes: 100MB, overlap: 0.8}\n"
      "rules:\n"
      "  - {name: \"train*\", profile: resnet50}\n",
      "profiles.yaml");
  Diagnostics d;
  const Trace t = parse_sbatch_trace(
      "name,submit,duration,args,profile\n"
      "train-a,0,3600,--gpus=8,bert-large\n"   // named and defined: the column wins over the rule
      "train-b,0,3600,--gpus=8,\n"             // empty: the rule
      "train-c,0,3600,--gpus=8,gpt-unknown\n"  // named but not defined: the rule
      "other,0,3600,--gpus=8,\n",              // neither: the default by GPU count
      "t.csv", d);
  REQUIRE(t.jobs.size() == 4);
  CHECK(t.jobs[0].profile == "bert-large");
  CHECK(t.jobs[1].profile.empty());
  CHECK(set.for_job(t.jobs[0]).name == "bert-large");
  CHECK(set.for_job(t.jobs[0]).compute_s == Approx(0.35));
  CHECK(set.for_job(t.jobs[1]).name == "resnet50");
  CHECK(set.for_job(t.jobs[2]).name == "resnet50");
  CHECK(set.for_job(t.jobs[3]).name == default_profile(8).name);

  // The column survives `gcsim trace convert` to CSV and back.
  std::vector<std::string> lost;
  Diagnostics d2;
  const Trace back = parse_sbatch_trace(format_sbatch_trace(t, {}, lost), "back.csv", d2);
  REQUIRE(back.jobs.size() == 4);
  for (size_t i = 0; i < 4; ++i) CHECK(back.jobs[i].profile == t.jobs[i].profile);
}
