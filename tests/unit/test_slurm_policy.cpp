// The slurm policy's parts on small cases: sacctmgr dump parsing, Fair Tree ranks and
// classic fair-share, SchedulerParameters reading, time-limit kills with OverTimeLimit,
// dependencies, job arrays, --switches on a topology/tree, a main pass's blocked
// partition under partitions that share nodes, and what backfill keeps across cycles
// (will-run outcomes, and outcomes replayed while the state is unchanged).
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <unistd.h>  // getpid

#include "models/placement/placement.hpp"
#include "models/priority/multifactor.hpp"
#include "models/sched/slurm_policy.hpp"
#include "sim/cluster/import_slurm_conf.hpp"
#include "sim/core/input_file.hpp"
#include "sim/io/run_outputs.hpp"
#include "sim/sched/simulation.hpp"
#include "sim/workload/accounts.hpp"
#include "sim/workload/trace_readers.hpp"
#include "sim/workload/trace_transform.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;
namespace fs = std::filesystem;

namespace {

Cluster oracle_cluster(const std::string& name) {
  Diagnostics w;
  return load_slurm_conf(test::src("tests/oracle/" + name + "/slurm.conf"), w);
}

struct SlurmRun {
  std::vector<JobOutcome> outcomes;
  uint64_t will_runs_reused = 0;
  uint64_t replayed = 0;
  std::pair<uint64_t, uint64_t> replays_checked;  // (compared, found otherwise)
  uint64_t walks_shared = 0;
  uint64_t chains_shared = 0;
};

/// What backfill keeps from cycle to cycle (SlurmPolicy's defaults: everything).
struct Reuse {
  bool will_runs = true;
  bool replay = true;
  bool check = false;  // test each outcome the replay would take, and compare
  bool walks = true;   // one will-run walk for the jobs of a cycle with the same candidates
  bool chains = true;  // jobs whose windows all offer too few candidates, ended as one before
};

SlurmRun run_slurm_trace(const Cluster& c, const Trace& t, std::map<std::string, std::string> overrides = {},
                         bool reverse_ties = false, Reuse reuse = {}) {
  Diagnostics w;
  SlurmPolicyInputs in;
  in.cluster = &c;
  in.overrides = std::move(overrides);
  SlurmPolicy p(in, w);
  p.keep_will_runs(reuse.will_runs);
  p.replay_outcomes(reuse.replay);
  p.check_replays(reuse.check);
  p.share_walks(reuse.walks);
  p.share_chains(reuse.chains);
  PlacementAllocator a(PlacementMode::kSlurm);
  SimulationOptions opt;
  opt.reverse_ties = reverse_ties;
  Simulation sim(c, t, p, a, opt);
  REQUIRE(sim.run().completed);
  return {sim.outcomes(),       p.will_runs_reused(), p.outcomes_replayed(), p.replays_checked(),
          p.walks_shared(), p.chains_shared()};
}

Trace csv_trace(const std::string& csv) {
  // One file per process: ctest runs these test cases in parallel processes, and a
  // shared name let one read a file another was still writing.
  const std::string path =
      (fs::temp_directory_path() / ("gcsim_slurm_policy_trace." + std::to_string(::getpid()) + ".csv")).string();
  {
    std::ofstream f(path);
    f << csv;
  }
  Diagnostics w;
  Trace t = read_trace(path, w);
  fs::remove(path);
  return t;
}

std::vector<JobOutcome> run_slurm(const Cluster& c, const std::string& csv,
                                  std::map<std::string, std::string> overrides = {}, bool reverse_ties = false) {
  return run_slurm_trace(c, csv_trace(csv), std::move(overrides), reverse_ties).outcomes;
}

/// run_slurm where all `n` jobs must run to their end.
std::vector<JobOutcome> run_slurm_all_done(const Cluster& c, const std::string& csv, size_t n) {
  auto out = run_slurm(c, csv);
  REQUIRE(out.size() == n);
  for (const auto& o : out) REQUIRE(o.status == JobStatus::kDone);
  return out;
}

/// "start-end" of each job, in seconds (for INFO).
std::string timeline(const std::vector<JobOutcome>& out) {
  std::string s;
  for (size_t i = 0; i < out.size(); ++i)
    s += "j" + std::to_string(i) + " " + std::to_string(out[i].start.to_seconds()) + "-" +
         std::to_string(out[i].end.to_seconds()) + " ";
  return s;
}

/// An SWF log of traces/ on the nodes its header gives (MaxNodes of MaxProcs / MaxNodes cores).
std::pair<Trace, Cluster> swf_on_its_nodes(const std::string& path, const std::string& name) {
  Diagnostics d;
  Trace t = read_trace(test::src(path), d);
  REQUIRE(t.max_nodes);
  REQUIRE(t.max_procs);
  Cluster c =
      make_cpu_cluster(name, static_cast<int>(*t.max_nodes), static_cast<int>(*t.max_procs / *t.max_nodes), "test");
  return {std::move(t), std::move(c)};
}

/// The first 3,171 jobs of the HPC2N log (traces/) on its 120 two-core nodes: a queue
/// that waits for hours, so many backfill cycles follow one another with no job started
/// or ended between them.
std::pair<Trace, Cluster> hpc2n_first3171() { return swf_on_its_nodes("traces/hpc2n_first3171.swf", "hpc2n"); }

int first_node(const JobOutcome& o) {
  int node = -1;
  PackedAllocation scratch;
  o.final_packed(scratch).for_each_node([&](const PackedAllocation::NodeView& v) {
    if (node < 0) node = v.node;
  });
  return node;
}

}  // namespace

