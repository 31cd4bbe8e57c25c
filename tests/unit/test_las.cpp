// Kernel preemption (SchedContext::preempt) and the las policy (Tiresias-style 2D-LAS),
// on the shipped DGX A100 pod (32 nodes x 8 GPUs) and the bundled Philly trace:
//  - a preempted job frees its resources at once, waits, restarts and finishes with
//    exactly its work done (with and without the step runtime model); its time limit
//    counts its total run time; sacct keeps one row per job (first Start, final End);
//  - a short job arriving while long jobs hold the whole pod preempts one and finishes
//    long before it would under easy;
//  - las preempts only when that lets the pending job start, and only what it needs;
//  - on the Philly trace short jobs complete sooner under las than under easy;
//  - runs are deterministic.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "models/collective/nccl_tuning.hpp"
#include "models/host/host_model.hpp"
#include "models/placement/placement.hpp"
#include "models/runtime/step_runtime.hpp"
#include "models/sched/baseline.hpp"
#include "models/sched/las.hpp"
#include "models/sched/registry.hpp"
#include "sim/cluster/cluster_yaml.hpp"
#include "sim/io/run_outputs.hpp"
#include "sim/sched/simulation.hpp"
#include "sim/workload/trace_readers.hpp"
#include "tests/unit/schedule_checker.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;
using gcsim::test::src;

namespace {

const Cluster& pod() {
  static const Cluster c = load_cluster_yaml(src("configs/dgx-a100-pod.yaml"));
  return c;
}

Trace csv_trace(const std::string& rows) {
  Diagnostics d;
  Trace t = parse_sbatch_trace("name,submit,duration,args\n" + rows, "test.csv", d);
  REQUIRE(!d.has_errors());
  return t;
}

struct Run {
  SimulationResult res;
  std::vector<JobOutcome> out;
  std::string sacct;
};

Run simulate(const Cluster& c, const Trace& t, Policy& p, RuntimeModel* rt = nullptr, bool reverse = false,
             PlacementMode mode = PlacementMode::kSlurm) {
  PlacementAllocator alloc(mode);
  SimulationOptions opt;
  opt.runtime = rt;
  opt.reverse_ties = reverse;
  Simulation sim(c, t, p, alloc, opt);
  Run r;
  r.res = sim.run();
  REQUIRE(r.res.completed);
  r.out = sim.outcomes();
  r.sacct = format_sacct(c, t, r.out);
  return r;
}

/// Replays every run segment (the preempted ones and the last) on the cluster's
/// resources in time order, ends before starts: "" when no resource is ever used twice.
std::string segment_conflict(const Cluster& c, const std::vector<JobOutcome>& out) {
  struct Ev {
    SimTime t;
    int start;  // 0: release, 1: allocate
    size_t job;
    const Allocation* a;
  };
  std::vector<Ev> ev;
  for (size_t j = 0; j < out.size(); ++j) {
    const auto& o = out[j];
    if (o.status != JobStatus::kDone) continue;
    for (const auto& s : o.preempted_segments)
      if (s.end > s.start) {
        ev.push_back({s.start, 1, j, &s.alloc});
        ev.push_back({s.end, 0, j, &s.alloc});
      }
    if (o.end > o.segment_start) {
      ev.push_back({o.segment_start, 1, j, &o.alloc});
      ev.push_back({o.end, 0, j, &o.alloc});
    }
  }
  std::sort(ev.begin(), ev.end(), [](const Ev& a, const Ev& b) { return std::tie(a.t, a.start, a.job) < std::tie(b.t, b.start, b.job); });
  ClusterState s(c);
  for (const Ev& e : ev) {
    if (!e.start) {
      s.release(*e.a);
    } else if (!s.fits(*e.a)) {
      return "job " + std::to_string(e.job) + " at " + std::to_string(e.t.to_seconds()) + " s uses busy resources";
    } else {
      s.allocate(*e.a);
    }
  }
  return "";
}

/// A scripted policy for the kernel test: first fit over the queue at every pass; at
/// `at` it preempts job `victim` (checking the seam around it), at `probe` it looks again.
class ScriptedPreempt final : public Policy {
 public:
  ScriptedPreempt(int victim, SimTime at, SimTime probe, SimTime cost)
      : victim_(victim), at_(at), probe_(probe), cost_(cost) {}
  [[nodiscard]] std::string name() const override { return "scripted-preempt"; }
  void on_begin(SchedContext& ctx) override {
    ctx.wake_at(at_, 1);
    ctx.wake_at(probe_, 2);
  }
  void on_wake(SchedContext& ctx, uint64_t tag) override {
    if (tag == 1) {
      const int other = ctx.pending().front();
      auto fits = [&] { return ctx.allocator().allocate(ctx.shape(other), ctx.state(), ctx.node_order(other)).has_value(); };
      fit_before = fits();
      run_at_preempt = ctx.run_time(victim_);
      ctx.preempt(victim_, cost_);
      fit_after = fits();
      const auto r = ctx.running();
      victim_running_after = std::find(r.begin(), r.end(), victim_) != r.end();
    }
    if (tag == 2) {
      const auto& p = ctx.pending();
      victim_pending_at_probe = std::find(p.begin(), p.end(), victim_) != p.end();
      run_at_probe = ctx.run_time(victim_);
    }
    schedule(ctx);
  }
  void schedule(SchedContext& ctx) override {
    const std::vector<int> q = ctx.pending();
    for (int j : q)
      if (auto a = ctx.allocator().allocate(ctx.shape(j), ctx.state(), ctx.node_order(j)))
        ctx.start(j, *a, StartedBy::kMain);
  }

