// Trace statistics (sim/metrics/trace_stats) on the real in-repo traces, checked against
// the figures published for them: shared/data/traces/STATS_gpu.txt and STATS_swf.md (made
// by shared/data/traces/tools/{trace_stats,swf_stats}.py, whose definitions are matched:
// linear-interpolation quantiles, wait = start of the last attempt - submit), the Acme
// cross-trace table and research/traces.md sections 1.5 and 4.1-4.5.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "sim/cluster/cluster.hpp"
#include "sim/core/diagnostics.hpp"
#include "sim/core/json.hpp"
#include "sim/metrics/trace_stats.hpp"
#include "sim/workload/alibaba_reader.hpp"
#include "sim/workload/gpu_trace_readers.hpp"
#include "sim/workload/sbatch_options.hpp"
#include "sim/workload/trace_readers.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;
using gcsim::test::slurp;
using gcsim::test::shared_data;
using gcsim::test::shared_exists;
using gcsim::test::src;

namespace {

// Percentage points of `part` in `whole`.
double pct(int64_t part, int64_t whole) { return 100.0 * static_cast<double>(part) / static_cast<double>(whole); }

int bucket_of(const char* label) {
  for (int b = 0; b < kGpuBuckets; ++b)
    if (std::string(gpu_bucket_label(b)) == label) return b;
  FAIL("no GPU bucket " << label);
  return -1;
}

// One row of a published summary CSV (plain comma-separated, header first), by its `id`.
std::map<std::string, std::string> csv_row(const std::string& path, const std::string& id) {
  std::vector<std::vector<std::string>> rows;
  std::string cell;
  std::vector<std::string> row;
  for (char c : slurp(path)) {
    if (c == ',' || c == '\n') {
      row.push_back(cell);
      cell.clear();
      if (c == '\n') {
        rows.push_back(row);
        row.clear();
      }
    } else if (c != '\r') {
      cell += c;
    }
  }
  REQUIRE(rows.size() > 1);
  for (const auto& r : rows) {
    if (r.empty() || r[0] != id) continue;
    REQUIRE(r.size() == rows[0].size());
    std::map<std::string, std::string> out;
    for (size_t k = 0; k < r.size(); ++k) out[rows[0][k]] = r[k];
    return out;
  }
  FAIL("no row '" << id << "' in " << path);
  return {};
}

// Well-formedness of the SVG we write: every tag closes in order, attributes quoted.
// (Enough for our own output; it is not a general XML parser.)
bool tags_balance(const std::string& xml, std::string* why) {
  std::vector<std::string> open;
  size_t i = 0;
  while ((i = xml.find('<', i)) != std::string::npos) {
    const size_t end = xml.find('>', i);
    if (end == std::string::npos) return *why = "unterminated tag", false;
    const std::string tag = xml.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.empty()) return *why = "empty tag", false;
    if (std::count(tag.begin(), tag.end(), '"') % 2 != 0) return *why = "unbalanced quotes in <" + tag + ">", false;
    if (tag.back() == '/') continue;
    const std::string name = tag.substr(tag[0] == '/' ? 1 : 0, tag.find_first_of(" \n/", 1) - (tag[0] == '/' ? 1 : 0));
    if (tag[0] != '/') {
      open.push_back(name);
    } else if (open.empty() || open.back() != name) {
      return *why = "</" + name + "> closes <" + (open.empty() ? std::string("nothing") : open.back()) + ">", false;
    } else {
      open.pop_back();
    }
  }
  // Text must not hold a raw '<' or '&' that is not an entity.
  for (size_t k = 0; k < xml.size(); ++k)
    if (xml[k] == '&' && xml.compare(k, 5, "&amp;") != 0 && xml.compare(k, 4, "&lt;") != 0 &&
        xml.compare(k, 4, "&gt;") != 0 && xml.compare(k, 6, "&quot;") != 0)
      return *why = "bare '&'", false;
  if (!open.empty()) return *why = "<" + open.back() + "> never closed", false;
  return true;
}

// A sample as trace_stats.py prints it: "p50=..., p90=..., p99=..., mean=..." (".0f").
std::string published_quantiles(const SampleStats& q) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "p50=%.0f, p90=%.0f, p99=%.0f, mean=%.0f", q.p50, q.p90, q.p99, q.mean);
  return buf;
}