TEST_CASE("sacctmgr dump: the fairshare oracle's associations", "[slurm][accounts]") {
  const AccountTree t = read_sacctmgr_dump(test::src("tests/oracle/fairshare/accounts.cfg"));
  CHECK(t.cluster == "fairshare");
  REQUIRE(t.account("acct_c").has_value());
  CHECK(t.assocs[*t.account("acct_c")].shares == 50);
  REQUIRE(t.user("acct_a", "root").has_value());
  CHECK(t.assocs[*t.user("acct_a", "root")].parent == *t.account("acct_a"));
  CHECK(t.default_account("root") == "root");
}

TEST_CASE("sacctmgr dump: errors point at file:line:col", "[slurm][accounts]") {
  try {
    (void)parse_sacctmgr_dump("Cluster - 'c'\nParent - 'nosuch'\nAccount - 'a':Fairshare=x\nbogus line\n", "d.cfg");
    FAIL("no error");
  } catch (const InputError& e) {
    const std::string m = e.diagnostics().format();
    CHECK(m.find("d.cfg:2:") != std::string::npos);
    CHECK(m.find("d.cfg:3:") != std::string::npos);
    CHECK(m.find("d.cfg:4:1: error:") != std::string::npos);
  }
}

TEST_CASE("Fair Tree: the account that used least ranks first; classic decays with usage", "[slurm][priority]") {
  const Cluster c = oracle_cluster("fairshare");
  Diagnostics d;
  PriorityConfig pc = read_priority_config(c, d);
  CHECK(pc.multifactor);
  CHECK(pc.w_fairshare == 10000);
  CHECK(pc.w_age == 1000);
  CHECK(pc.calc_period == SimTime::seconds(60));
  CHECK(pc.decay_half_life == SimTime::seconds(300));
  const AccountTree tree = read_sacctmgr_dump(test::src("tests/oracle/fairshare/accounts.cfg"));
  MultifactorPriority mf(c, pc, tree);
  const int a = mf.association("acct_a", "root"), b = mf.association("acct_b", "root"),
            cc = mf.association("acct_c", "root");
  // no usage: every user association ties at the top
  CHECK(mf.fairshare_factor(a) == mf.fairshare_factor(cc));
  // acct_a used 1000 CPU-s, acct_b 100, acct_c nothing: c > b > a
  mf.decay_and_charge(SimTime::seconds(0), {});
  mf.decay_and_charge(SimTime::seconds(60), {{a, 10, 100}, {b, 1, 100}});
  CHECK(mf.fairshare_factor(cc) > mf.fairshare_factor(b));
  CHECK(mf.fairshare_factor(b) > mf.fairshare_factor(a));
  // 4 user associations (root's own included): ranks 4/4 ... spread evenly
  CHECK(mf.fairshare_factor(a) == Approx(1.0 / 4).margin(1e-9));
  // usage decays with the half-life: after 300 s, half
  const double u = mf.usage(a);
  mf.decay_and_charge(SimTime::seconds(360), {});
  CHECK(mf.usage(a) == Approx(u * std::pow(1 - std::log(2.0) / 300, 300)).epsilon(1e-9));
  CHECK(mf.usage(a) == Approx(u / 2).epsilon(0.01));
  // priority: fair-share weight x factor + age
  PriorityJob pj;
  pj.assoc = cc;
  const auto fs = static_cast<int64_t>(10000 * mf.fairshare_factor(cc));
  CHECK(mf.priority(pj, SimTime::seconds(360), SimTime::seconds(360)) == fs);
  CHECK(mf.priority(pj, SimTime::seconds(660), SimTime::seconds(360)) == fs + 500);  // half of PriorityMaxAge=10
}

