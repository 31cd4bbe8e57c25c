// `gcsim trace convert`: every readable trace rewritten as an sbatch-trace CSV reads
// back as the same jobs (request through sbatch's own option parser, times to the
// microsecond, recorded start and state); SWF keeps what its fields can hold, GPUs in
// Alea's resource string; windows and arrival scaling keep sizes, durations and waits.
#include <catch2/catch.hpp>

#include <filesystem>

#include "sim/workload/gpu_trace_readers.hpp"
#include "sim/workload/job_request.hpp"
#include "sim/workload/slurm_time.hpp"
#include "sim/workload/trace_readers.hpp"
#include "sim/workload/trace_transform.hpp"
#include "sim/workload/trace_writers.hpp"
#include "tests/unit/test_paths.hpp"
#include "tools/gcsim/app.hpp"

using namespace gcsim;
using gcsim::test::slurp;
using gcsim::test::src;

namespace {

// Field by field: JobRequest has no operator== on purpose (optional vs default matters).
void require_same_request(const JobRequest& a, const JobRequest& b, bool fraction_lost) {
  REQUIRE(a.nodes_min == b.nodes_min);
  REQUIRE(a.nodes_max == b.nodes_max);
  REQUIRE(a.ntasks == b.ntasks);
  REQUIRE(a.ntasks_per_node == b.ntasks_per_node);
  REQUIRE(a.cpus_per_task == b.cpus_per_task);
  REQUIRE(a.mem_per_node_mb == b.mem_per_node_mb);
  REQUIRE(a.mem_per_cpu_mb == b.mem_per_cpu_mb);
  REQUIRE(a.mem_per_gpu_mb == b.mem_per_gpu_mb);
  REQUIRE(a.gres == b.gres);
  REQUIRE(a.gpus == b.gpus);
  REQUIRE(a.gpus_per_node == b.gpus_per_node);
  REQUIRE(a.gpus_per_task == b.gpus_per_task);
  REQUIRE(a.cpus_per_gpu == b.cpus_per_gpu);
  REQUIRE(a.time_limit == b.time_limit);
  REQUIRE(a.partition == b.partition);
  REQUIRE(a.qos == b.qos);
  REQUIRE(a.account == b.account);
  REQUIRE(a.job_name == b.job_name);
  REQUIRE(a.exclusive == b.exclusive);
  REQUIRE(a.gres_flags == b.gres_flags);
  REQUIRE(a.cpu_bind == b.cpu_bind);
  REQUIRE(a.gpu_bind == b.gpu_bind);
  REQUIRE(a.distribution == b.distribution);
  REQUIRE(a.switches == b.switches);
  REQUIRE(a.switches_wait == b.switches_wait);
  REQUIRE(a.dependency == b.dependency);
  if (!fraction_lost) REQUIRE(a.gpu_fraction == b.gpu_fraction);
}

Trace read(const std::string& rel) {
  Diagnostics d;
  return read_trace(src(rel), d);
}

}  // namespace

TEST_CASE("every in-repo trace survives a round trip through the sbatch-trace CSV", "[convert]") {
  for (const char* rel : {"tests/data/traces/philly/philly_sampled_jobs_4206.json.gz",
                          "tests/data/traces/alibaba/gpu-v2023/openb_pod_list_default.csv",
                          "tests/data/traces/helios/helios_sample_handwritten.csv", "traces/hpc2n_first3171.swf",
                          "traces/accasim_tests_workload.swf", "traces/philly-d07-d21.csv",
                          "tests/oracle/binding/trace.csv", "tests/oracle/topo-tree/trace.csv"}) {
    INFO(rel);
    const Trace in = read(rel);
    std::vector<std::string> lost;
    const std::string csv = format_sbatch_trace(in, {"round trip of " + std::string(rel)}, lost);
    Diagnostics d;
    const Trace back = parse_sbatch_trace(csv, "back.csv", d);
    REQUIRE(back.jobs.size() == in.jobs.size());
    REQUIRE(back.unix_start == in.unix_start);
    const bool fraction_lost = std::any_of(lost.begin(), lost.end(), [](const std::string& l) {
      return l.find("fractional GPU") != std::string::npos;
    });
    // The CSV reader orders jobs by submit (stable), as the writers' input already is.
    for (size_t k = 0; k < in.jobs.size(); ++k) {
      const Job& a = in.jobs[k];
      const Job& b = back.jobs[k];
      INFO("job " << k << " " << a.name);
      REQUIRE(b.submit == a.submit);
      REQUIRE(b.duration == a.duration);
      REQUIRE(b.user == a.user);
      REQUIRE(b.account == a.account);
      REQUIRE(b.partition == a.partition);
      REQUIRE(b.recorded_start == a.recorded_start);
      REQUIRE(b.recorded_state == a.recorded_state);
      require_same_request(a.req, b.req, fraction_lost);
      REQUIRE(job_gpus(b) == job_gpus(a));
    }
  }
}

