// Readers for the research-artifact GPU workloads (Gavel, Pollux/Sia, Tiresias, Chronus,
// bare duration lists) and the Alea-extended / header-less SWF, on the fixtures in
// tests/data/traces/{gavel,pollux,tiresias,chronus}; the whole curated ../shared/data
// when it is there: every job trace in it must read, and the statistics in
// shared/data/traces/STATS_gpu.txt must come out of the readers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>

#include "sim/core/diagnostics.hpp"
#include "sim/workload/research_readers.hpp"
#include "sim/workload/trace_readers.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;
using gcsim::test::shared_data;
using gcsim::test::shared_exists;
using gcsim::test::error_of;
using gcsim::test::first_error;
using gcsim::test::src;

namespace {

std::map<int64_t, int64_t> gpu_mix(const Trace& t) {
  std::map<int64_t, int64_t> m;
  for (const Job& j : t.jobs) ++m[j.recorded_gpus];
  return m;
}

int64_t gpus_per_node(const Job& j) { return j.req.gpus_per_node ? j.req.gpus_per_node->count : 0; }

// Percent with one decimal, as STATS_gpu.txt prints it.
double pct1(int64_t part, int64_t whole) { return std::round(1000.0 * part / whole) / 10.0; }

// pandas' default quantile: linear between the two nearest ranks.
double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double h = (static_cast<double>(v.size()) - 1) * q;
  const size_t lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (h - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

bool shared_or_warn(const std::string& rel) {
  if (shared_exists(rel)) return true;
  WARN("../shared/data/" + rel + " is absent (fresh clone): skipped");
  return false;
}

// Files directly in a ../shared/data folder whose name passes `keep`, sorted.
std::vector<std::string> shared_files(const std::string& dir, const std::function<bool(const std::string&)>& keep) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(shared_data(dir))) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && keep(name)) out.push_back(dir + "/" + name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

}  // namespace

TEST_CASE("Gavel msr trace: Philly VC 2869ce, 533 jobs in the 7-field layout", "[research-traces]") {
  Diagnostics d;
  const Trace t = read_trace(src("tests/data/traces/gavel/2869ce.trace.gz"), d);
  CHECK(t.format == "gavel");
  REQUIRE(t.jobs.size() == 533);
  CHECK(gpu_mix(t) == std::map<int64_t, int64_t>{{1, 65}, {2, 6}, {4, 11}, {8, 379}, {16, 2}, {32, 70}});
  // Line 1: Transformer (batch size 128), 5352613 steps, arrival 0, scale_factor 4.
  const Job& a = t.jobs.front();
  CHECK(a.id == JobId(1));
  CHECK(a.name == "transformer-batch-size-128");
  CHECK(a.submit == SimTime());
  CHECK(a.duration == SimTime::seconds(5352613));  // steps taken as seconds (see assumptions)
  CHECK(a.recorded_gpus == 4);
  CHECK(a.req.nodes_min == 1);
  CHECK(gpus_per_node(a) == 4);
  CHECK(a.req.ntasks == 4);
  CHECK(a.account == "vc_2869ce");  // the file is named by its Philly VC, as Chronus spells it
  CHECK(a.req.account == "vc_2869ce");
  CHECK(t.jobs[1].submit == SimTime::seconds(1456));
  CHECK(t.jobs[1].duration == SimTime::seconds(557847));
  CHECK(t.jobs.back().submit == SimTime::seconds(8141054));
  CHECK(t.jobs.back().recorded_gpus == 8);
  // 32 GPUs on 8-GPU nodes: 4 x 8.
  const auto big = std::find_if(t.jobs.begin(), t.jobs.end(), [](const Job& j) { return j.recorded_gpus == 32; });
  REQUIRE(big != t.jobs.end());
  CHECK(big->req.nodes_min == 4);
  CHECK(big->req.nodes_max == 4);
  CHECK(gpus_per_node(*big) == 8);
  const bool says_steps = std::any_of(t.assumptions.begin(), t.assumptions.end(),
                                      [](const std::string& s) { return s.find("1 step/s") != std::string::npos; });
  CHECK(says_steps);
  CHECK(d.all().empty());
}