// The GPU mix as trace_stats.py prints it: non-empty buckets, "label:x.y%".
std::string published_mix(const std::array<int64_t, kGpuBuckets>& b, int64_t jobs) {
  std::string o;
  for (int k = 0; k < kGpuBuckets; ++k) {
    if (b[k] == 0) continue;
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s%s:%.1f%%", o.empty() ? "" : ", ", gpu_bucket_label(k), pct(b[k], jobs));
    o += buf;
  }
  return o;
}

JobRequest request(const std::string& args) {
  JobRequest r;
  Diagnostics d;
  REQUIRE(parse_sbatch_options(args, {"test", 1, 1}, r, d));
  return r;
}

}  // namespace

TEST_CASE("job_gpus and job_cpus read every sbatch GPU form", "[trace-stats]") {
  Job j;
  j.req = request("--gpus=4 --nodes=2");
  CHECK(job_gpus(j) == 4);  // --gpus is per job
  j.req = request("--nodes=3 --gpus-per-node=2");
  CHECK(job_gpus(j) == 6);
  j.req = request("--nodes=2 --gres=gpu:a100:2");
  CHECK(job_gpus(j) == 4);  // --gres is per node
  j.req = request("--ntasks=5 --gpus-per-task=1");
  CHECK(job_gpus(j) == 5);
  j.req = request("--ntasks=6 --ntasks-per-node=4 --gpus-per-node=2");
  CHECK(job_gpus(j) == 4);  // 6 tasks at 4 per node need 2 nodes
  j.req = request("--gres=gpu:2 --gpus-per-node=4");
  CHECK(job_gpus(j) == 4);  // as make_job_shape: --gpus-per-node overrides --gres
  j.req = request("-n 4");
  CHECK(job_gpus(j) == 0);
  j.recorded_gpus = 3;
  CHECK(job_gpus(j) == 3);  // no GPU request: what the trace recorded

  j = Job{};
  j.req = request("-n 4 -c 2");
  CHECK(job_cpus(j) == 8);
  j.req = request("--nodes=2 --ntasks-per-node=3");
  CHECK(job_cpus(j) == 6);
  j.req = request("--gpus=4 --cpus-per-gpu=6");
  CHECK(job_cpus(j) == 24);
  j.req = request("");
  CHECK(job_cpus(j) == 1);

  CHECK(gpu_bucket(0) == 0);
  CHECK(gpu_bucket(3) == bucket_of("3-4"));
  CHECK(gpu_bucket(64) == bucket_of("33-64"));
  CHECK(gpu_bucket(65) == bucket_of(">64"));
  CHECK(duration_bin(0.5) == 0);
  CHECK(duration_bin(10) == 2);  // decade edges belong to the bin above
  CHECK(duration_bin(1e9) == kDurationBins - 1);
}

