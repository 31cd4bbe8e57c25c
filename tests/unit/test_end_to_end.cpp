// End-to-end runs on real traces: every schedule is capacity-feasible, fcfs keeps
// queue order, EASY never delays the head job's reservation, runs are
// deterministic (also with reversed tie order), and golden outputs hold.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <tuple>

#include "models/placement/placement.hpp"
#include "models/sched/registry.hpp"
#include "sim/cluster/cluster_yaml.hpp"
#include "sim/core/input_file.hpp"
#include "sim/io/run_outputs.hpp"
#include "sim/metrics/summary.hpp"
#include "sim/placement/allocator.hpp"
#include "sim/sched/simulation.hpp"
#include "sim/workload/sbatch_options.hpp"
#include "sim/workload/trace_readers.hpp"
#include "tests/unit/schedule_checker.hpp"
#include "tests/unit/test_paths.hpp"
#include "tools/gcsim/app.hpp"

using namespace gcsim;
using gcsim::test::slurp;
using gcsim::test::src;
namespace fs = std::filesystem;

namespace {

struct Case {
  std::string name;
  std::string cluster;  // empty: inferred from the SWF header
  std::string trace;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"hpc2n3170", "", "traces/hpc2n_first3171.swf"},
      {"philly-dgx-a100", "configs/dgx-a100-pod.yaml", "traces/philly-d07-d21.csv"},
      {"philly-mixed", "configs/mixed.yaml", "traces/philly-d07-d21-4gpu-p-gpu.csv"},
      {"philly-pcie", "configs/pcie-8gpu.yaml", "traces/philly-d07-d21.csv"},
  };
  return c;
}

Cluster cluster_for(const Case& c, const Trace& t) {
  if (!c.cluster.empty()) return load_cluster_yaml(src(c.cluster));
  return make_cpu_cluster("inferred", static_cast<int>(*t.max_nodes),
                          static_cast<int>(*t.max_procs / *t.max_nodes), "inferred");
}

struct RunOut {
  std::string sacct, summary;
  uint64_t fingerprint = 0;
  std::vector<JobOutcome> outcomes;
};

RunOut simulate(const Cluster& cluster, const Trace& trace, const std::string& policy, bool reverse = false,
                PlacementMode mode = PlacementMode::kSlurm) {
  auto p = make_policy(policy);
  PlacementAllocator alloc(mode);
  SimulationOptions opt;
  opt.reverse_ties = reverse;
  Simulation sim(cluster, trace, *p, alloc, opt);
  const auto res = sim.run();
  REQUIRE(res.completed);
  RunOut r;
  r.sacct = format_sacct(cluster, trace, sim.outcomes());
  r.summary = format_summary_json(summarize(cluster, trace, sim.outcomes()));
  r.fingerprint = res.fingerprint;
  r.outcomes = sim.outcomes();
  return r;
}

std::string golden_text(const RunOut& r) {
  char fp[32];
  std::snprintf(fp, sizeof fp, "%016llx", static_cast<unsigned long long>(r.fingerprint));
  return std::string("event_fingerprint ") + fp + "\njobs.sacct sha256 " + sha256_hex(r.sacct) + "\n" + r.summary;
}


}  // namespace