TEST_CASE("Gavel physical_cluster trace: the 10-field layout", "[research-traces]") {
  Diagnostics d;
  const Trace t = read_trace(src("tests/data/traces/gavel/small_test.trace"), d);
  CHECK(t.format == "gavel");
  REQUIRE(t.jobs.size() == 20);
  CHECK(gpu_mix(t) == std::map<int64_t, int64_t>{{1, 17}, {2, 3}});
  // Line 1: Transformer (batch size 128), 346 steps, scale_factor 2, SLO -1, arrival 0.
  const Job& a = t.jobs.front();
  CHECK(a.name == "transformer-batch-size-128");
  CHECK(a.duration == SimTime::seconds(346));
  CHECK(a.recorded_gpus == 2);
  CHECK(a.account.empty());  // not a VC file
  CHECK(t.jobs.back().name == "resnet-18-batch-size-16");
  CHECK(t.jobs.back().duration == SimTime::seconds(1817));
}

TEST_CASE("Gavel msr seed 0: the STATS_gpu.txt GPU mix over all 15 VC files", "[research-traces]") {
  if (!shared_or_warn("traces/gavel/msr_seed0/2869ce.trace.gz")) return;
  std::map<int64_t, int64_t> mix;
  int64_t n = 0;
  const auto files =
      shared_files("traces/gavel/msr_seed0", [](const std::string& f) { return ends_with(f, ".trace.gz"); });
  REQUIRE(files.size() == 15);
  for (const auto& f : files) {
    Diagnostics d;
    const Trace t = read_trace(shared_data(f), d);
    REQUIRE(t.format == "gavel");
    n += static_cast<int64_t>(t.jobs.size());
    for (const auto& [g, c] : gpu_mix(t)) mix[g] += c;
  }
  CHECK(n == 15264);
  // STATS_gpu.txt: 1:68.7% 2:3.0% 4:13.4% 7:0.0% 8:12.6% 12:0.0% 16:1.7% 20:0.0% 24:0.0% 32:0.6% 64:0.0%
  CHECK(pct1(mix[1], n) == 68.7);
  CHECK(pct1(mix[2], n) == 3.0);
  CHECK(pct1(mix[4], n) == 13.4);
  CHECK(pct1(mix[8], n) == 12.6);
  CHECK(pct1(mix[16], n) == 1.7);
  CHECK(pct1(mix[32], n) == 0.6);
  CHECK(
      mix ==
      std::map<int64_t, int64_t>{
          {1, 10480}, {2, 463}, {4, 2044}, {7, 2}, {8, 1916}, {12, 6}, {16, 255}, {20, 1}, {24, 5}, {32, 91}, {64, 1}});
}

TEST_CASE("Pollux workload-1: tuned and realistic GPU counts, durations from the GPU-time table", "[research-traces]") {
  Diagnostics d;
  const Trace t = read_trace(src("tests/data/traces/pollux/workloads/workload-1.csv"), d);
  CHECK(t.format == "pollux");
  REQUIRE(t.jobs.size() == 160);
  CHECK(gpu_mix(t) ==
        std::map<int64_t, int64_t>{{1, 68}, {4, 3}, {6, 22}, {8, 18}, {12, 26}, {16, 19}, {24, 1}, {32, 3}});
  // cifar10-0,107,cifar10,6,2048: 465 GPU-seconds over 6 replicas, 2 nodes x 3 GPUs (4-GPU nodes).
  const Job& a = t.jobs.front();
  CHECK(a.name == "cifar10-0");
  CHECK(a.submit == SimTime::seconds(107));
  CHECK(a.duration == SimTime::us(77'500'000));
  CHECK(a.req.nodes_min == 2);
  CHECK(gpus_per_node(a) == 3);
  CHECK(a.req.ntasks == 6);
  CHECK(t.jobs.back().name == "ncf-159");
  CHECK(t.jobs.back().submit == SimTime::seconds(27695));
  CHECK(t.jobs.back().duration == SimTime::seconds(465));

  const Trace r = read_trace(src("tests/data/traces/pollux/workloads-realistic/workload-1.csv"), d);
  REQUIRE(r.jobs.size() == 160);
  CHECK(gpu_mix(r) == std::map<int64_t, int64_t>{{1, 150}, {4, 5}, {8, 4}, {16, 1}});
  CHECK(r.jobs.front().name == "cifar10-0");
  CHECK(r.jobs.front().duration == SimTime::seconds(465));  // one replica: the whole GPU time
  const auto imagenet =
      std::find_if(r.jobs.begin(), r.jobs.end(), [](const Job& j) { return j.name.rfind("imagenet", 0) == 0; });
  REQUIRE(imagenet != r.jobs.end());
  CHECK(imagenet->duration.whole_seconds() * imagenet->recorded_gpus >= 1'138'000);
  CHECK(d.all().empty());
}