TEST_CASE("Philly DRE sample matches STATS_gpu.txt and is far from the published Philly row", "[trace-stats]") {
  Diagnostics diags;
  const Trace t = read_philly_json(src("tests/data/traces/philly/philly_sampled_jobs_4206.json.gz"), diags);
  const TraceStats s = compute_trace_stats(t, nullptr);
  REQUIRE(s.jobs == 4206);
  CHECK(s.gpu_jobs == 4206);
  CHECK(s.cpu_only_jobs == 0);
  CHECK(s.first_submit_s == 0);
  CHECK(s.last_submit_s == 7425758);  // 2017-09-18 05:25:35 -> 2017-12-13 04:08:13

  // GPU mix. trace_stats.py counts the GPUs the final attempt held (sum of len(gpus) over
  // detail[]); the recorded mix is that definition, so it must agree to the 0.1 point the
  // table is printed to.
  const std::map<std::string, double> published = {{"2", 9.2},    {"3-4", 43.8},  {"5-8", 39.0},
                                                   {"9-16", 6.3}, {"17-32", 1.6}, {"33-64", 0.0},
                                                   {">64", 0.1}};
  for (const auto& [label, p] : published) {
    INFO("recorded bucket " << label);
    CHECK(pct(s.recorded_gpu_buckets[bucket_of(label.c_str())], s.jobs) == Approx(p).margin(0.05 + 1e-9));
  }
  // The request (job_gpus) differs on purpose: the Philly reader asks for <machines> x <most
  // GPUs on one machine>, and 79 jobs spread their GPUs unevenly, so they ask for more than
  // they held (e.g. 5+3 GPUs on 2 machines -> 2 x 5 = 10). That moves 45 jobs out of 5-8 and
  // one out of 3-4 into the larger buckets; counts recomputed from the JSON by hand.
  CHECK(s.request_exceeds_recorded == 79);
  const std::vector<std::pair<const char*, int64_t>> request_counts = {
      {"2", 385}, {"3-4", 1842}, {"5-8", 1597}, {"9-16", 283}, {"17-32", 82}, {"33-64", 13}, {">64", 4}};
  for (const auto& [label, n] : request_counts) {
    INFO("request bucket " << label);
    CHECK(s.gpu_buckets[bucket_of(label)] == n);
  }
  CHECK(s.recorded_gpu_buckets[bucket_of("5-8")] == 1642);

  // Run time = runtime_min x 60 over all 4206 jobs, the same sample and the same
  // interpolation as pandas' quantile: published values are rounded to whole seconds.
  CHECK(s.duration_s.n == 4206);
  CHECK(s.duration_s.p50 == Approx(37794).margin(1));
  CHECK(s.duration_s.p90 == Approx(231352).margin(1));
  CHECK(s.duration_s.p99 == Approx(787406).margin(1));
  CHECK(s.duration_s.mean == Approx(96735).margin(1));
  // Wait = start_time of the last attempt - submitted_time, every job has one.
  CHECK(s.wait_s.n == 4206);
  CHECK(s.wait_s.p50 == Approx(670).margin(1));
  CHECK(s.wait_s.p90 == Approx(155974).margin(1));
  CHECK(s.wait_s.p99 == Approx(1018801).margin(1));
  CHECK(s.wait_s.mean == Approx(60659).margin(1));
  CHECK(s.states[static_cast<int>(RecordedState::kCompleted)] == 2534);  // Pass
  CHECK(s.states[static_cast<int>(RecordedState::kFailed)] == 1672);     // Failed
  CHECK(s.states[static_cast<int>(RecordedState::kCancelled)] == 0);     // no Killed in the sample
  CHECK(s.accounts == 11);  // VCs

  // The published Philly row (Acme's one-method table, all 112,956 GPU jobs) is a different
  // population: DRE sampled multi-GPU jobs only (2-128 GPUs) that ended Pass or Failed, and
  // multi-GPU jobs run far longer (Jeon et al., ATC'19: larger jobs run longer); the whole
  // trace is 1-GPU dominated (median 1 GPU). So the sample's median run is over 40x the
  // published one and its mean GPUs cannot be as low as 1.93 (its smallest job has 2).
  const auto philly = csv_row(src("tests/data/traces/acme/cluster_summary.csv"), "Philly");
  const double med_run = std::stod(philly.at("med_run_time_gpu"));
  const double avg_gpus = std::stod(philly.at("avg_gpu_num"));
  CHECK(med_run == 874);
  CHECK(avg_gpus == Approx(1.928));
  CHECK(s.duration_s.p50 > 10 * med_run);
  CHECK(s.gpus_per_gpu_job_mean > avg_gpus);
  CHECK(s.gpus_per_gpu_job_mean > 2 * std::stod(philly.at("med_gpu_num")));
  // GPU-hours per job (traces.md 4.5, whole Philly: mean 33): the sample's long multi-GPU
  // jobs put it over 5x higher (183 GPU-hours, recomputed from the JSON).
  CHECK(s.gpu_hours.mean > 5 * 33);
  CHECK(s.gpu_hours.mean == Approx(183.385).margin(0.01));
}