TEST_CASE("every golden schedule is feasible, ordered and matches its golden file", "[e2e]") {
  const bool update = std::getenv("GCSIM_UPDATE_GOLDEN") != nullptr;
  for (const auto& c : cases()) {
    for (const std::string policy : {"fcfs", "easy"}) {
      DYNAMIC_SECTION(c.name << " " << policy) {
        Diagnostics d;
        const Trace trace = read_trace(src(c.trace), d);
        const Cluster cluster = cluster_for(c, trace);
        const RunOut r = simulate(cluster, trace, policy);

        // Capacity feasibility, checked on the sacct text users will read.
        const auto rows = gcsim::test::parse_sacct(r.sacct);
        size_t ran = 0;
        for (const auto& o : r.outcomes) ran += o.status == JobStatus::kDone;
        REQUIRE(rows.size() == ran);
        REQUIRE(ran + std::count_if(r.outcomes.begin(), r.outcomes.end(),
                                    [](const JobOutcome& o) { return o.status == JobStatus::kRejected; }) ==
                trace.jobs.size());
        const auto bad = gcsim::test::check_feasibility(cluster, rows);
        INFO((bad.empty() ? std::string() : bad.front()));
        CHECK(bad.empty());

        // Queue order is (submit, job id): fcfs starts jobs in that order; EASY starts
        // no job later than the earliest reservation it ever gave it.
        std::vector<size_t> order;
        for (size_t j = 0; j < trace.jobs.size(); ++j)
          if (r.outcomes[j].status == JobStatus::kDone) order.push_back(j);
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
          return std::pair(trace.jobs[a].submit, trace.jobs[a].id) < std::pair(trace.jobs[b].submit, trace.jobs[b].id);
        });
        if (policy == "fcfs") {
          for (size_t k = 1; k < order.size(); ++k)
            REQUIRE(r.outcomes[order[k - 1]].start <= r.outcomes[order[k]].start);
        } else {
          size_t reserved = 0;
          for (const auto& o : r.outcomes) {
            if (!o.first_reservation) continue;
            ++reserved;
            REQUIRE(o.start <= *o.first_reservation);
          }
          CHECK(reserved > 0);
        }

        const std::string golden_path = src("tests/golden/" + c.name + "-" + policy + ".txt");
        if (update) {
          fs::create_directories(fs::path(golden_path).parent_path());
          std::ofstream(golden_path, std::ios::binary) << golden_text(r);
        }
        const std::string want = slurp(golden_path), got = golden_text(r);
        if (!kReversedTiesBuild) {
          CHECK(got == want);
        } else {  // a reversed-ties build: another event order, the same outputs
          const size_t eol = want.find('\n');
          CHECK(got.substr(0, eol) != want.substr(0, eol));
          CHECK(got.substr(eol) == want.substr(eol));
        }
      }
    }
  }
}

TEST_CASE("EASY backfills and beats fcfs on waits for the HPC2N prefix", "[e2e]") {
  Diagnostics d;
  const Trace trace = read_trace(src("traces/hpc2n_first3171.swf"), d);
  const Cluster cluster = cluster_for(cases()[0], trace);
  const auto fc = simulate(cluster, trace, "fcfs");
  const auto ea = simulate(cluster, trace, "easy");
  const Summary sf = summarize(cluster, trace, fc.outcomes);
  const Summary se = summarize(cluster, trace, ea.outcomes);
  CHECK(se.backfilled > 0);
  CHECK(sf.backfilled == 0);
  CHECK(se.wait_s.mean < sf.wait_s.mean);
}

TEST_CASE("same inputs give byte-identical outputs, also with reversed tie order", "[e2e][determinism]") {
  Diagnostics d;
  const Trace trace = read_trace(src("traces/philly-d07-d21.csv"), d);
  const Cluster cluster = load_cluster_yaml(src("configs/dgx-a100-pod.yaml"));
  const auto a = simulate(cluster, trace, "easy");
  const auto b = simulate(cluster, trace, "easy");
  CHECK(a.sacct == b.sacct);
  CHECK(a.summary == b.summary);
  CHECK(a.fingerprint == b.fingerprint);
  const auto rev = simulate(cluster, trace, "easy", true);
  CHECK(rev.sacct == a.sacct);
  CHECK(rev.summary == a.summary);
}

TEST_CASE("two simulations run side by side in one process", "[e2e][kernel]") {
  Diagnostics d;
  const Trace t1 = read_trace(src("traces/philly-d07-d21.csv"), d);
  const Trace t2 = read_trace(src("traces/hpc2n_first3171.swf"), d);
  const Cluster c1 = load_cluster_yaml(src("configs/dgx-a100-pod.yaml"));
  const Cluster c2 = cluster_for(cases()[0], t2);
  auto p1 = make_policy("easy");
  auto p2 = make_policy("fcfs");
  PlacementAllocator alloc(PlacementMode::kSlurm);
  Simulation s1(c1, t1, *p1, alloc);
  Simulation s2(c2, t2, *p2, alloc);
  const auto r2 = s2.run();
  const auto r1 = s1.run();
  CHECK(r1.completed);
  CHECK(r2.completed);
  // Interleaving does not change either result.
  CHECK(format_sacct(c1, t1, s1.outcomes()) == simulate(c1, t1, "easy").sacct);
  CHECK(format_sacct(c2, t2, s2.outcomes()) == simulate(c2, t2, "fcfs").sacct);
}