TEST_CASE("what the CSV cannot hold is reported, never silent", "[convert]") {
  const Trace in = read("tests/data/traces/alibaba/gpu-v2023/openb_pod_list_default.csv");
  std::vector<std::string> lost;
  (void)format_sbatch_trace(in, {}, lost);
  // 43.6% of the 7,064 GPU pods ask for a share of one GPU (traces.md 4.4): 3,078 pods.
  REQUIRE(std::find(lost.begin(), lost.end(),
                    "3078 jobs: fractional GPU request (sbatch has none): asks for one whole GPU") != lost.end());
}

TEST_CASE("SWF output keeps the 18 fields' meaning and GPUs in Alea's resource string", "[convert]") {
  const Trace in = read("traces/hpc2n_first3171.swf");
  std::vector<std::string> lost;
  const std::string swf = format_swf(in, {"test"}, lost);
  Diagnostics d;
  const Trace back = parse_swf(swf, "back.swf", d);
  REQUIRE(back.jobs.size() == in.jobs.size());
  REQUIRE(back.unix_start == in.unix_start);
  REQUIRE(back.max_procs == in.max_procs);
  for (size_t k = 0; k < in.jobs.size(); ++k) {
    INFO("job " << k);
    REQUIRE(back.jobs[k].submit == in.jobs[k].submit);
    REQUIRE(back.jobs[k].duration == in.jobs[k].duration);
    REQUIRE(back.jobs[k].recorded_start == in.jobs[k].recorded_start);
    REQUIRE(back.jobs[k].recorded_state == in.jobs[k].recorded_state);
    REQUIRE(back.jobs[k].req.time_limit == in.jobs[k].req.time_limit);
    REQUIRE(job_cpus(back.jobs[k]) == job_cpus(in.jobs[k]));
    // A bare processor count stays free to spread over nodes (no resource string).
    REQUIRE(back.jobs[k].req.nodes_min == in.jobs[k].req.nodes_min);
  }
  // A GPU trace: the resource string carries nodes, CPUs and GPUs per node.
  const Trace philly = read("tests/data/traces/philly/philly_sampled_jobs_4206.json.gz");
  const std::string pswf = format_swf(philly, {}, lost);
  REQUIRE(pswf.find(" {} - 1:ppn=8:gpus=8\n") != std::string::npos);
  const Trace pback = parse_swf(pswf, "p.swf", d);
  REQUIRE(pback.jobs.size() == philly.jobs.size());
  int64_t gpus_in = 0, gpus_back = 0;
  for (size_t k = 0; k < philly.jobs.size(); ++k) {
    gpus_in += job_gpus(philly.jobs[k]);
    gpus_back += job_gpus(pback.jobs[k]);
    REQUIRE(job_min_nodes(pback.jobs[k]) == job_min_nodes(philly.jobs[k]));
  }
  REQUIRE(gpus_back == gpus_in);
}