TEST_CASE("Alibaba v2023 default pod list matches STATS_gpu.txt and traces.md 4.4", "[trace-stats]") {
  Diagnostics diags;
  const Trace t =
      read_alibaba_v2023_pods(src("tests/data/traces/alibaba/gpu-v2023/openb_pod_list_default.csv"), diags);
  const TraceStats s = compute_trace_stats(t, nullptr);
  REQUIRE(s.jobs == 8152);
  CHECK(s.gpu_counts == std::map<int64_t, int64_t>{{0, 1088}, {1, 6989}, {2, 16}, {4, 15}, {8, 44}});
  CHECK(s.gpu_jobs == 7064);
  CHECK(s.cpu_only_jobs == 1088);
  CHECK(s.request_exceeds_recorded == 0);  // pods record no GPU count beyond the request
  // traces.md 4.4, as shares of all pods, printed to 0.1 point.
  CHECK(pct(s.cpu_only_jobs, s.jobs) == Approx(13.3).margin(0.05));
  CHECK(pct(s.gpu_buckets[bucket_of("1")], s.jobs) == Approx(85.7).margin(0.05));
  CHECK(pct(s.gpu_buckets[bucket_of("2")], s.jobs) == Approx(0.2).margin(0.05));
  CHECK(pct(s.gpu_buckets[bucket_of("3-4")], s.jobs) == Approx(0.2).margin(0.05));
  CHECK(pct(s.gpu_buckets[bucket_of("5-8")], s.jobs) == Approx(0.5).margin(0.05));
  // Sharing: num_gpu 1 with gpu_milli < 1000, as a share of GPU pods.
  CHECK(s.fractional_gpu_jobs == 3078);
  CHECK(pct(s.fractional_gpu_jobs, s.gpu_jobs) == Approx(43.6).margin(0.05));

  // The published duration is deletion - scheduled, so it covers only the 7,255 pods that
  // were scheduled (pandas drops the NaN of the 897 Pending ones). The reader gives those
  // 897 a duration of deletion - creation (as if started when created) and no recorded
  // start, so run_started_s is the published figure and duration_s (all pods) is lower.
  CHECK(s.run_started_s.n == 7255);
  CHECK(s.run_started_s.p50 == Approx(616).margin(1));
  CHECK(s.run_started_s.p90 == Approx(7764).margin(1));
  CHECK(s.run_started_s.p99 == Approx(114348).margin(1));
  CHECK(s.run_started_s.mean == Approx(28949).margin(1));
  CHECK(s.duration_s.n == 8152);
  CHECK(s.duration_s.p50 == Approx(485).margin(0.5));  // recomputed from the CSV over all pods
  // Wait = scheduled - creation; times are whole seconds, so the reader's rounding is exact.
  CHECK(s.wait_s.n == 7255);
  CHECK(s.wait_s.p50 == Approx(2).margin(0.5));
  CHECK(s.wait_s.p90 == Approx(106).margin(0.5));
  CHECK(s.wait_s.p99 == Approx(890).margin(1));
  CHECK(s.wait_s.mean == Approx(61).margin(1));
  // pod_phase: Succeeded 192, Failed 1870, Running 5193 + Pending 897 have no final state.
  CHECK(s.states[static_cast<int>(RecordedState::kCompleted)] == 192);
  CHECK(s.states[static_cast<int>(RecordedState::kFailed)] == 1870);
  CHECK(s.states[static_cast<int>(RecordedState::kUnknown)] == 6090);
  CHECK(s.users == 0);
  CHECK(s.accounts == 0);

  // GPU-hours per GPU pod against traces.md 4.5 (Alibaba 2023: avg 9, p99 39, max 3,483,
  // from shuoshuc/public-ml-traces parsing.ipynb). The max is one pod (8 GPUs x 435 h) and
  // agrees; the notebook itself is not held here, so its duration definition and quantile
  // method are unknown, and our avg 8.45 / p99 39.8 (whole GPUs x the reader's duration)
  // are checked only against our own recomputation from the CSV, not the published pair.
  CHECK(s.gpu_hours.n == 7064);
  CHECK(s.gpu_hours.max == Approx(3483).margin(0.5));
  CHECK(s.gpu_hours.mean == Approx(8.4454).margin(0.001));
  CHECK(s.gpu_hours.p99 == Approx(39.7919).margin(0.001));
}