  bool fit_before = true, fit_after = false, victim_running_after = true, victim_pending_at_probe = false;
  SimTime run_at_preempt, run_at_probe;

 private:
  int victim_;
  SimTime at_, probe_, cost_;
};

// Two jobs that each need all `nodes` nodes: A (1000 s of work) from 0, B (300 s) from 100.
Trace two_whole_cluster_jobs(const std::string& a_limit, int nodes = 32) {
  const std::string all = "--nodes=" + std::to_string(nodes) +
                          " --ntasks-per-node=8 --gpus-per-node=8 --cpus-per-task=4 --time=";
  return csv_trace("A,0,1000," + all + a_limit + "\nB,100,300," + all + "01:00:00\n");
}

struct StepEnv {
  NcclTuning tuning = load_nccl_tuning(src("configs/nccl/default.yaml"));
  HostParams host = load_host_params(src("configs/host/default.yaml"));
  ProfileSet profiles;
};

double seconds(SimTime t) { return t.to_seconds(); }

/// 32 one-node jobs of 10 h (sbatch options `args`) from 0, then the CSV rows `then`.
Trace full_pod(const std::string& args, const std::string& then) {
  std::ostringstream s;
  for (int k = 0; k < 32; ++k) s << "long" << k << ",0,36000," << args << "\n";
  return csv_trace(s.str() + then);
}

/// Preemptions of jobs [from, to).
int preemptions(const std::vector<JobOutcome>& out, int from, int to) {
  int n = 0;
  for (int k = from; k < to; ++k) n += out[static_cast<size_t>(k)].preemptions;
  return n;
}

}  // namespace