TEST_CASE("gcsim run writes a complete run directory", "[e2e][cli]") {
  const std::string out = (fs::temp_directory_path() / "gcsim-test-run").string();
  fs::remove_all(out);
  const int rc = run_cli({"gcsim", "run", "--cluster", src("configs/dgx-a100-pod.yaml"), "--trace",
                          src("traces/philly-d07-d21.csv"), "--out", out, "--no-progress"});
  REQUIRE(rc == 0);
  const std::string sacct = slurp(out + "/jobs.sacct");
  CHECK(sacct.rfind("JobID|JobName|Partition|Account|User|Submit|Eligible|Start|End|Elapsed|Timelimit|State|"
                    "NNodes|NCPUS|NodeList|ReqTRES|AllocTRES|Flags|CPU_IDs|GRES_IDX\n",
                    0) == 0);
  const std::string manifest = slurp(out + "/manifest.json");
  CHECK(manifest.find("\"completed\": true") != std::string::npos);
  CHECK(manifest.find("\"sha256\": \"" + file_sha256(src("traces/philly-d07-d21.csv")) + "\"") != std::string::npos);
  CHECK(slurp(out + "/summary.json").find("\"jobs\": 416") != std::string::npos);
  // No temporary files are left behind.
  for (const auto& e : fs::directory_iterator(out)) CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
  fs::remove_all(out);
}

TEST_CASE("an SWF run without --cluster infers the machine from the header", "[e2e][cli]") {
  const std::string out = (fs::temp_directory_path() / "gcsim-test-swf").string();
  fs::remove_all(out);
  REQUIRE(run_cli({"gcsim", "run", "--trace", src("traces/hpc2n_first3171.swf"), "--out", out, "--no-progress"}) == 0);
  const auto rows = gcsim::test::parse_sacct(slurp(out + "/jobs.sacct"));
  CHECK(rows.size() == 3145);  // 25 of the 3,170 records have no run time
  // Times are ISO-8601 from the log's UnixStartTime (HPC2N starts in July 2002).
  CHECK(rows.front().f.at("Submit").rfind("2002-07-", 0) == 0);
  fs::remove_all(out);
}

TEST_CASE("jobs.sacct shows the cores and GPUs cons_tres chooses", "[e2e][placement]") {
  Diagnostics d;
  const Trace trace = read_trace(src("tests/data/sched/consres-2x8.csv"), d);
  const Cluster cluster = load_cluster_yaml(src("tests/data/sched/consres-2x8.yaml"));
  const auto rows = gcsim::test::parse_sacct(simulate(cluster, trace, "easy").sacct);
  REQUIRE(rows.size() == 4);
  // The allocations real Slurm made for these four jobs (slurm_internals.md 4.5).
  CHECK(rows[0].f.at("CPU_IDs") == "g01:0-1");
  CHECK(rows[0].f.at("GRES_IDX") == "g01:0");
  CHECK(rows[1].f.at("CPU_IDs") == "g01:8-9");
  CHECK(rows[1].f.at("GRES_IDX") == "g01:2");
  CHECK(rows[2].f.at("CPU_IDs") == "g01:2-3,10-11");
  CHECK(rows[2].f.at("GRES_IDX") == "g01:1,3");
  CHECK(rows[3].f.at("CPU_IDs") == "g02:0-9");
  CHECK(rows[3].f.at("GRES_IDX") == "g02:0");
  // Unbound placement takes the lowest free ids instead.
  const auto unbound = gcsim::test::parse_sacct(simulate(cluster, trace, "easy", false, PlacementMode::kUnbound).sacct);
  CHECK(unbound[1].f.at("CPU_IDs") == "g01:2-3");
  CHECK(unbound[1].f.at("GRES_IDX") == "g01:1");
}

TEST_CASE("numa-bound jobs wait where unbound ones run", "[e2e][placement]") {
  Diagnostics d;
  const Trace trace = read_trace(src("traces/philly-d07-d21.csv"), d);
  const Cluster cluster = load_cluster_yaml(src("configs/pcie-8gpu.yaml"));
  for (const auto mode : {PlacementMode::kSlurm, PlacementMode::kNumaBound, PlacementMode::kUnbound,
                          PlacementMode::kK8sBestEffort, PlacementMode::kK8sSingleNuma}) {
    DYNAMIC_SECTION(placement_mode_name(mode)) {
      const auto r = simulate(cluster, trace, "easy", false, mode);
      const auto bad = gcsim::test::check_feasibility(cluster, gcsim::test::parse_sacct(r.sacct));
      INFO((bad.empty() ? std::string() : bad.front()));
      CHECK(bad.empty());
    }
  }
}