TEST_CASE("KTH SP2 SWF matches STATS_swf.md including its utilisation", "[trace-stats]") {
  Diagnostics diags;
  const Trace t = read_swf(src("traces/KTH-SP2-1996-2.1-cln.swf.gz"), diags);
  REQUIRE(t.max_procs == 100);
  REQUIRE(t.max_nodes == 100);
  // The cluster gcsim infers from the header: MaxNodes nodes of MaxProcs/MaxNodes cores.
  const Cluster kth = make_cpu_cluster("kth-sp2", 100, 1, "SWF header");
  const TraceStats s = compute_trace_stats(t, &kth);
  CHECK(s.jobs == 27992);
  CHECK(s.gpu_jobs == 0);
  CHECK(s.cluster_cpus == 100);
  // statistics.median, the same as linear interpolation at 0.5.
  CHECK(s.duration_s.p50 == Approx(805).margin(0.5));
  CHECK(s.wait_s.n == 27992);
  CHECK(s.wait_s.p50 == Approx(300).margin(0.5));
  CHECK(s.cpus_per_job.p50 == Approx(3).margin(0.5));
  CHECK(s.states[static_cast<int>(RecordedState::kCompleted)] == 20483);  // status 1
  CHECK(s.states[static_cast<int>(RecordedState::kFailed)] == 7509);      // status 0
  // swf_stats.py: utilisation = sum(run x procs) / (MaxProcs x (last end - first submit)),
  // last end = submit + wait + run: exactly utilization_to_last_end. Published to 0.1 %.
  REQUIRE(s.cpu_utilization_to_last_end);
  CHECK(100 * *s.cpu_utilization_to_last_end == Approx(68.6).margin(0.05));
  CHECK((s.last_end_s - s.first_submit_s) / 86400 == Approx(332.9).margin(0.05));  // span (days)
  // The offered load uses the submit window instead; the last job ends soon after the last
  // submit here, so the two are close but the load is the larger.
  REQUIRE(s.cpu_offered_load);
  CHECK(*s.cpu_offered_load > *s.cpu_utilization_to_last_end);
  CHECK(*s.cpu_offered_load < 1.01 * *s.cpu_utilization_to_last_end);
  CHECK_FALSE(s.gpu_offered_load);  // no GPUs: no GPU load
}