TEST_CASE("a window keeps the jobs submitted in it and moves t=0 to its start", "[convert]") {
  const Trace full = read("traces/KTH-SP2-1996-2.1-cln.swf.gz");
  const SimTime from = SimTime::seconds(30 * 86400), to = SimTime::seconds(60 * 86400);
  size_t expect = 0;
  for (const Job& j : full.jobs) expect += j.submit >= from && j.submit < to;
  REQUIRE(expect > 1000);  // KTH runs about 84 jobs a day
  Trace w = full;
  apply_window(w, TraceWindow{from, to, 1.0});
  REQUIRE(w.jobs.size() == expect);
  REQUIRE(*w.unix_start == *full.unix_start + 30 * 86400);
  REQUIRE(w.jobs.front().submit >= SimTime());
  REQUIRE(w.jobs.back().submit < to - from);

  // Twice the arrival rate: submits halve, every wait and duration stays.
  Trace fast = w;
  apply_window(fast, TraceWindow{std::nullopt, std::nullopt, 2.0});
  for (size_t k = 0; k < w.jobs.size(); ++k) {
    REQUIRE(std::llabs(fast.jobs[k].submit.count_us() * 2 - w.jobs[k].submit.count_us()) <= 1);
    REQUIRE(fast.jobs[k].duration == w.jobs[k].duration);
    if (w.jobs[k].recorded_start)
      REQUIRE(*fast.jobs[k].recorded_start - fast.jobs[k].submit == *w.jobs[k].recorded_start - w.jobs[k].submit);
  }
  REQUIRE(fast.assumptions.back().find("arrivals scaled x2") == 0);

  const SourceLoc cli{"<command line>", 0, 0};
  REQUIRE(parse_window_point("7d", cli).relative == SimTime::seconds(7 * 86400));
  REQUIRE(parse_window_point("1-12:00:00", cli).relative == SimTime::seconds(36 * 3600));
  REQUIRE(resolve_window_point(parse_window_point("1996-10-01", cli), full, cli) ==
          SimTime::seconds(*slurm_time::parse_iso("1996-10-01") - *full.unix_start));
  REQUIRE_THROWS_AS(parse_window_point("7x", cli), InputError);
}

TEST_CASE("stable_sort_by_submit is std::stable_sort by submit, moving each job once", "[convert]") {
  const Trace full = read("traces/KTH-SP2-1996-2.1-cln.swf.gz");
  // a scrambled order with many equal submits: every job's submit floored to the hour,
  // the jobs dealt out from the back in strides of 7
  std::vector<Job> jobs;
  const size_t n = full.jobs.size();
  for (size_t s = 0; s < 7; ++s)
    for (size_t i = n - 1 - s; i < n; i -= 7) {
      jobs.push_back(full.jobs[i]);
      jobs.back().submit = SimTime::seconds(full.jobs[i].submit.whole_seconds() / 3600 * 3600);
      if (i < 7) break;
    }
  REQUIRE(jobs.size() == n);
  std::vector<Job> want = jobs;
  std::stable_sort(want.begin(), want.end(), [](const Job& a, const Job& b) { return a.submit < b.submit; });
  stable_sort_by_submit(jobs);
  size_t ties = 0;
  for (size_t k = 0; k < n; ++k) {
    REQUIRE(jobs[k].id == want[k].id);
    REQUIRE(jobs[k].req.ntasks == want[k].req.ntasks);
    ties += k > 0 && jobs[k].submit == jobs[k - 1].submit;
  }
  REQUIRE(ties > n / 2);  // the ties are what a stable sort must keep in order
}

TEST_CASE("gcsim trace convert writes the file whole or not at all", "[convert][cli]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "gcsim-convert-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string out = (dir / "philly.csv").string();
  REQUIRE(run_cli({"gcsim", "trace", "convert", src("tests/data/traces/philly/philly_sampled_jobs_4206.json.gz"), out}) == 0);
  const std::string text = slurp(out);
  REQUIRE(text.rfind("# converted by gcsim trace convert from ", 0) == 0);
  REQUIRE(text.find("\nname,submit,duration,args,user,account,partition,start,state\n") != std::string::npos);
  // It reads back through the normal trace dispatch.
  Diagnostics d;
  REQUIRE(read_trace(out, d).jobs.size() == 4206);

  // Bad input: exit 2 and no output file.
  const std::string bad = (dir / "bad.csv").string();
  REQUIRE(run_cli({"gcsim", "trace", "convert", src("tests/inputs/invalid/trace/csv_unknown_column.csv"), bad}) == 2);
  REQUIRE_FALSE(fs::exists(bad));
  REQUIRE(run_cli({"gcsim", "trace", "convert", src("traces/accasim_tests_workload.swf"), (dir / "x.txt").string()}) == 2);
  REQUIRE_FALSE(fs::exists(dir / "x.txt"));
  fs::remove_all(dir);
}