TEST_CASE("SchedulerParameters: values, overrides, unknown options and malformed numbers", "[slurm][config]") {
  Cluster c;
  c.source = "slurm.conf";
  c.slurm_params["SchedulerParameters"] = "bf_interval=5,bf_resolution=60,bf_window=60,bf_continue,frobnicate=2";
  c.slurm_params["OverTimeLimit"] = "2";
  Diagnostics d;
  const SlurmSchedConfig cfg = read_slurm_sched_config(c, {{"default_queue_depth", "7"}}, d);
  CHECK(cfg.bf_interval == SimTime::seconds(5));
  CHECK(cfg.bf_window == SimTime::seconds(3600));
  CHECK(cfg.bf_continue);
  CHECK(cfg.default_queue_depth == 7);
  CHECK(cfg.over_time_limit == SimTime::seconds(120));
  CHECK_FALSE(d.has_errors());
  CHECK(d.format().find("'frobnicate' is not modelled") != std::string::npos);
  c.slurm_params["SchedulerParameters"] = "bf_max_job_test=lots";
  Diagnostics d2;
  (void)read_slurm_sched_config(c, {}, d2);
  CHECK(d2.has_errors());
}

TEST_CASE("slurm policy: time-limit kill at the 30 s check after limit + OverTimeLimit", "[slurm]") {
  Cluster c = oracle_cluster("gpu-sockets");
  c.slurm_params["OverTimeLimit"] = "1";
  const auto out = run_slurm(c, "name,submit,duration,args\nlong,0,600,--ntasks=1 --time=2\n");
  REQUIRE(out[0].status == JobStatus::kDone);
  CHECK(out[0].timed_out);
  // starts on the first main tick (~0.1 s); limit 120 s + 60 s; checks every 30 s from 0
  CHECK(out[0].end == SimTime::seconds(210));
}

TEST_CASE("slurm policy: a main pass keeps a blocked partition's nodes from a later job of another", "[slurm]") {
  // two-types' partitions share all four nodes; with one tier the queue is a (batch),
  // b (high), c (batch). a takes a core, so b's four exclusive nodes fail and block the
  // high partition's nodes, which are c's too: c must not start in that pass, and
  // backfill keeps it off b's reservation (c's 20 min overlap it) until b has run.
  Cluster c = oracle_cluster("two-types");
  c.partitions[static_cast<size_t>(c.find_partition("high"))].priority_tier = 1;
  const auto out = run_slurm_all_done(c,
                                      "name,submit,duration,args\n"
                                      "a,0,300,--partition=batch --ntasks=1 --time=10\n"
                                      "b,0,60,--partition=high --nodes=4 --ntasks=4 --exclusive --time=10\n"
                                      "c,0,60,--partition=batch --ntasks=1 --time=20\n",
                                      3);
  INFO(timeline(out));
  CHECK(out[0].start < SimTime::seconds(10));  // the first main pass
  CHECK(out[1].start >= out[0].end);
  CHECK(out[2].start >= out[1].end);
}

TEST_CASE("slurm policy: a job submitted later to a higher tier goes ahead of the queue", "[slurm]") {
  // two-types: every priority weight is 0, so all priorities are equal and the queue
  // goes by PriorityTier, then submit time, however the passes between the submits
  // left it. x holds all four nodes; lo and lo2 (batch, tier 1) wait from 10 and 15 s,
  // hi (high, tier 2) from 20 s, each for all four nodes: when x ends, hi starts first,
  // then lo, then lo2.
  const Cluster c = oracle_cluster("two-types");
  const auto out = run_slurm_all_done(c,
                                      "name,submit,duration,args\n"
                                      "x,0,300,--partition=batch --nodes=4 --exclusive --time=10\n"
                                      "lo,10,60,--partition=batch --nodes=4 --exclusive --time=10\n"
                                      "lo2,15,60,--partition=batch --nodes=4 --exclusive --time=10\n"
                                      "hi,20,60,--partition=high --nodes=4 --exclusive --time=10\n",
                                      4);
  INFO(timeline(out));
  CHECK(out[3].start >= out[0].end);
  CHECK(out[1].start >= out[3].end);
  CHECK(out[2].start >= out[1].end);
}