TEST_CASE("sjf serves the shortest waiting job first and cuts HPC2N's mean wait", "[e2e][policy]") {
  // One 4-core node: A runs 1 h; B (10 h limit) and C (10 min limit) both wait for all of
  // it. EASY keeps B first; sjf starts C first because its limit is shorter.
  const Cluster one = make_cpu_cluster("one", 1, 4, "test");
  Trace t;
  const std::vector<std::tuple<std::string, int64_t, std::string>> jobs = {
      {"A", 0, "--ntasks=4 --time=1:00:00"}, {"B", 1, "--ntasks=4 --time=10:00:00"}, {"C", 2, "--ntasks=4 --time=10"}};
  for (const auto& [name, submit, args] : jobs) {
    Job j;
    j.id = JobId(static_cast<int64_t>(t.jobs.size()) + 1);
    j.name = name;
    j.submit = SimTime::seconds(submit);
    j.duration = SimTime::seconds(300);
    Diagnostics d;
    REQUIRE(parse_sbatch_options(args, SourceLoc{"t", 1, 1}, j.req, d));
    t.jobs.push_back(j);
  }
  const auto easy = simulate(one, t, "easy");
  const auto sjf = simulate(one, t, "sjf");
  CHECK(easy.outcomes[1].start < easy.outcomes[2].start);
  CHECK(sjf.outcomes[2].start < sjf.outcomes[1].start);
  CHECK(sjf.outcomes[2].start == SimTime::seconds(300));  // right when A ends

  // On a real log: a feasible schedule, and a lower mean wait than EASY's.
  Diagnostics d;
  const Trace trace = read_trace(src("traces/hpc2n_first3171.swf"), d);
  const Cluster cluster = cluster_for(cases()[0], trace);
  const auto r = simulate(cluster, trace, "sjf");
  CHECK(gcsim::test::check_feasibility(cluster, gcsim::test::parse_sacct(r.sacct)).empty());
  const Summary se = summarize(cluster, trace, simulate(cluster, trace, "easy").outcomes);
  const Summary ss = summarize(cluster, trace, r.outcomes);
  INFO("mean wait easy " << se.wait_s.mean << " s, sjf " << ss.wait_s.mean << " s");
  CHECK(ss.wait_s.mean < se.wait_s.mean);
}

TEST_CASE("replay starts each job at its recorded start; late ones do not hold back others", "[e2e][policy]") {
  // One 4-core node. A (recorded start 0) runs 300 s on all of it; B is recorded to start
  // at 100 s on 2 cores, which the model's node does not have then; C, recorded at 200 s
  // on 4 cores, is late too. D (1 core, recorded at 400 s) starts on time although B and
  // C fell due first; B and C start when A ends, first fit in the order they fell due.
  const Cluster one = make_cpu_cluster("one", 1, 4, "test");
  Trace t;
  const std::vector<std::tuple<int64_t, int64_t, std::string, int64_t>> jobs = {
      {0, 0, "--ntasks=4", 300}, {50, 100, "--ntasks=2", 200}, {60, 200, "--ntasks=4", 50}, {70, 400, "--ntasks=1", 10}};
  for (const auto& [submit, start, args, run] : jobs) {
    Job j;
    j.id = JobId(static_cast<int64_t>(t.jobs.size()) + 1);
    j.submit = SimTime::seconds(submit);
    j.recorded_start = SimTime::seconds(start);
    j.duration = SimTime::seconds(run);
    Diagnostics d;
    REQUIRE(parse_sbatch_options(args, SourceLoc{"t", 1, 1}, j.req, d));
    t.jobs.push_back(j);
  }
  const auto r = simulate(one, t, "replay");
  CHECK(r.outcomes[0].start == SimTime::seconds(0));
  CHECK(r.outcomes[1].start == SimTime::seconds(300));  // B: late, first when A ends
  CHECK(r.outcomes[2].start == SimTime::seconds(500));  // C: needs all 4, after B
  CHECK(r.outcomes[3].start == SimTime::seconds(400));  // D: on time beside B

  // On a real log on the machine it ran on: every job at its recorded start, but where
  // the log itself oversubscribes the inferred machine.
  Diagnostics d;
  const Trace trace = read_trace(src("traces/hpc2n_first3171.swf"), d);
  const Cluster cluster = cluster_for(cases()[0], trace);
  const auto rp = simulate(cluster, trace, "replay");
  CHECK(gcsim::test::check_feasibility(cluster, gcsim::test::parse_sacct(rp.sacct)).empty());
  size_t on_time = 0, recorded = 0;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    if (!trace.jobs[i].recorded_start) continue;
    ++recorded;
    on_time += rp.outcomes[i].start == std::max(*trace.jobs[i].recorded_start, trace.jobs[i].submit);
  }
  INFO(on_time << " of " << recorded << " on time");
  CHECK(recorded > 3000);
  CHECK(on_time >= recorded * 99 / 100);
}
