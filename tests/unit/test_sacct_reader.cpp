// sacct --parsable2 as a trace: gcsim's own jobs.sacct (and sacct -p output with its
// trailing '|', step lines, any field order) reads back as the jobs that ran.
#include <catch2/catch.hpp>

#include "models/placement/placement.hpp"
#include "models/sched/registry.hpp"
#include "sim/cluster/cluster_yaml.hpp"
#include "sim/io/run_outputs.hpp"
#include "sim/sched/simulation.hpp"
#include "sim/workload/trace_readers.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;
using gcsim::test::src;

TEST_CASE("sacct lines in any field order with steps and arrays", "[sacct]") {
  const std::string text =
      "State|JobID|JobName|Partition|Account|User|Submit|Eligible|Start|End|Elapsed|Timelimit|NNodes|NCPUS|ReqTRES|"
      "AllocTRES|\n"
      "COMPLETED|123_4|train|gpu|acct_a|alice|2024-01-01T00:00:10|2024-01-01T00:00:10|2024-01-01T00:01:00|"
      "2024-01-01T01:01:00|01:00:00|1-00:00:00|2|16|billing=16,cpu=16,gres/gpu:a100=8,gres/gpu=8,mem=128000M,node=2|"
      "billing=16,cpu=16,node=2|\n"
      "COMPLETED|123_4.batch|batch||acct_a||2024-01-01T00:00:10|2024-01-01T00:00:10|2024-01-01T00:01:00|"
      "2024-01-01T01:01:00|01:00:00||1|8|||\n"
      "TIMEOUT|124|sim|cpu|acct_b|bob|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:00:05|"
      "2024-01-01T00:10:05|00:10:00|00:10:00|1|4|billing=4,cpu=4,mem=4G,node=1||\n"
      "PENDING|125|wait|cpu|acct_b|bob|2024-01-01T00:00:20|2024-01-01T00:00:20|Unknown|Unknown|00:00:00|00:10:00|1|4|"
      "cpu=4,node=1||\n";
  Diagnostics d;
  const Trace t = parse_sacct_trace(text, "s.txt", d);
  REQUIRE(t.jobs.size() == 2);
  CHECK(*t.unix_start == 1704067200);  // the earliest submit, 2024-01-01T00:00:00
  const Job& a = t.jobs[1];
  CHECK(a.name == "train");
  CHECK(a.submit == SimTime::seconds(10));
  CHECK(*a.recorded_start == SimTime::seconds(60));
  CHECK(a.duration == SimTime::seconds(3600));
  CHECK(*a.req.time_limit == SimTime::seconds(86400));
  CHECK(a.req.nodes_min == 2);
  CHECK(a.req.ntasks == 16);
  REQUIRE(a.req.gpus.has_value());
  CHECK(a.req.gpus->type == "a100");
  CHECK(a.req.gpus->count == 8);
  CHECK(a.req.mem_per_node_mb == 64000);
  CHECK(t.jobs[0].recorded_state == RecordedState::kTimeout);
  CHECK(t.jobs[0].req.mem_per_node_mb == 4096);
  REQUIRE(d.all().size() == 1);
  CHECK(d.all()[0].str() == "s.txt: warning: skipped 1 jobs that never started");
}

TEST_CASE("sacct reader errors name the line and field", "[sacct]") {
  Diagnostics d;
  try {
    (void)parse_sacct_trace("JobID|Submit|Start|End|Elapsed\n1|yesterday|2024-01-01T00:00:00|x|00:01:00\n", "e.txt", d);
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(e.diagnostics().format() == "e.txt:2:3: error: invalid Submit time 'yesterday'\n");
  }
}

TEST_CASE("gcsim's own jobs.sacct replays as a trace", "[sacct][e2e]") {
  Diagnostics d;
  const Trace orig = read_trace(src("traces/philly-d07-d21.csv"), d);
  const Cluster cluster = load_cluster_yaml(src("configs/dgx-a100-pod.yaml"));
  auto policy = make_policy("easy");
  PlacementAllocator alloc(PlacementMode::kSlurm);
  Simulation sim(cluster, orig, *policy, alloc);
  REQUIRE(sim.run().completed);
  const std::string sacct = format_sacct(cluster, orig, sim.outcomes());
  const Trace back = parse_sacct_trace(sacct, "jobs.sacct", d);
  REQUIRE(back.jobs.size() == orig.jobs.size());
  // Every job comes back with its elapsed time as duration and its limit.
  for (size_t i = 0; i < back.jobs.size(); ++i) {
    REQUIRE(back.jobs[i].recorded_start.has_value());
    REQUIRE(back.jobs[i].req.gpus.has_value());
    REQUIRE(back.jobs[i].req.time_limit.has_value());
  }
}