TEST_CASE("slurm policy: the pass after two simultaneous job ends sees both", "[slurm][determinism]") {
  // a and b hold g01 and g02 and end at the same time; d and e hold g03-g04 for longer.
  // The main pass the ends ask for starts c on the next 1 s tick. A pass run inside the
  // first end event saw only that end's node, so c went to g01 in one tie order and to
  // g02 in the other; after both ends it takes g01 (lowest index) either way.
  const Cluster c = oracle_cluster("gpu-sockets");
  const std::string csv =
      "name,submit,duration,args\n"
      "a,0,60,--nodes=1 --ntasks=16 --time=10\n"
      "b,0,60,--nodes=1 --ntasks=16 --time=10\n"
      "d,0,600,--nodes=1 --ntasks=16 --time=20\n"
      "e,0,600,--nodes=1 --ntasks=16 --time=20\n"
      "c,0,60,--nodes=1 --ntasks=16 --time=10\n";
  for (bool reverse : {false, true}) {
    INFO("reverse_ties " << reverse);
    const auto out = run_slurm(c, csv, {}, reverse);
    REQUIRE(out.size() == 5);
    REQUIRE(out[0].end == out[1].end);
    CHECK(first_node(out[0]) == 0);
    CHECK(first_node(out[1]) == 1);
    CHECK(out[4].start > out[0].end);
    CHECK(out[4].start <= out[0].end + SimTime::seconds(1));
    CHECK(out[4].started_by == StartedBy::kMain);
    CHECK(first_node(out[4]) == 0);
  }
}

TEST_CASE("slurm policy: the full pass comes sched_interval after controller start in whole seconds", "[slurm]") {
  // Only a full pass may start anything (default_queue_depth=0, no backfill). slurmctld
  // starts at -9.95 s, the tick falls at .95 of each trace second, and the controller's
  // wall clock reads 0.05 s at trace time 0, so it turns its second at .95 too: the
  // first full pass is due once time(NULL) is 60 s past the start's second, at 49.95 s.
  // Without the whole seconds (or with the clock's second at .00) it came a tick later,
  // at 50.95 s.
  Cluster c = oracle_cluster("gpu-sockets");
  c.slurm_params["SchedulerType"] = "sched/builtin";
  const std::string csv = "name,submit,duration,args\na,0,30,--ntasks=1 --time=5\n";
  auto start_with = [&](const std::string& wall) {
    const auto out = run_slurm(c, csv,
                               {{"default_queue_depth", "0"},
                                {"ctld_start", "-9.95"},
                                {"main_tick_phase", "0.9"},
                                {"wall_clock_zero", wall}});
    REQUIRE(out.size() == 1);
    REQUIRE(out[0].status == JobStatus::kDone);
    CHECK(out[0].started_by == StartedBy::kMain);
    return out[0].start;
  };
  CHECK(start_with("0.05") == SimTime::us(49950000));
  CHECK(start_with("0") == SimTime::us(50950000));
}

TEST_CASE("slurm policy: main passes fall on the recorded tick times, evenly between them", "[slurm]") {
  // A replayed run's main passes (main_tick_times) pin the background tick, which
  // wanders +-30 ms about a straight line. Ticks 0.5 s and 10.52 s recorded: the nine
  // between are 1.002 s apart, and after the last main_tick_period apart.
  Cluster c = oracle_cluster("gpu-sockets");
  c.slurm_params["SchedulerType"] = "sched/builtin";
  const std::string csv =
      "name,submit,duration,args\n"
      "a,3,30,--nodes=1 --ntasks=16 --time=5\n"    // the first tick after 3 s
      "b,5,30,--nodes=1 --ntasks=16 --time=5\n"    // after 6 s: batch_sched_delay from a's pass
      "c,12,30,--nodes=1 --ntasks=16 --time=5\n";  // past the last recorded tick
  std::map<std::string, std::string> o = {
      {"ctld_start", "-9.95"}, {"wall_clock_zero", "0"}, {"main_tick_period", "1.002"}};
  const auto line = run_slurm(c, csv, o);
  o["main_tick_times"] = "0.5:10.52";
  const auto with = run_slurm(c, csv, o);
  REQUIRE(with.size() == 3);
  for (const auto& x : with) CHECK(x.started_by == StartedBy::kMain);
  CHECK(with[0].start == SimTime::us(3506000));
  CHECK(with[1].start == SimTime::us(6512000));
  CHECK(with[2].start == SimTime::us(12524000));
  // without them, the fitted line: main_tick_phase (0.1 s) after ctld_start, 1.002 s apart
  REQUIRE(line.size() == 3);
  CHECK(line[0].start == SimTime::us(3176000));
}