TEST_CASE("a preempted job frees its resources at once, restarts later and does exactly its work", "[policy][las][kernel]") {
  SECTION("recorded durations, with a resume cost") {
    const Trace t = two_whole_cluster_jobs("01:00:00");
    ScriptedPreempt p(0, SimTime::seconds(200), SimTime::seconds(300), SimTime::seconds(30));
    const Run r = simulate(pod(), t, p);
    CHECK_FALSE(p.fit_before);  // B waits behind A ...
    CHECK(p.fit_after);         // ... and fits the moment A is preempted, in the same pass
    CHECK_FALSE(p.victim_running_after);
    CHECK(p.run_at_preempt == SimTime::seconds(200));
    CHECK(p.victim_pending_at_probe);                // A is back in the queue
    CHECK(p.run_at_probe == SimTime::seconds(200));  // and its run time stands still
    const auto& a = r.out[0];
    const auto& b = r.out[1];
    CHECK(b.start == SimTime::seconds(200));
    CHECK(b.end == SimTime::seconds(500));
    // A's stale end event at 1000 s is ignored: it resumes when B ends, with 800 s of its
    // work left plus the 30 s restore.
    CHECK(a.start == SimTime::seconds(0));
    CHECK(a.segment_start == SimTime::seconds(500));
    CHECK(a.end == SimTime::seconds(1330));
    CHECK_FALSE(a.timed_out);
    CHECK(a.preemptions == 1);
    CHECK(a.preempted_time == SimTime::seconds(300));
    REQUIRE(a.preempted_segments.size() == 1);
    CHECK(a.preempted_segments[0].start == SimTime::seconds(0));
    CHECK(a.preempted_segments[0].end == SimTime::seconds(200));
    CHECK(a.run_before + (a.end - a.segment_start) == SimTime::seconds(1030));
    CHECK(b.preemptions == 0);
    CHECK(segment_conflict(pod(), r.out).empty());
    // sacct: one row per job, Start = first start, End = final end, Elapsed = End - Start.
    const auto rows = gcsim::test::parse_sacct(r.sacct);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].f.at("JobID") == "1");
    CHECK(rows[0].end - rows[0].start == 1330);
    CHECK(rows[0].f.at("Elapsed") == "00:22:10");
    CHECK(rows[0].f.at("State") == "COMPLETED");
  }
  SECTION("the time limit counts total run time over the segments") {
    const Trace t = two_whole_cluster_jobs("00:15:00");  // 900 s: 200 s before, 700 s after
    ScriptedPreempt p(0, SimTime::seconds(200), SimTime::seconds(300), SimTime());
    const Run r = simulate(pod(), t, p);
    const auto& a = r.out[0];
    CHECK(a.timed_out);
    CHECK(a.failed);
    CHECK(a.end == SimTime::seconds(1200));
    const auto rows = gcsim::test::parse_sacct(r.sacct);
    REQUIRE(rows.size() == 2);
    CHECK(rows[0].f.at("State") == "TIMEOUT");
  }
  SECTION("step runtime model: the job's total run time is that of an uninterrupted run") {
    // On the PCIe cluster with unbound cores, spread over both leaves of a 2:1 fat-tree,
    // the jobs run slower than recorded: speed < 1.
    const Cluster pcie = load_cluster_yaml(src("configs/pcie-8gpu.yaml"));
    StepEnv e;
    const Trace t = two_whole_cluster_jobs("01:00:00", 16);
    StepRuntimeModel m0(pcie, e.tuning, e.host, e.profiles);
    FcfsPolicy fcfs;
    const Run alone = simulate(pcie, t, fcfs, &m0, false, PlacementMode::kUnbound);
    const SimTime uninterrupted = alone.out[0].end - alone.out[0].start;
    REQUIRE(alone.out[0].speed_min < 0.99);

    StepRuntimeModel m(pcie, e.tuning, e.host, e.profiles);
    ScriptedPreempt p(0, SimTime::seconds(200), SimTime::seconds(300), SimTime());
    const Run r = simulate(pcie, t, p, &m, false, PlacementMode::kUnbound);
    const auto& a = r.out[0];
    const auto& b = r.out[1];
    INFO("A alone runs " << seconds(uninterrupted) << " s at speed " << alone.out[0].speed_min << "; preempted: "
                         << seconds(a.run_before) << " s + " << seconds(a.end - a.segment_start) << " s");
    REQUIRE(a.preemptions == 1);
    CHECK(a.speed_min == Approx(alone.out[0].speed_min));  // the same placement both times, alone
    CHECK(a.segment_start == b.end);            // resumes when B is done
    const SimTime total = a.run_before + (a.end - a.segment_start);
    CHECK(std::abs((total - uninterrupted).count_us()) <= 2);
    CHECK(b.start == SimTime::seconds(200));
    CHECK(segment_conflict(pcie, r.out).empty());
  }
}