TEST_CASE("Sia-style workload: float times, extra columns, any column order", "[research-traces]") {
  const std::string text =
      "num_replicas,application,note,time,name,batch_size\n"
      "4,deepspeech2,x,9.661784,deepspeech2-0,320\n"
      "2,bert,y,3.5,bert-1,384\n";
  Diagnostics d;
  const Trace t = parse_pollux_workload(text, "sia.csv", d);
  CHECK(t.format == "pollux");
  REQUIRE(t.jobs.size() == 2);
  CHECK(t.jobs[0].name == "bert-1");  // submit order
  CHECK(t.jobs[0].submit == SimTime::us(3'500'000));
  CHECK(t.jobs[0].duration == SimTime::seconds(5692));  // 11384 / 2
  CHECK(t.jobs[1].submit == SimTime::us(9'661'784));
  CHECK(t.jobs[1].duration == SimTime::seconds(2846));  // 11384 / 4
  CHECK(t.jobs[1].req.nodes_min == 1);
  CHECK(gpus_per_node(t.jobs[1]) == 4);
}

TEST_CASE("Pollux workloads: 8 files, 1280 jobs, the STATS_gpu.txt num_replicas counts", "[research-traces]") {
  if (!shared_or_warn("traces/pollux/workloads/workload-1.csv")) return;
  std::map<int64_t, int64_t> mix;
  int64_t n = 0;
  const auto files = shared_files("traces/pollux/workloads", [](const std::string& f) { return ends_with(f, ".csv"); });
  REQUIRE(files.size() == 8);
  for (const auto& f : files) {
    Diagnostics d;
    const Trace t = read_trace(shared_data(f), d);
    n += static_cast<int64_t>(t.jobs.size());
    for (const auto& [g, c] : gpu_mix(t)) mix[g] += c;
  }
  CHECK(n == 1280);
  // STATS_gpu.txt: num_replicas: {1: 503, 4: 59, 6: 191, 8: 171, 12: 196, 16: 134, 24: 9, 32: 9, 48: 8}
  CHECK(mix == std::map<int64_t, int64_t>{
                   {1, 503}, {4, 59}, {6, 191}, {8, 171}, {12, 196}, {16, 134}, {24, 9}, {32, 9}, {48, 8}});
}