TEST_CASE("slurm policy: main_tick_times and bf_cycle_times must be ascending seconds", "[slurm][config]") {
  Cluster c;
  c.source = "slurm.conf";
  Diagnostics d;
  const auto cfg = read_slurm_sched_config(c, {{"main_tick_times", "-1.5:0.25:3"}}, d);
  CHECK_FALSE(d.has_errors());
  CHECK(cfg.main_tick_times == std::vector<SimTime>{SimTime::us(-1500000), SimTime::us(250000), SimTime::seconds(3)});
  Diagnostics d2;
  (void)read_slurm_sched_config(c, {{"main_tick_times", "1:x:0.5"}}, d2);
  CHECK(d2.format().find("'x' is not a number of seconds") != std::string::npos);
  CHECK(d2.format().find("'0.5' is not after the time before it") != std::string::npos);
  Diagnostics d3;
  const auto cycles = read_slurm_sched_config(c, {{"bf_cycle_times", "-4.963+0.002:0.035+0.003"}}, d3);
  CHECK_FALSE(d3.has_errors());
  REQUIRE(cycles.bf_cycle_times.size() == 2);
  CHECK(cycles.bf_cycle_times[0] == std::pair{SimTime::us(-4963000), SimTime::us(-4961000)});
  Diagnostics d4;
  (void)read_slurm_sched_config(c, {{"bf_cycle_times", "1+0.1:2:0.5+0.1"}}, d4);
  CHECK(d4.format().find("'2' is not START+LENGTH in seconds") != std::string::npos);
  CHECK(d4.format().find("'0.5+0.1' does not start after the cycle before it") != std::string::npos);
}

TEST_CASE("slurm policy: the backfill thread sleeps bf_interval from the end of a cycle", "[slurm][backfill]") {
  // In the oracle logs a cycle begins bf_interval (or whole 1 s re-checks more) after the
  // last one completed, so cycles drift by their own length (1-45 ms; topo-tree run1's
  // were 0.44 s behind a fixed grid by 210 s). Only backfill starts jobs here: a at the
  // first cycle, b, submitted a second later, at the next.
  const Cluster c = oracle_cluster("gpu-sockets");
  const std::string a = "name,submit,duration,args\na,0,100,--nodes=1 --ntasks=16 --time=5\n";
  for (const std::string base : {"0", "0.25"}) {
    INFO("bf_cycle_base " << base);
    const std::map<std::string, std::string> o = {{"default_queue_depth", "0"}, {"sched_interval", "-1"},
                                                  {"bf_interval", "5"},         {"ctld_start", "-9.95"},
                                                  {"bf_cycle_base", base},      {"bf_cycle_per_job", "0.01"}};
    const auto first = run_slurm(c, a, o);
    REQUIRE(first.size() == 1);
    REQUIRE(first[0].started_by == StartedBy::kBackfill);
    const int64_t b_submit = static_cast<int64_t>(first[0].start.to_seconds()) + 1;
    const auto out = run_slurm(c, a + "b," + std::to_string(b_submit) + ",100,--nodes=1 --ntasks=16 --time=5\n", o);
    REQUIRE(out.size() == 2);
    REQUIRE(out[1].started_by == StartedBy::kBackfill);
    CHECK(out[0].start == first[0].start);
    // one job tested in a's cycle: base + 0.01 s, then the 5 s sleep
    const SimTime cycle = SimTime::us(base == "0" ? 10000 : 260000);
    CHECK(out[1].start - out[0].start == SimTime::seconds(5) + cycle);
    // a cycle the log shows at that moment (within 0.5 s) lasts what the log says
    auto logged = o;
    char at[64];
    std::snprintf(at, sizeof at, "%.6f+0.4", out[0].start.to_seconds() - 0.1);
    logged["bf_cycle_times"] = at;
    const auto pinned = run_slurm(c, a + "b," + std::to_string(b_submit) + ",100,--nodes=1 --ntasks=16 --time=5\n", logged);
    REQUIRE(pinned.size() == 2);
    CHECK(pinned[0].start == out[0].start);
    CHECK(pinned[1].start - pinned[0].start == SimTime::seconds(5) + SimTime::us(300000));
  }
}

