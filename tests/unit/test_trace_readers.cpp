// SWF and sbatch-trace readers on the real fixtures bundled in traces/.
#include <catch2/catch.hpp>

#include "sim/core/diagnostics.hpp"
#include "sim/workload/trace_readers.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;
using gcsim::test::src;

TEST_CASE("KTH SP2 SWF log: header and every job", "[swf]") {
  Diagnostics d;
  const Trace t = read_trace(src("traces/KTH-SP2-1996-2.1-cln.swf.gz"), d);
  CHECK(t.format == "swf");
  CHECK(t.jobs.size() == 27992);  // the PWA page: 28,489 jobs, 27,992 after cleaning
  CHECK(t.max_nodes == 100);
  CHECK(t.max_procs == 100);
  REQUIRE(t.unix_start.has_value());
  CHECK(*t.unix_start == 843480031);  // the UnixStartTime header (1996-09-23)
  CHECK(t.computer == "IBM SP2");
  // Sorted by submit time, ids as in the file.
  for (size_t i = 1; i < t.jobs.size(); ++i) REQUIRE(t.jobs[i - 1].submit <= t.jobs[i].submit);
  // The first job line of the cleaned log.
  const Job& j = t.jobs.front();
  CHECK(j.req.ntasks == 4);
  CHECK(j.req.time_limit == SimTime::seconds(53940));
  CHECK(j.duration == SimTime::seconds(3477));
}

TEST_CASE("HPC2N prefix SWF: 3,170 records, 240 procs", "[swf]") {
  Diagnostics d;
  const Trace t = read_trace(src("traces/hpc2n_first3171.swf"), d);
  // 25 records have run time -1 (never ran): skipped with one warning.
  CHECK(t.jobs.size() == 3145);
  REQUIRE(d.all().size() == 1);
  CHECK(d.all()[0].message == "skipped 25 jobs with unknown run time (-1)");
  CHECK(t.max_procs == 240);
  CHECK(t.max_nodes == 240);  // the header counts CPUs as nodes (Seth: 120 dual-CPU nodes)
  REQUIRE(t.unix_start.has_value());
  CHECK(*t.unix_start == 1027839845);
  int64_t max_procs = 0;
  for (const auto& j : t.jobs) max_procs = std::max<int64_t>(max_procs, *j.req.ntasks);
  CHECK(max_procs <= 240);
}

TEST_CASE("header-less SWF (AccaSim test workload) reads; the cluster must come from elsewhere", "[swf]") {
  Diagnostics d;
  const Trace t = read_trace(src("traces/accasim_tests_workload.swf"), d);
  CHECK(t.jobs.size() == 25);
  CHECK_FALSE(t.max_procs.has_value());
  CHECK_FALSE(t.unix_start.has_value());
}

TEST_CASE("SWF floats in time fields and -1 unknowns", "[swf]") {
  const std::string text =
      "; MaxProcs: 8\n"
      "1 0 5 552.21 4 -1 -1 4 600 -1 1 1 1 -1 1 -1 -1 -1\n"
      "2 10 -1 -1 2 -1 -1 2 60 -1 1 1 1 -1 1 -1 -1 -1\n"
      "3 12 -1 30 -1 -1 -1 2 -1 -1 0 2 1 -1 1 -1 -1 -1\n";
  Diagnostics d;
  const Trace t = parse_swf(text, "mem.swf", d);
  REQUIRE(t.jobs.size() == 2);  // job 2 has no run time
  CHECK(t.jobs[0].duration.count_us() == 552'210'000);
  CHECK(t.jobs[1].req.ntasks == 2);  // requested procs when allocated is -1
  CHECK_FALSE(t.jobs[1].req.time_limit.has_value());
  CHECK(t.jobs[1].recorded_state == RecordedState::kFailed);
  REQUIRE(d.all().size() == 1);
  CHECK(d.all()[0].str() == "mem.swf: warning: skipped 1 jobs with unknown run time (-1)");
}

TEST_CASE("sbatch-trace CSV of the Philly window", "[sbatch-trace]") {
  Diagnostics d;
  const Trace t = read_trace(src("traces/philly-d07-d21.csv"), d);
  CHECK(t.format == "sbatch-csv");
  CHECK(t.jobs.size() == 416);
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    REQUIRE(t.jobs[i].id.value == static_cast<int64_t>(i) + 1);
    REQUIRE_FALSE(t.jobs[i].account.empty());
    REQUIRE(t.jobs[i].req.time_limit.has_value());
  }
  const Job& j = t.jobs.front();
  CHECK(j.req.nodes_min == 1);
  CHECK(j.req.gpus_per_node.has_value());
  CHECK(j.req.cpus_per_task == 8);
  CHECK(j.req.mem_per_gpu_mb == 64 * 1024);
}

TEST_CASE("sbatch-trace rows in the oracle's own form", "[sbatch-trace]") {
  const std::string text =
      "name,submit,duration,args,user,account\n"
      "f003,1,104,\"--ntasks=1 --cpus-per-task=4 --gres=gpu:a100:2 --time=2\",,acct_a\n"
      "a001,0,13,\"--nodes=1 --ntasks=16 --cpus-per-task=1 --time=4\"\n";
  Diagnostics d;
  // The second row has fewer fields than the header: an error naming line 3.
  try {
    (void)parse_sbatch_trace(text, "t.csv", d);
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(e.diagnostics().format() == "t.csv:3:1: error: expected 6 fields, found 4\n");
  }
  const std::string ok =
      "name,submit,duration,args,user,account\n"
      "f003,1,104,\"--ntasks=1 --cpus-per-task=4 --gres=gpu:a100:2 --time=2\",,acct_a\n"
      "a001,0,13,\"--nodes=1 --ntasks=16 --cpus-per-task=1 --time=4\",,\n";
  const Trace t = parse_sbatch_trace(ok, "t.csv", d);
  REQUIRE(t.jobs.size() == 2);
  // Slurm numbers jobs in submission order.
  CHECK(t.jobs[0].name == "a001");
  CHECK(t.jobs[0].id.value == 1);
  CHECK(t.jobs[1].name == "f003");
  CHECK(t.jobs[1].account == "acct_a");
  REQUIRE(t.jobs[1].req.gres.size() == 1);
  CHECK(t.jobs[1].req.gres[0].type == "a100");
  CHECK(t.jobs[1].req.gres[0].count == 2);
  CHECK(t.jobs[1].req.time_limit == SimTime::minutes(2));
}
