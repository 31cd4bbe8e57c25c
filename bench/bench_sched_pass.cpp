// One scheduling pass against queue length. The cluster (nodes x 32 cores) is
// full of one-node jobs; the queue head needs a quarter of the cluster and the
// other pending jobs need one node each, so every pass computes the head's shadow
// time and tests every candidate, none of which can start: the pass is repeatable.
// The slurm policy's backfill cycle is measured the same way (its main loop and
// timers filled the cluster first); it tests at most bf_max_job_test (default 500)
// jobs, so BM_SlurmBackfillPass also runs with bf_max_job_test=100000, and without
// and with what backfill keeps from the cycle before: will-run outcomes (warm), and
// the outcomes themselves, replayed (replay).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>

#include "models/sched/registry.hpp"
#include "models/sched/slurm_policy.hpp"
#include "sim/placement/allocator.hpp"
#include "sim/sched/simulation.hpp"

using namespace gcsim;

namespace {

struct Setup {
  Cluster cluster;
  Trace trace;
  std::unique_ptr<Policy> policy;
  LinearAllocator alloc;
  std::unique_ptr<Simulation> sim;
};

std::unique_ptr<Setup> make_setup(const std::string& policy, int nodes, int queue, int bf_max_job_test = 0) {
  auto s = std::make_unique<Setup>();
  s->cluster = make_cpu_cluster("bench", nodes, 32, "bench");
  auto add = [&](int64_t id, int n, int64_t limit_s) {
    Job j;
    j.id = JobId(id);
    j.name = "j" + std::to_string(id);
    j.submit = SimTime::seconds(0);
    j.duration = SimTime::seconds(limit_s);
    j.req.nodes_min = n;
    j.req.ntasks = n * 32;
    j.req.time_limit = SimTime::seconds(limit_s + static_cast<int64_t>(id % 97) * 60);
    s->trace.jobs.push_back(j);
  };
  int64_t id = 1;
  for (int i = 0; i < nodes; ++i) add(id++, 1, 36000 + i * 10);
  add(id++, nodes / 4, 3600);
  for (int i = 0; i < queue; ++i) add(id++, 1, 7200);
  if (policy == "slurm") {
    SlurmPolicyInputs in;
    in.cluster = &s->cluster;
    if (bf_max_job_test > 0) in.overrides["bf_max_job_test"] = std::to_string(bf_max_job_test);
    Diagnostics warnings;
    s->policy = make_policy(policy, in, warnings);
  } else {
    s->policy = make_policy(policy);
  }
  s->sim = std::make_unique<Simulation>(s->cluster, s->trace, *s->policy, s->alloc);
  // the slurm policy starts jobs from its timers (batch_sched_delay, bf_interval)
  s->sim->advance_to(SimTime::seconds(policy == "slurm" ? 120 : 0));
  return s;
}

void run_pass(benchmark::State& state, const std::string& policy) {
  auto s = make_setup(policy, static_cast<int>(state.range(1)), static_cast<int>(state.range(0)));
  for (auto _ : state) s->sim->schedule_once();
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.counters["queue"] = static_cast<double>(state.range(0));
  state.counters["nodes"] = static_cast<double>(state.range(1));
}

}  // namespace

static void BM_EasyPass(benchmark::State& state) { run_pass(state, "easy"); }
BENCHMARK(BM_EasyPass)->ArgsProduct({{100, 1000, 10000, 100000}, {1000, 10000}})->Unit(benchmark::kMicrosecond);

static void BM_SlurmBackfillPass(benchmark::State& state) {
  const int queue = static_cast<int>(state.range(0)), nodes = static_cast<int>(state.range(1));
  auto s = make_setup("slurm", nodes, queue, static_cast<int>(state.range(2)));
  auto& slurm = dynamic_cast<SlurmPolicy&>(*s->policy);
  // 4th argument: 0, cold: every cycle tests its jobs afresh, as after a job started
  // or ended; 1, warm: the will-run outcomes of the last cycle are kept, as in a run's
  // cycles with no change of state between them; 2, replay: and its outcomes are
  // replayed where they hold (here all of them: the cycles run at one time)
  const bool warm = state.range(3) != 0;
  slurm.replay_outcomes(state.range(3) == 2);
  for (auto _ : state) {
    if (!warm) slurm.forget_will_runs();
    s->sim->run_pass([&](SchedContext& ctx) { slurm.backfill_now(ctx); });
  }
  state.SetItemsProcessed(state.iterations() * std::min<int64_t>(queue, slurm.config().bf_max_job_test));
  state.counters["queue"] = queue;
  state.counters["nodes"] = nodes;
  state.counters["tested"] = std::min(queue, slurm.config().bf_max_job_test);
  state.counters["kept"] = static_cast<double>(state.range(3));
}
BENCHMARK(BM_SlurmBackfillPass)
    ->ArgsProduct({{100, 1000, 10000, 100000}, {1000, 10000}, {0}, {0}})
    ->Args({10000, 1000, 100000, 0})
    ->Args({100000, 1000, 100000, 0})
    ->Args({1000, 1000, 0, 1})
    ->Args({1000, 10000, 0, 1})
    ->Args({1000, 1000, 0, 2})
    ->Args({1000, 10000, 0, 2})
    ->Unit(benchmark::kMillisecond);

static void BM_FcfsPass(benchmark::State& state) { run_pass(state, "fcfs"); }
BENCHMARK(BM_FcfsPass)->ArgsProduct({{100, 10000}, {1024}})->Unit(benchmark::kMicrosecond);