TEST_CASE("slurm policy: jobs started in one pass end later the more there are", "[slurm]") {
  // In the oracle runs a job's end reached the controller 0.07 s after its run time when
  // it started alone, 0.11, 0.15 and 0.21 s when 2, 3 or 4 started in the same pass.
  // a, b, c start in the first main pass, d alone in a later one.
  const Cluster c = oracle_cluster("gpu-sockets");
  const std::string csv =
      "name,submit,duration,args\n"
      "a,0,30,--nodes=1 --ntasks=16 --time=5\n"
      "b,0,40,--nodes=1 --ntasks=16 --time=5\n"
      "c,0,50,--nodes=1 --ntasks=16 --time=5\n"
      "d,20,30,--nodes=1 --ntasks=16 --time=5\n";
  for (const std::string per : {"0", "0.04"}) {
    INFO("job_exit_latency_per_start " << per);
    const auto out = run_slurm(c, csv, {{"job_exit_latency", "0.07"}, {"job_exit_latency_per_start", per}});
    REQUIRE(out.size() == 4);
    REQUIRE(out[0].start == out[1].start);
    REQUIRE(out[0].start == out[2].start);
    REQUIRE(out[3].start > out[0].start);
    const SimTime together = SimTime::us(per == "0" ? 70000 : 150000);
    for (int j = 0; j < 3; ++j)
      CHECK(out[j].end - out[j].start == SimTime::seconds(30 + 10 * j) + together);
    CHECK(out[3].end - out[3].start == SimTime::seconds(30) + SimTime::us(70000));
  }
}

TEST_CASE("slurm policy: afterok waits for the end, afternotok is never satisfied by success", "[slurm][deps]") {
  const Cluster c = oracle_cluster("gpu-sockets");
  const auto out = run_slurm(c,
                             "name,submit,duration,args\n"
                             "a,0,30,--ntasks=1 --time=2\n"
                             "b,0,10,--ntasks=1 --time=2 --dependency=afterok:1\n"
                             "c,0,10,--ntasks=1 --time=2 --dependency=afternotok:1\n");
  REQUIRE(out[1].status == JobStatus::kDone);
  CHECK(out[1].start >= out[0].end);
  CHECK(out[1].eligible == out[0].end);
  CHECK(out[2].status == JobStatus::kRejected);
  CHECK(out[2].reject_reason == "DependencyNeverSatisfied");
}

TEST_CASE("slurm policy: a job array with %2 runs two tasks at a time", "[slurm][arrays]") {
  const Cluster c = oracle_cluster("gpu-sockets");
  const auto out = run_slurm_all_done(c, "name,submit,duration,args\narr,0,30,--ntasks=1 --time=2 --array=0-5%2\n", 6);
  for (size_t i = 0; i < out.size(); ++i) {
    int running = 0;
    for (const auto& o : out) running += o.start <= out[i].start && out[i].start < o.end;
    CHECK(running <= 2);
  }
}