TEST_CASE("Helios handwritten sample: stats computed by hand", "[trace-stats]") {
  // No Helios job-level data is held (data.zip is absent upstream of this project), so the
  // published per-cluster aggregates in tests/data/traces/helios/helios_cluster_summary.csv
  // (median GPU run 204-280 s, 1.58 M GPU jobs) cannot be checked; the 8 hand-written jobs
  // check the arithmetic instead. t=0 is job 108's submit, 2020-05-01 00:00:00.
  Diagnostics diags;
  const Trace t = read_helios_csv(src("tests/data/traces/helios/helios_sample_handwritten.csv"), diags);
  NodeTemplate node;
  node.name = "gpu8";
  node.sockets = 2;
  node.cores_per_numa = 24;
  node.gpus.resize(8);
  const Cluster c = make_homogeneous_cluster("helios-test", node, 4, "test");
  const TraceStats s = compute_trace_stats(t, &c);
  REQUIRE(s.jobs == 8);
  CHECK(s.gpu_jobs == 7);
  CHECK(s.cpu_only_jobs == 1);  // job 104
  // Job 107 holds 3 GPUs on 2 nodes: the reader asks for 2 per node, 4 in all.
  CHECK(s.gpu_counts == std::map<int64_t, int64_t>{{0, 1}, {1, 2}, {2, 1}, {4, 2}, {8, 1}, {16, 1}});
  CHECK(s.request_exceeds_recorded == 1);
  CHECK(s.gpus_per_gpu_job_mean == Approx(36.0 / 7));
  CHECK(s.first_submit_s == 0);
  CHECK(s.last_submit_s == 3600);   // job 107
  CHECK(s.last_end_s == 87000);     // job 106: 600 + 86400
  // Durations 0 1 42 204 600 1800 7200 86400 (105 never started: 0 s).
  CHECK(s.duration_s.p25 == Approx(31.75));  // 1 + 0.75 x 41
  CHECK(s.duration_s.p50 == Approx(402));    // (204 + 600) / 2
  CHECK(s.duration_s.p75 == Approx(3150));   // 1800 + 0.25 x 5400
  CHECK(s.duration_s.p90 == Approx(30960));  // 7200 + 0.3 x 79200
  CHECK(s.duration_s.mean == Approx(96247.0 / 8));
  CHECK(s.run_started_s.n == 7);
  CHECK(s.run_started_s.p50 == Approx(600));
  // Waits 0 0 0 0 1 5 240 (job 105 has none).
  CHECK(s.wait_s.n == 7);
  CHECK(s.wait_s.p50 == Approx(0));
  CHECK(s.wait_s.p90 == Approx(99));  // 5 + 0.4 x 235
  CHECK(s.wait_s.mean == Approx(246.0 / 7));
  CHECK(s.states[static_cast<int>(RecordedState::kCompleted)] == 3);
  CHECK(s.states[static_cast<int>(RecordedState::kFailed)] == 2);  // FAILED + NODE_FAIL
  CHECK(s.states[static_cast<int>(RecordedState::kCancelled)] == 2);
  CHECK(s.states[static_cast<int>(RecordedState::kTimeout)] == 1);
  CHECK(s.users == 4);
  CHECK(s.accounts == 3);
  // GPU-seconds: 1x204 + 8x7200 + 16x600 + 2x0 + 4x86400 + 4x1800 + 1x42 = 420246.
  CHECK(s.gpu_seconds == Approx(420246));
  CHECK(s.gpu_hours.max == Approx(96));  // job 106
  CHECK(s.gpu_hours.mean == Approx(420246.0 / 7 / 3600));
  // CPU-seconds: 6x204 + 48x7200 + 96x600 + 4x1 + 12x0 + 24x86400 + 18x1800 + 2x42.
  CHECK(s.cpu_seconds == Approx(2510512));
  CHECK(s.cluster_gpus == 32);
  CHECK(s.cluster_cpus == 192);
  CHECK(*s.gpu_offered_load == Approx(420246.0 / (32 * 3600)));
  CHECK(*s.cpu_offered_load == Approx(2510512.0 / (192 * 3600)));
  CHECK(*s.gpu_utilization_to_last_end == Approx(420246.0 / (32 * 87000)));
  CHECK(*s.cpu_utilization_to_last_end == Approx(2510512.0 / (192 * 87000)));
}

TEST_CASE("trace stats outputs: deterministic JSON, well-formed SVG, readable text", "[trace-stats]") {
  Diagnostics diags;
  const Trace t =
      read_alibaba_v2023_pods(src("tests/data/traces/alibaba/gpu-v2023/openb_pod_list_default.csv"), diags);
  const std::string a = trace_stats_json(compute_trace_stats(t, nullptr));
  const std::string b = trace_stats_json(compute_trace_stats(t, nullptr));
  CHECK(a == b);
  const JsonValue doc = parse_json(a, "stats.json");
  REQUIRE(doc.is_object());
  REQUIRE(doc.members.size() >= 5);
  CHECK(doc.members[0].key == "path");
  CHECK(doc.members[2].key == "jobs");
  CHECK(doc.find("jobs")->number == 8152);
  CHECK(doc.find("gpu_counts")->find("1")->number == 6989);
  CHECK(doc.find("run_started_s")->find("p50")->number == 616);
  CHECK(doc.find("cluster")->is_null());

  const std::string svg = trace_stats_svg(compute_trace_stats(t, nullptr));
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  std::string why;
  const bool balanced = tags_balance(svg, &why);
  INFO(why);
  CHECK(balanced);
  CHECK(svg.find("<script") == std::string::npos);
  CHECK(svg.find("href") == std::string::npos);
  CHECK(svg.find(">6989<") != std::string::npos);   // the 1-GPU bar's value
  CHECK(svg.find("&gt;64") != std::string::npos);   // the >64 label, escaped
  CHECK(svg.find("log scale") != std::string::npos);

  const std::string text = trace_stats_text(compute_trace_stats(t, nullptr));
  CHECK(text.find("jobs                8152 (GPU 7064, CPU-only 1088)\n") != std::string::npos);
  CHECK(text.find("fractional GPU      43.6% of GPU jobs (3078)\n") != std::string::npos);
  CHECK(text.find("GPU counts          0:1088 1:6989 2:16 4:15 8:44\n") != std::string::npos);
  CHECK(text.find("run (started) s     n=7255 p25=") != std::string::npos);
  CHECK(text.find("states              UNKNOWN 6090") != std::string::npos);

  // With a cluster the JSON carries the load figures.
  const Cluster kth = make_cpu_cluster("kth", 100, 1, "test");
  const Trace swf = read_swf(src("traces/KTH-SP2-1996-2.1-cln.swf.gz"), diags);
  const JsonValue withc = parse_json(trace_stats_json(compute_trace_stats(swf, &kth)), "stats.json");
  REQUIRE(withc.find("cluster")->is_object());
  CHECK(withc.find("cluster")->find("cpus")->number == 100);
  CHECK(withc.find("cluster")->find("gpu_offered_load")->is_null());
  CHECK(withc.find("cluster")->find("cpu_utilization_to_last_end")->number == Approx(0.686).margin(0.0005));
  const std::string ktext = trace_stats_text(compute_trace_stats(swf, &kth));
  CHECK(ktext.find("util to last end    GPU -, CPU 0.686") != std::string::npos);
}