TEST_CASE("Tiresias 60_job.csv and tf_job.csv (a repeated row, no final newline)", "[research-traces]") {
  Diagnostics d;
  const Trace t = read_trace(src("tests/data/traces/tiresias/60_job.csv"), d);
  CHECK(t.format == "tiresias");
  REQUIRE(t.jobs.size() == 60);
  CHECK(gpu_mix(t) == std::map<int64_t, int64_t>{{1, 30}, {2, 10}, {4, 10}, {8, 10}});
  CHECK(t.jobs[0].name == "vgg19-0");
  CHECK(t.jobs[0].submit == SimTime());
  CHECK(t.jobs[0].duration == SimTime::seconds(164));
  CHECK(t.jobs[1].name == "vgg11-1");
  CHECK(t.jobs[1].submit == SimTime::seconds(30));
  CHECK(t.jobs[1].req.nodes_min == 2);  // 8 GPUs on Tiresias's 4-GPU nodes
  CHECK(gpus_per_node(t.jobs[1]) == 4);
  CHECK(t.jobs.back().name == "inception3-59");
  CHECK(t.jobs.back().submit == SimTime::seconds(1779));
  CHECK(d.all().empty());

  Diagnostics w;
  const Trace tf = read_trace(src("tests/data/traces/tiresias/tf_job.csv"), w);
  CHECK(tf.format == "tiresias");
  REQUIRE(tf.jobs.size() == 1);  // the second row repeats the first verbatim
  REQUIRE(w.all().size() == 1);
  CHECK(w.all()[0].str() ==
        src("tests/data/traces/tiresias/tf_job.csv") +
            ": warning: Tiresias: dropped 1 rows that repeat an earlier row verbatim (first at line 3)");
  const Job& j = tf.jobs.front();
  CHECK(j.name == "vgg19-10");
  CHECK(j.submit == SimTime::seconds(11));
  REQUIRE(j.recorded_start.has_value());
  CHECK(*j.recorded_start == SimTime::seconds(14));
  CHECK(j.duration == SimTime::seconds(20));
  CHECK(j.recorded_gpus == 12);
  CHECK(j.req.nodes_min == 3);
}