TEST_CASE("slurm policy: --switches=1 waits for one leaf until its wait runs out", "[slurm][topology]") {
  const Cluster c = oracle_cluster("topo-tree");
  REQUIRE(c.network.kind == NetworkSpec::Kind::kTree);
  // Leaves s0 = n01-n03, s1 = n04-n06, s2 = n07-n08. Two 2-node blockers take the
  // tightest leaves (s2, then two nodes of s0); no leaf can ever hold 4 nodes, so a
  // 4-node --switches=1 job waits until its wait expires, then spans two leaves.
  const std::string head =
      "name,submit,duration,args\n"
      "b1,0,500,--nodes=2 --ntasks-per-node=8 --time=9\n"
      "b2,0,500,--nodes=2 --ntasks-per-node=8 --time=9\n";
  auto out = run_slurm(c, head + "sw,5,10,--nodes=4 --ntasks-per-node=1 --time=2 --switches=1@1:00\n");
  REQUIRE(out[2].status == JobStatus::kDone);
  CHECK(out[2].start >= SimTime::seconds(5 + 60));
  // nothing changes meanwhile, so the next full main pass (every sched_interval = 60 s) starts it
  CHECK(out[2].start <= SimTime::seconds(5 + 60 + 60));
  CHECK(out[2].alloc.nodes.size() == 4);
  // without @wait: max_switch_wait (default 300 s)
  out = run_slurm(c, head + "sw,5,10,--nodes=4 --ntasks-per-node=1 --time=2 --switches=1\n");
  CHECK(out[2].start >= SimTime::seconds(5 + 300));
  CHECK(out[2].start <= SimTime::seconds(5 + 300 + 60));
  // and a 3-node job fits one leaf (s1) at once
  out = run_slurm(c, head + "sw,5,10,--nodes=3 --ntasks-per-node=1 --time=2 --switches=1\n");
  CHECK(out[2].start < SimTime::seconds(10));
  for (const auto& na : out[2].alloc.nodes) CHECK(c.nodes[na.node].name >= "n04");
}

TEST_CASE("slurm policy: malformed scheduling values are errors at file:line:col", "[slurm][config]") {
  Diagnostics w;
  const std::string conf = test::src("tests/inputs/invalid/slurm_policy/slurm.conf");
  const Cluster c = load_slurm_conf(conf, w);
  SlurmPolicyInputs in;
  in.cluster = &c;
  try {
    SlurmPolicy p(in, w);
    FAIL("no error");
  } catch (const InputError& e) {
    const std::string m = e.diagnostics().format();
    CHECK(m.find(conf + ":25:21: error: bf_interval=five: expected seconds") != std::string::npos);
    CHECK(m.find(conf + ":29:19: error: PriorityWeightAge=-3") != std::string::npos);
  }
}

TEST_CASE("slurm policy: will-run outcomes kept across backfill cycles change no decision", "[slurm][backfill]") {
  // HPC2N's waiting queue: cycles with no change of state between them repeat the
  // cycle before's will-run tests.
  const auto [t, c] = hpc2n_first3171();
  const SlurmRun kept = run_slurm_trace(c, t, {}, false, {.will_runs = true, .replay = false});
  const SlurmRun fresh = run_slurm_trace(c, t, {}, false, {.will_runs = false, .replay = false});
  CHECK(fresh.will_runs_reused == 0);
  CHECK(kept.will_runs_reused > 10000);  // the outcomes were used again, many times
  const std::string with = format_sacct(c, t, kept.outcomes);
  CHECK(with.find("SchedBackfill") != std::string::npos);
  CHECK(with == format_sacct(c, t, fresh.outcomes));
  // and jobs of a cycle with the same candidates share a walk over the running jobs
  const SlurmRun own = run_slurm_trace(c, t, {}, false, {.will_runs = false, .replay = false, .walks = false});
  CHECK(own.walks_shared == 0);
  CHECK(fresh.walks_shared > 10000);
  CHECK(format_sacct(c, t, own.outcomes) == with);
}

TEST_CASE("slurm policy: jobs ended as an earlier one whose windows had too few candidates change no decision",
          "[slurm][backfill]") {
  // KTH's SP2 from day 120 to 150: a queue deep enough that the table is reserved
  // through for whole stretches, so that job after job of one time limit hops through
  // windows with no candidate node left and ends with no reservation.
  auto [t, c] = swf_on_its_nodes("traces/KTH-SP2-1996-2.1-cln.swf.gz", "kth");
  apply_window(t, TraceWindow{SimTime::seconds(120 * 86400), SimTime::seconds(150 * 86400), 1.0});
  REQUIRE(t.jobs.size() > 2000);
  const SlurmRun shared = run_slurm_trace(c, t);
  const SlurmRun tried = run_slurm_trace(c, t, {}, false, {.chains = false});
  CHECK(tried.chains_shared == 0);
  CHECK(shared.chains_shared > 300);
  const std::string with = format_sacct(c, t, shared.outcomes);
  CHECK(with.find("SchedBackfill") != std::string::npos);
  CHECK(with == format_sacct(c, t, tried.outcomes));
}