TEST_CASE("las: a short job arriving on a full pod preempts one long job and finishes long before easy", "[policy][las]") {
  // 32 one-node 8-GPU jobs of 10 h fill the pod at 0 (after 406.25 s each has 3,250
  // GPU-s and is in the second queue); a 10-minute 8-GPU job arrives at 2 h.
  const Trace t = full_pod("--nodes=1 --ntasks=8 --gpus-per-node=8 --cpus-per-task=8 --time=12:00:00",
                           "short,7200,600,--nodes=1 --ntasks=8 --gpus-per-node=8 --cpus-per-task=8 --time=01:00:00\n");
  LasPolicy las;
  const Run r = simulate(pod(), t, las);
  EasyPolicy easy;
  const Run e = simulate(pod(), t, easy);
  const auto& sh = r.out[32];
  INFO("short job: las start " << seconds(sh.start) << " end " << seconds(sh.end) << "; easy start "
                               << seconds(e.out[32].start) << " end " << seconds(e.out[32].end));
  CHECK(sh.start == SimTime::seconds(7200));
  CHECK(sh.end == SimTime::seconds(7800));
  CHECK(e.out[32].end >= SimTime::seconds(36000 + 600));
  // Exactly one victim, the latest started (all started at 0: the last in the trace);
  // it resumes when the short job ends and still does its 10 h.
  CHECK(preemptions(r.out, 0, 32) == 1);
  const auto& v = r.out[31];
  CHECK(v.preemptions == 1);
  CHECK(v.preempted_segments.at(0).end == SimTime::seconds(7200));
  CHECK(v.segment_start == SimTime::seconds(7800));
  CHECK(v.end == SimTime::seconds(36600));
  CHECK(v.alloc.nodes.at(0).node == sh.alloc.nodes.at(0).node);
  CHECK(las.queue_of(0) == 1);
  CHECK(segment_conflict(pod(), r.out).empty());
}