TEST_CASE("bare duration lists: yarn-gput1000.csv is a batch of 1-GPU jobs at t=0", "[research-traces]") {
  Diagnostics d;
  const Trace t = read_trace(src("tests/data/traces/tiresias/yarn-gput1000.csv"), d);
  CHECK(t.format == "duration-list");
  REQUIRE(t.jobs.size() == 1001);  // the name says 1000; the file has 1001 values
  int64_t total = 0;
  for (const Job& j : t.jobs) {
    REQUIRE(j.submit == SimTime());
    REQUIRE(j.recorded_gpus == 1);
    total += j.duration.whole_seconds();
  }
  CHECK(total == 150989997);
  CHECK(t.jobs.front().duration == SimTime::seconds(121));
  CHECK(t.jobs.back().duration == SimTime::seconds(53294624));
  CHECK(gpus_per_node(t.jobs.front()) == 1);
  CHECK(t.assumptions.front().find("not a job trace") != std::string::npos);

  const Trace r = parse_duration_list("runtime\n0.0\n1186.5\n", "philly_runtime.csv", d);
  REQUIRE(r.jobs.size() == 2);
  CHECK(r.jobs[1].duration == SimTime::us(1'186'500'000));
}

TEST_CASE("Chronus MIX1 prefix: VC users, CPU jobs, submit order", "[research-traces]") {
  Diagnostics d;
  const Trace t = read_trace(src("tests/data/traces/chronus/trace_job_Philly_MIX1_first300.csv.gz"), d);
  CHECK(t.format == "chronus");
  REQUIRE(t.jobs.size() == 300);
  CHECK(gpu_mix(t) == std::map<int64_t, int64_t>{{0, 1}, {1, 270}, {2, 2}, {4, 15}, {8, 11}, {32, 1}});
  // The earliest submit is job_id 31 (t=2), before job_id 165 at the same second (file order).
  const Job& a = t.jobs.front();
  CHECK(a.id == JobId(1));
  CHECK(a.name == "alexnet-31");
  CHECK(a.user == "vc_7f04ca");
  CHECK(a.account == "vc_7f04ca");
  CHECK(a.req.account == "vc_7f04ca");
  CHECK(a.submit == SimTime::seconds(2));
  CHECK(a.duration == SimTime::seconds(82));
  CHECK(t.jobs[1].name == "vgg16-165");
  CHECK(t.jobs.back().name == "alexnet-72");
  CHECK(t.jobs.back().submit == SimTime::seconds(19895));
  CHECK(t.jobs.back().recorded_gpus == 8);
  const auto cpu = std::find_if(t.jobs.begin(), t.jobs.end(), [](const Job& j) { return j.recorded_gpus == 0; });
  REQUIRE(cpu != t.jobs.end());
  CHECK_FALSE(cpu->req.gpus_per_node.has_value());
  CHECK(cpu->req.ntasks == 1);
  CHECK(d.all().empty());
}

TEST_CASE("Chronus MIX1 full trace: the STATS_gpu.txt count, GPU mix and duration quantiles", "[research-traces]") {
  if (!shared_or_warn("traces/chronus/trace_job_Philly_MIX1.csv.gz")) return;
  Diagnostics d;
  const Trace t = read_trace(shared_data("traces/chronus/trace_job_Philly_MIX1.csv.gz"), d);
  const int64_t n = static_cast<int64_t>(t.jobs.size());
  CHECK(n == 30940);
  std::map<std::string, int64_t> bucket;
  std::vector<double> dur;
  for (const Job& j : t.jobs) {
    const int64_t g = j.recorded_gpus;
    bucket[g <= 2 ? std::to_string(g) : g <= 4 ? "3-4" : g <= 8 ? "5-8" : g <= 16 ? "9-16" : "17-32"]++;
    dur.push_back(j.duration.to_seconds());
  }
  // GPU/job: 0:0.6%, 1:91.7%, 2:0.7%, 3-4:3.8%, 5-8:2.8%, 9-16:0.4%, 17-32:0.0%
  CHECK(pct1(bucket["0"], n) == 0.6);
  CHECK(pct1(bucket["1"], n) == 91.7);
  CHECK(pct1(bucket["2"], n) == 0.7);
  CHECK(pct1(bucket["3-4"], n) == 3.8);
  CHECK(pct1(bucket["5-8"], n) == 2.8);
  CHECK(pct1(bucket["9-16"], n) == 0.4);
  CHECK(pct1(bucket["17-32"], n) == 0.0);
  // duration s: p50=60, p90=654, p99=3256
  CHECK(quantile(dur, 0.5) == 60);
  CHECK(quantile(dur, 0.9) == 654);
  CHECK(quantile(dur, 0.99) == 3256);
  // submit span s: 1 20151
  CHECK(t.jobs.front().submit == SimTime::seconds(1));
  CHECK(t.jobs.back().submit == SimTime::seconds(20151));
}

TEST_CASE("read_trace still picks the older formats by content", "[research-traces]") {
  Diagnostics d;
  CHECK(read_trace(src("traces/philly-d07-d21.csv"), d).format == "sbatch-csv");
  CHECK(read_trace(src("traces/accasim_tests_workload.swf"), d).format == "swf");
  CHECK(read_trace(src("tests/data/traces/helios/helios_sample_handwritten.csv"), d).format == "helios-csv");
  CHECK(read_trace(src("tests/data/traces/philly/philly_sampled_jobs_4206.json.gz"), d).format == "philly-json");
  CHECK(read_trace(src("tests/data/traces/alibaba/gpu-v2023/openb_pod_list_default.csv"), d).format == "alibaba-v2023");
}

TEST_CASE("Alea extended SWF: queue as partition, PBS resources, memory in bytes, epoch submit times", "[research-traces]") {
  // Two lines in wagap-2013's form: 18 fields, {node ids}, queue, PBS resources.
  const std::string text =
      "0 1356996147 0 56011 64 1 1024 64 86400 68719476736 1 62 1 1 -1 1 1 1 {1241,1241} q_1d 1:ppn=64:cl_zewura\n"
      "1 1356996695 71 1164297 12 1 1024 12 1209600 91268055040 1 101 1 1 -1 1 1 1 {1129} q_2w 1:ppn=12\n";
  Diagnostics d;
  const Trace t = parse_swf(text, "wagap.swf", d);
  REQUIRE(t.jobs.size() == 2);
  CHECK(t.jobs[0].partition == "q_1d");
  CHECK(t.jobs[1].partition == "q_2w");
  CHECK(t.jobs[0].req.mem_per_cpu_mb == 1024);  // 64 GiB over 64 CPUs
  CHECK(t.jobs[1].req.mem_per_cpu_mb == 7254);  // 85 GiB over 12 CPUs
  REQUIRE(t.unix_start.has_value());
  CHECK(*t.unix_start == 1356996147);
  CHECK(t.jobs[0].submit == SimTime());
  CHECK(t.jobs[1].submit == SimTime::seconds(548));
  REQUIRE(t.jobs[1].recorded_start.has_value());
  CHECK(*t.jobs[1].recorded_start == SimTime::seconds(548 + 71));  // the wait field moves with the rebase
  CHECK_FALSE(t.max_procs.has_value());
  // The PBS resource string gives the node count; #excl asks for whole nodes.
  CHECK(t.jobs[0].req.nodes_min == 1);
  CHECK(t.jobs[0].req.ntasks == 64);
  CHECK_FALSE(t.jobs[0].req.exclusive);
  const Trace x = parse_swf("0 100 0 60 24 1 1024 24 600 -1 1 1 1 1 -1 1 1 1 {} q 2:ppn=12:cl_zewura#excl\n", "x.swf", d);
  CHECK(x.jobs[0].req.nodes_min == 2);
  CHECK(x.jobs[0].req.exclusive);
  // With a header (gcsim's own SWF writer): memory stays KB per processor; `-` = no queue;
  // gpus= in the resource string is GPUs per node.
  const Trace g = parse_swf("; Version: 2.2\n1 0 0 60 16 -1 -1 16 600 2048 1 1 1 -1 -1 1 -1 -1 {} - 2:ppn=8:gpus=4\n",
                            "g.swf", d);
  REQUIRE(g.jobs.size() == 1);
  CHECK(g.jobs[0].partition.empty());
  CHECK(g.jobs[0].req.mem_per_cpu_mb == 2);
  CHECK(g.jobs[0].req.nodes_min == 2);
  REQUIRE(g.jobs[0].req.gpus_per_node.has_value());
  CHECK(g.jobs[0].req.gpus_per_node->count == 4);
  CHECK(g.jobs[0].recorded_gpus == 8);
}

TEST_CASE("wagap-2013 reads as Alea extended SWF", "[research-traces]") {
  if (!shared_or_warn("traces/swf/alea/wagap-2013.swf.gz")) return;
  Diagnostics d;
  const Trace w = read_trace(shared_data("traces/swf/alea/wagap-2013.swf.gz"), d);
  // 17,900 lines; two have a garbage negative run time (-1359980917) and are skipped.
  CHECK(w.jobs.size() == 17898);
  REQUIRE_FALSE(d.all().empty());
  CHECK(d.all()[0].message == "skipped 2 jobs with unknown run time (-1)");
  CHECK(w.jobs.front().partition == "q_1d");
  CHECK(w.jobs.front().req.mem_per_cpu_mb == 1024);
  CHECK(w.unix_start == 1356996147);
  CHECK_FALSE(w.max_procs.has_value());
}

// Every job trace under shared/data/traces reads through read_trace. Files that are
// not job traces, and why:
//  - swf/alea/*.swf.machines, philly/{cluster_machine_list,revised_machine_list}.csv,
//    philly/philly_vc_nodes.csv, alibaba/gpu-v2020/pai_machine_spec.csv,
//    alibaba/gpu-v2023/openb_node_list_*.csv, tiresias/cluster_spec.csv: inventories
//    (the cluster readers take them);
//  - alibaba/gpu-v2023/openb_pod_list_multigpu50.csv: pod shapes without creation,
//    deletion or scheduled times (the reader says so, checked below);
//  - alibaba/gpu-v2020/*.header, README.md files: column names and documentation;
//  - philly/philly_node_sequence.csv.gz, helios/Earth_*_cluster_sequence_vc.csv.gz:
//    per-minute series; helios/*summary*, helios VC size tables, acme/cluster_summary.csv:
//    aggregates (validation targets);
//  - acme/util_pkl/*_cdf.csv: CDFs; acme/util_pkl/*.pkl, gavel/philly_job_distribution.pickle:
//    Python pickles;
//  - chronus/model_info.json: per-model scaling factors, no jobs;
//  - STATS_*, tools/: statistics and the scripts that made them.
// philly/philly_runtime_from_alibaba.csv and tiresias/yarn-gput1000.csv are bare
// run-time lists: they read as duration lists (1-GPU jobs at t=0), not as arrivals.
namespace {

std::vector<std::string> small_job_traces() {
  auto ext = [](const std::string& e) { return [e](const std::string& f) { return ends_with(f, e); }; };
  std::vector<std::string> out;
  auto add = [&](const std::vector<std::string>& v) { out.insert(out.end(), v.begin(), v.end()); };
  add(shared_files("traces/swf/alea", [](const std::string& f) {
    return f.find(".swf") != std::string::npos && !ends_with(f, ".machines");
  }));
  add(shared_files("traces/swf/synthetic", ext(".swf")));
  add({"traces/philly/philly_sampled_jobs_4206.json.gz", "traces/philly/philly_runtime_from_alibaba.csv"});
  add(shared_files("traces/alibaba/gpu-v2023", [](const std::string& f) {
    return f.rfind("openb_pod_list_", 0) == 0 && f != "openb_pod_list_multigpu50.csv";
  }));
  add(shared_files("traces/chronus", ext(".csv.gz")));
  add(shared_files("traces/gavel/msr_seed0", ext(".trace.gz")));
  add(shared_files("traces/gavel/physical_cluster", ext(".trace")));
  add(shared_files("traces/pollux/workloads", ext(".csv")));
  add(shared_files("traces/pollux/workloads-realistic", ext(".csv")));
  add({"traces/tiresias/60_job.csv", "traces/tiresias/tf_job.csv", "traces/tiresias/yarn-gput1000.csv"});
  return out;
}

// Reads every file, runs `check` on each trace, returns the wall seconds it took.
double read_all(const std::vector<std::string>& files,
                const std::function<void(const std::string&, const Trace&)>& check = nullptr) {
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& f : files) {
    INFO(f);
    Diagnostics d;
    Trace t;
    REQUIRE_NOTHROW(t = read_trace(shared_data(f), d));
    CHECK_FALSE(t.jobs.empty());
    if (check) check(f, t);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("every GPU and small SWF job trace in shared/data reads without error", "[research-traces]") {
  if (!shared_or_warn("traces/STATS_gpu.txt")) return;
  const auto files = small_job_traces();
  CHECK(files.size() == 54);
  const double s = read_all(files);
  WARN("read " + std::to_string(files.size()) + " traces in " + std::to_string(s) + " s");
  CHECK(error_of([] {
          Diagnostics d;
          (void)read_trace(shared_data("traces/alibaba/gpu-v2023/openb_pod_list_multigpu50.csv"), d);
        }).find("missing required column 'creation_time'") != std::string::npos);
}

// All 12 logs (1.67 M jobs) take about 10 s here (RelWithDebInfo), well under the 60 s
// that would move them to a hidden [.slow] case.
TEST_CASE("every Parallel Workloads Archive log in shared/data reads without error", "[research-traces]") {
  if (!shared_or_warn("traces/STATS_swf.md")) return;
  const auto files = shared_files("traces/swf", [](const std::string& f) { return ends_with(f, ".swf.gz"); });
  CHECK(files.size() == 12);
  // The header-less copies read too; the cluster size must then come from --cluster.
  int headerless = 0;
  const double s = read_all(files, [&](const std::string& f, const Trace& t) {
    if (f.find("Curie-2011-2.1-cln-b") == std::string::npos && f.find("METACENTRUM") == std::string::npos &&
        f.find("RICC") == std::string::npos)
      return;
    ++headerless;
    CHECK_FALSE(t.max_procs.has_value());
    CHECK_FALSE(t.unix_start.has_value());
  });
  CHECK(headerless == 5);
  WARN("read " + std::to_string(files.size()) + " SWF logs in " + std::to_string(s) + " s");
  // LLNL-Thunder's placeholder records (every field -1) are skipped, not errors.
  Diagnostics d;
  const Trace t = read_trace(shared_data("traces/swf/LLNL-Thunder-2007-1.1-cln.swf.gz"), d);
  CHECK(std::any_of(d.all().begin(), d.all().end(), [](const Diagnostic& x) {
    return x.message == "skipped 1190 jobs with unknown submit time (-1)";
  }));
  CHECK_FALSE(t.jobs.empty());
}

TEST_CASE("research trace readers report malformed input with its position", "[research-traces]") {
  CHECK(error_of([] {
          Diagnostics d;
          (void)parse_gavel_trace("A\tcmd\t-n\t1\t100\t0.0\t1\nB\tcmd\t-n\t1\t100\t5.0\tx\n", "g.trace", d);
        }) == "g.trace:2:20: error: scale_factor 'x' is not a non-negative integer");
  CHECK(error_of([] {
          Diagnostics d;
          (void)parse_gavel_trace("A\tcmd\t-n\t1\t100\t0.0\t1\nB\tcmd\t-n\t1\t100\t5.0\n", "g.trace", d);
        }) == "g.trace:2:1: error: expected 7 tab-separated fields (the layout of line 1), found 6");
  CHECK(error_of([] {
          Diagnostics d;
          (void)parse_pollux_workload("name,time,application,num_replicas,batch_size\ncifar10-0,-5,cifar10,1,128\n",
                                      "p.csv", d);
        }) == "p.csv:2:11: error: time '-5' is not a non-negative number of seconds");
  CHECK(error_of([] {
          Diagnostics d;
          (void)parse_pollux_workload("name,time,application,num_replicas\ngpt-0,5,gpt_pmp,1\n", "p.csv", d);
        }) ==
        "p.csv:2:9: error: unknown application 'gpt_pmp' (expected cifar10, ncf, deepspeech2, bert, yolov3 or "
        "imagenet)");
  CHECK(error_of([] {
          Diagnostics d;
          (void)parse_pollux_workload("name,time,application\ncifar10-0,5,cifar10\n", "p.csv", d);
        }) == "p.csv:1:1: error: missing required column 'num_replicas' in Pollux workload");
  CHECK(error_of([] {
          Diagnostics d;
          (void)parse_tiresias_csv(
              "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
              "0,1,0,606,vgg19,164,30\n1,two,30,133,vgg11,147,23\n",
              "t.csv", d);
        }) == "t.csv:3:3: error: num_gpu 'two' is not a non-negative integer");
  CHECK(error_of([] {
          Diagnostics d;
          (void)parse_chronus_csv(
              "job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,expect_time_list,"
              "expect_value_list,best_effort,job_type\n"
              "0,vc_a,1,10,5,vgg16,60,5,1,10,0,strict\n"
              "0,vc_a,2,10,5,vgg16,60,5,1,10,0,strict\n",
              "c.csv", d);
        }) == "c.csv:3:1: error: duplicate job_id 0 (first at line 2, with other values)");
  CHECK(error_of([] {
          Diagnostics d;
          (void)parse_chronus_csv("job_id,user,num_gpu,submit_time,duration\n3,vc_a,1,10,-60\n", "c.csv", d);
        }) == "c.csv:2:13: error: duration '-60' is not a non-negative number of seconds");
  CHECK(error_of([] {
          Diagnostics d;
          (void)parse_duration_list("duration\n121\nabc\n", "y.csv", d);
        }) == "y.csv:3:1: error: duration 'abc' is not a non-negative number of seconds");
}