TEST_CASE("slurm policy: replaying the last cycle's outcomes changes no decision", "[slurm][backfill]") {
  // The same HPC2N jobs, with the outcomes of a cycle after no change of state taken
  // from the cycle before wherever they still hold, and tested afresh. The table's end
  // moves on by bf_resolution every other cycle, and queued jobs' planned starts pass
  // the cycle's time, so both kinds of record are refused along the way.
  const auto [t, c] = hpc2n_first3171();
  const SlurmRun replayed = run_slurm_trace(c, t);
  const SlurmRun tested = run_slurm_trace(c, t, {}, false, {.replay = false});
  CHECK(tested.replayed == 0);
  CHECK(replayed.replayed > 10000);
  const std::string with = format_sacct(c, t, replayed.outcomes);
  CHECK(with.find("SchedBackfill") != std::string::npos);
  CHECK(with == format_sacct(c, t, tested.outcomes));
  // Outcomes alike are not enough (a reservation a minute off may change nothing
  // later): each outcome the replay would take is tested afresh and compared.
  const SlurmRun checked = run_slurm_trace(c, t, {}, false, {.check = true});
  CHECK(checked.replays_checked.first > 10000);
  CHECK(checked.replays_checked.second == 0);
}

TEST_CASE("slurm policy: replayed outcomes match tested ones on random small queues", "[slurm][backfill]") {
  // Where the replay's conditions turn: a table of 10 to 50 minutes, so reservations
  // reach its end and it moves on under them; time limits of 1 to 30 minutes, so
  // windows begin and end on each other's reservations; and jobs that overrun their
  // limit, so that planned starts fall on ends that have passed.
  const Cluster c = make_cpu_cluster("small", 8, 4, "test");
  uint64_t replayed = 0, compared = 0, shared = 0, chains = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::mt19937_64 rng(20261207 + trial);
    std::string csv = "name,submit,duration,args\n";
    int submit = 0;
    for (int k = 0; k < 50; ++k) {
      submit += static_cast<int>(rng() % 90);
      const int limit = 1 + static_cast<int>(rng() % 30);
      const int nodes = 1 + static_cast<int>(rng() % 4);
      const int tasks = nodes * (1 + static_cast<int>(rng() % 4));
      // a quarter overrun their limit and are killed at the next 30 s check after it
      const int duration = rng() % 4 == 0 ? limit * 60 + 45 : 1 + static_cast<int>(rng() % (limit * 60));
      csv += "j" + std::to_string(k) + "," + std::to_string(submit) + "," + std::to_string(duration) +
             ",--nodes=" + std::to_string(nodes) + " --ntasks=" + std::to_string(tasks) + " --time=" + std::to_string(limit) +
             (rng() % 3 == 0 ? " --exclusive" : "") + "\n";
    }
    const Trace t = csv_trace(csv);
    const std::map<std::string, std::string> params{
        {"bf_window", std::to_string(10 + 20 * (trial % 3))},
        {"bf_resolution", std::to_string(std::array{60, 300, 600, 900}[trial % 4])}};
    const SlurmRun with = run_slurm_trace(c, t, params);
    const SlurmRun without = run_slurm_trace(c, t, params, false, {.replay = false});
    const SlurmRun checked = run_slurm_trace(c, t, params, false, {.check = true});
    // (backfill starts jobs within a cycle here, which a shared walk must see)
    const SlurmRun own = run_slurm_trace(c, t, params, false, {.walks = false});
    const SlurmRun tried = run_slurm_trace(c, t, params, false, {.chains = false});
    replayed += with.replayed;
    shared += with.walks_shared;
    chains += with.chains_shared;
    compared += checked.replays_checked.first;
    INFO("trial " << trial);
    REQUIRE(format_sacct(c, t, with.outcomes) == format_sacct(c, t, without.outcomes));
    REQUIRE(checked.replays_checked.second == 0);
    REQUIRE(format_sacct(c, t, with.outcomes) == format_sacct(c, t, own.outcomes));
    REQUIRE(format_sacct(c, t, with.outcomes) == format_sacct(c, t, tried.outcomes));
  }
  CHECK(replayed > 1000);
  CHECK(shared > 1000);
  CHECK(chains > 1000);
  CHECK(compared > 1000);
}