TEST_CASE("las: no preemption unless it lets the pending job start, and only of what it needs", "[policy][las]") {
  SECTION("the lower queue cannot free enough: nothing is preempted until it can") {
    // 16 long jobs (one node each) from 0, in the second queue after 406.25 s; 16 more
    // from 7100 s, still in the first queue at 7200 s, when a 17-node job arrives:
    // preempting all 16 lower-queue jobs would free 16 nodes, not 17.
    std::ostringstream s;
    const char* one = "--nodes=1 --ntasks=8 --gpus-per-node=8 --cpus-per-task=8 --time=12:00:00";
    for (int k = 0; k < 16; ++k) s << "old" << k << ",0,36000," << one << "\n";
    for (int k = 0; k < 16; ++k) s << "new" << k << ",7100,36000," << one << "\n";
    s << "wide,7200,600,--nodes=17 --ntasks-per-node=8 --gpus-per-node=8 --cpus-per-task=8 --time=01:00:00\n";
    const Trace t = csv_trace(s.str());
    LasPolicy las;
    PlacementAllocator alloc(PlacementMode::kSlurm);
    Simulation sim(pod(), t, las, alloc);
    sim.advance_to(SimTime::seconds(7500));
    CHECK(preemptions(sim.outcomes(), 0, 32) == 0);
    CHECK(sim.outcomes()[32].status == JobStatus::kPending);
    REQUIRE(sim.run().completed);
    // At 7506.25 s the new jobs reach 3,250 GPU-s and drop to the second queue too: now
    // 17 nodes can be freed: the 16 latest started and one old job.
    const auto& out = sim.outcomes();
    CHECK(out[32].start == SimTime::us(7'506'250'000));
    CHECK(preemptions(out, 16, 32) == 16);
    CHECK(preemptions(out, 0, 16) == 1);
    CHECK(segment_conflict(pod(), out).empty());
  }
  SECTION("victims on other nodes are kept") {
    // Each node runs a 6-GPU job (from 0) and a 2-GPU job (from 10 s). An 8-GPU job needs
    // one whole node: the latest started victims are the 2-GPU jobs, one per node, so
    // preempting in victim order alone would stop all 32 of them and one 6-GPU job; only
    // the two on the node it gets are needed.
    std::ostringstream s;
    for (int k = 0; k < 32; ++k) s << "six" << k << ",0,36000,--nodes=1 --ntasks=1 --gpus-per-node=6 --time=12:00:00\n";
    for (int k = 0; k < 32; ++k) s << "two" << k << ",10,36000,--nodes=1 --ntasks=1 --gpus-per-node=2 --time=12:00:00\n";
    s << "eight,7200,600,--nodes=1 --ntasks=1 --gpus-per-node=8 --time=01:00:00\n";
    const Trace t = csv_trace(s.str());
    LasPolicy las;
    const Run r = simulate(pod(), t, las);
    const auto& e = r.out[64];
    CHECK(e.start == SimTime::seconds(7200));
    for (int k = 0; k < 64; ++k)
      if (r.out[k].preemptions > 0) CHECK(r.out[k].preempted_segments.at(0).alloc.nodes.at(0).node == e.alloc.nodes.at(0).node);
    CHECK(preemptions(r.out, 0, 64) == 2);
    CHECK(segment_conflict(pod(), r.out).empty());
  }
  SECTION("jobs of the same queue are never preempted") {
    // Both long jobs and the short one stay under 3,250 GPU-s (1 GPU each) until 3,250 s.
    const Trace t = full_pod("--nodes=1 --ntasks=1 --gpus-per-node=1 --exclusive --time=12:00:00",
                             "short,1000,600,--nodes=1 --ntasks=1 --gpus-per-node=1 --time=01:00:00\n");
    LasPolicy las;
    const Run r = simulate(pod(), t, las);
    // At 3,250 s the long jobs drop to the second queue: the short job preempts one then.
    CHECK(r.out[32].start == SimTime::seconds(3250));
    CHECK(preemptions(r.out, 0, 32) == 1);
  }
}

TEST_CASE("las vs easy on the Philly trace: short jobs complete sooner under las", "[policy][las][e2e]") {
  Diagnostics d;
  const Trace t = read_trace(src("traces/philly-d07-d21.csv"), d);
  LasPolicy las;
  EasyPolicy easy;
  const Run rl = simulate(pod(), t, las);
  const Run re = simulate(pod(), t, easy);
  REQUIRE(segment_conflict(pod(), rl.out).empty());
  // Short jobs: the half of the trace with the least GPU time (GPUs x recorded duration),
  // the service LAS ranks by (all Philly jobs here run an hour or more).
  std::vector<double> gpu_time;
  for (size_t j = 0; j < t.jobs.size(); ++j)
    gpu_time.push_back(static_cast<double>(rl.out[j].shape.requested_gpus()) * seconds(t.jobs[j].duration));
  std::vector<double> sorted_gt = gpu_time;
  std::sort(sorted_gt.begin(), sorted_gt.end());
  const double short_gt = sorted_gt[sorted_gt.size() / 2];
  auto jct = [&](const Run& r, bool short_only) {
    std::vector<double> v;
    for (size_t j = 0; j < t.jobs.size(); ++j) {
      if (r.out[j].status != JobStatus::kDone) continue;
      if (short_only && gpu_time[j] > short_gt) continue;
      v.push_back(seconds(r.out[j].end - t.jobs[j].submit));
    }
    return v;
  };
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / static_cast<double>(v.size());
  };
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    if (v.empty()) return 0.0;
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  const auto la = jct(rl, false), ea = jct(re, false), ls = jct(rl, true), es = jct(re, true);
  int64_t preemptions = 0, preempted_jobs = 0;
  for (const auto& o : rl.out) {
    preemptions += o.preemptions;
    preempted_jobs += o.preemptions > 0;
  }
  char line[640];
  std::snprintf(line, sizeof line,
                "philly-d07-d21 on dgx-a100-pod: JCT mean las %.0f s, easy %.0f s; median las %.0f s, easy %.0f s; "
                "short jobs (<= %.0f GPU-s, %zu): mean las %.0f s, easy %.0f s, median las %.0f s, easy %.0f s; "
                "las preemptions %lld of %lld jobs, promotions %lld; passes las %llu, easy %llu",
                mean(la), mean(ea), median(la), median(ea), short_gt, ls.size(), mean(ls), mean(es), median(ls), median(es),
                static_cast<long long>(preemptions), static_cast<long long>(preempted_jobs),
                static_cast<long long>(las.promotions()), static_cast<unsigned long long>(rl.res.passes),
                static_cast<unsigned long long>(re.res.passes));
  WARN(line);
  REQUIRE(la.size() == ea.size());
  REQUIRE(ls.size() >= 20);
  CHECK(preemptions > 0);
  // What LAS is for: short jobs are not stuck behind long ones.
  CHECK(median(ls) < median(es));
  CHECK(mean(ls) < mean(es));
}

TEST_CASE("las runs are deterministic, also with reversed tie order", "[policy][las][determinism]") {
  Diagnostics d;
  const Trace t = read_trace(src("traces/philly-d07-d21.csv"), d);
  LasPolicy p1, p2;
  const Run a = simulate(pod(), t, p1);
  // One policy object reused for a second run starts from a clean state (on_begin).
  const Run b = simulate(pod(), t, p1);
  CHECK(a.sacct == b.sacct);
  CHECK(a.res.fingerprint == b.res.fingerprint);
  CHECK(a.res.events == b.res.events);
  REQUIRE(a.out.size() == b.out.size());
  for (size_t j = 0; j < a.out.size(); ++j) {
    CHECK(a.out[j].end == b.out[j].end);
    CHECK(a.out[j].preemptions == b.out[j].preemptions);
    CHECK(a.out[j].preempted_time == b.out[j].preempted_time);
  }
  const Run rev = simulate(pod(), t, p2, nullptr, true);
  CHECK(rev.sacct == a.sacct);
}

TEST_CASE("las parameters and limits", "[policy][las]") {
  bool listed = false;
  for (const auto& info : policy_list()) listed = listed || info.name == "las";
  CHECK(listed);
  const auto made = make_policy("las");
  REQUIRE(made);
  CHECK(made->name() == "las");
  LasPolicy las;
  const auto params = las.parameters();
  auto get = [&](const std::string& k) {
    for (const auto& [n, v] : params)
      if (n == k) return v;
    return std::string("(missing)");
  };
  CHECK(get("queues") == "2");
  CHECK(get("thresholds_gpu_s") == "3250");
  CHECK(get("promote_knob") == "8");
  CHECK(get("resume_cost_s") == "0");
  CHECK_THROWS(LasPolicy(LasParams{{3600, 1000}, 8, SimTime()}));
  CHECK_THROWS(LasPolicy(LasParams{{3600}, -1, SimTime()}));
  // A policy that does not preempt is unaffected: preempting a job that is not running is refused.
  const Trace t = two_whole_cluster_jobs("01:00:00");
  ScriptedPreempt bad(1, SimTime::seconds(200), SimTime::seconds(300), SimTime());  // B is pending at 200 s
  PlacementAllocator alloc(PlacementMode::kSlurm);
  Simulation sim(pod(), t, bad, alloc);
  CHECK_THROWS_AS(sim.run(), std::logic_error);
}