TEST_CASE("trace stats of an empty trace are zeros", "[trace-stats]") {
  Trace t;
  t.path = "empty";
  const TraceStats s = compute_trace_stats(t, nullptr);
  CHECK(s.jobs == 0);
  CHECK(s.duration_s.n == 0);
  std::string why;
  CHECK(tags_balance(trace_stats_svg(s), &why));
  CHECK(parse_json(trace_stats_json(s), "empty.json").is_object());
}

TEST_CASE("trace stats reproduce the published STATS files line for line", "[trace-stats]") {
  // The constants above were copied from shared/data/traces/STATS_*; where the curated data
  // set is present, print our figures the way its scripts do and find them verbatim.
  if (!shared_exists("traces/STATS_gpu.txt") || !shared_exists("traces/STATS_swf.md")) {
    WARN("shared/data/traces/STATS_* absent (fresh clone): published-line comparison skipped");
    return;
  }
  const std::string gpu = slurp(shared_data("traces/STATS_gpu.txt"));
  const std::string swf = slurp(shared_data("traces/STATS_swf.md"));
  Diagnostics diags;
  const TraceStats philly = compute_trace_stats(
      read_philly_json(src("tests/data/traces/philly/philly_sampled_jobs_4206.json.gz"), diags), nullptr);
  CHECK_THAT(gpu, Catch::Contains("  GPU/job: " + published_mix(philly.recorded_gpu_buckets, philly.jobs) + "\n"));
  CHECK_THAT(gpu, Catch::Contains("  runtime s: " + published_quantiles(philly.duration_s) + "\n"));
  CHECK_THAT(gpu, Catch::Contains("  wait s (submit->start of last attempt): " + published_quantiles(philly.wait_s)));
  const TraceStats ali = compute_trace_stats(
      read_alibaba_v2023_pods(src("tests/data/traces/alibaba/gpu-v2023/openb_pod_list_default.csv"), diags),
      nullptr);
  CHECK_THAT(gpu, Catch::Contains("  duration (deletion-scheduled) s: " + published_quantiles(ali.run_started_s)));
  CHECK_THAT(gpu, Catch::Contains("  wait (scheduled-creation) s: " + published_quantiles(ali.wait_s)));
  const Cluster kth = make_cpu_cluster("kth-sp2", 100, 1, "SWF header");
  const TraceStats k = compute_trace_stats(read_swf(src("traces/KTH-SP2-1996-2.1-cln.swf.gz"), diags), &kth);
  char row[200];
  std::snprintf(row, sizeof row, "| KTH-SP2-1996-2.1-cln.swf.gz | %lld | 100 | 100 | %.1f | %.1f | %.1f | %.1f |",
                static_cast<long long>(k.jobs), (k.last_end_s - k.first_submit_s) / 86400, k.duration_s.p50,
                k.wait_s.p50, k.cpus_per_job.p50);
  CHECK_THAT(swf, Catch::Contains(row));
  std::snprintf(row, sizeof row, "| %.1f | {'1': 20483, '0': 7509} |", 100 * k.cpu_utilization_to_last_end.value_or(0));
  CHECK_THAT(swf, Catch::Contains(row));
}
