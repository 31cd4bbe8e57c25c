// Philly cluster_job_log and machine-list readers, the Helios job-log reader and the
// strict JSON parser, on the real fixtures in tests/data/traces/{philly,helios}.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>

#include "sim/cluster/inventories.hpp"
#include "sim/core/diagnostics.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/json.hpp"
#include "sim/workload/gpu_trace_readers.hpp"
#include "sim/workload/slurm_time.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;
using gcsim::test::error_of;
using gcsim::test::first_error;
using gcsim::test::src;

TEST_CASE("JSON parser: values escapes and positions", "[json]") {
  const JsonValue v = parse_json(R"( {"a": [1, -2.5e1, true, false, null],
 "s": "q\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00", "o": {}} )",
                                 "x.json");
  REQUIRE(v.is_object());
  CHECK(v.line == 1);
  CHECK(v.col == 2);
  const JsonValue* a = v.find("a");
  REQUIRE(a);
  REQUIRE(a->items.size() == 5);
  CHECK(a->items[0].number == 1);
  CHECK(a->items[1].number == -25);
  CHECK(a->items[2].boolean);
  CHECK(a->items[3].is_bool());
  CHECK(a->items[4].is_null());
  CHECK(a->items[1].col == 12);
  const JsonValue* s = v.find("s");
  REQUIRE(s);
  CHECK(s->string == "q\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80");
  CHECK(s->line == 2);
  CHECK(s->col == 7);
  CHECK(v.find("o")->is_object());
  CHECK(v.find("missing") == nullptr);
}

TEST_CASE("JSON parser: strict errors with line and column", "[json]") {
  CHECK(error_of([] { (void)parse_json("[1,\n 2,]", "t.json"); }) == "t.json:2:4: error: trailing comma in array");
  CHECK(error_of([] { (void)parse_json("{\"a\":1,\"a\":2}", "t.json"); }) ==
        "t.json:1:8: error: duplicate key \"a\" in object");
  CHECK(error_of([] { (void)parse_json("[01]", "t.json"); }) == "t.json:1:2: error: invalid number: leading zero");
  CHECK(error_of([] { (void)parse_json("[\"\\x\"]", "t.json"); }) == "t.json:1:3: error: invalid escape '\\x' in string");
  CHECK(error_of([] { (void)parse_json("[\"\\ud800\"]", "t.json"); }) ==
        "t.json:1:3: error: high surrogate not followed by a low surrogate");
  CHECK(error_of([] { (void)parse_json("[1] x", "t.json"); }) == "t.json:1:5: error: unexpected text after the JSON value");
  CHECK(error_of([] { (void)parse_json("{\"a\" 1}", "t.json"); }) == "t.json:1:6: error: expected ':' after object key, found '1'");
  CHECK(error_of([] { (void)parse_json("[tru]", "t.json"); }) == "t.json:1:2: error: invalid literal (expected 'true')");
  CHECK(error_of([] { (void)parse_json("[1", "t.json"); }) == "t.json:1:3: error: unterminated array (opened at 1:1)");
  CHECK(error_of([] { (void)parse_json(std::string(600, '['), "t.json"); }) ==
        "t.json:1:514: error: JSON nested deeper than 512 levels");
}

TEST_CASE("Philly DRE sample: 4206 real multi-GPU jobs", "[philly]") {
  Diagnostics d;
  const Trace t = read_philly_json(src("tests/data/traces/philly/philly_sampled_jobs_4206.json.gz"), d);
  CHECK(t.format == "philly-json");
  REQUIRE(t.jobs.size() == 4206);
  CHECK(d.all().empty());  // nothing skipped

  std::map<int64_t, int> mix;
  int pass = 0, failed = 0;
  std::vector<int64_t> run_us;
  for (const Job& j : t.jobs) {
    ++mix[j.recorded_gpus];
    pass += j.recorded_state == RecordedState::kCompleted;
    failed += j.recorded_state == RecordedState::kFailed;
    run_us.push_back(j.duration.count_us());
    REQUIRE(j.req.nodes_min.has_value());
    REQUIRE(j.req.gpus_per_node.has_value());
    CHECK(j.req.ntasks == j.recorded_gpus);
    CHECK(*j.req.nodes_min * j.req.gpus_per_node->count >= j.recorded_gpus);
    CHECK_FALSE(j.req.time_limit.has_value());
    CHECK(j.attempts == 1);
    CHECK_FALSE(j.account.empty());
  }
  const std::map<int64_t, int> want{{2, 385}, {4, 1843}, {8, 1642}, {12, 1}, {16, 264},
                                    {24, 8},  {32, 58},  {64, 2},   {128, 3}};
  CHECK(mix == want);
  CHECK(pass == 2534);
  CHECK(failed == 1672);
  // Median of 4,206 runtimes: the mean of the 2,103rd and 2,104th (37,746 s and 37,841 s).
  std::sort(run_us.begin(), run_us.end());
  CHECK(run_us[2102] == 37746 * SimTime::kPerSecond);
  CHECK(run_us[2103] == 37841 * SimTime::kPerSecond);
  CHECK((run_us[2102] + run_us[2103]) / 2 == 37793500000);

  // Submit span 2017-09-18 05:25:35 .. 2017-12-13 04:08:13 (UTC).
  REQUIRE(t.unix_start.has_value());
  CHECK(*t.unix_start == *slurm_time::parse_iso("2017-09-18 05:25:35"));
  CHECK(t.jobs.front().submit == SimTime());
  CHECK(t.jobs.back().submit ==
        SimTime::seconds(*slurm_time::parse_iso("2017-12-13 04:08:13") - *slurm_time::parse_iso("2017-09-18 05:25:35")));
  for (size_t i = 1; i < t.jobs.size(); ++i) REQUIRE(t.jobs[i - 1].submit <= t.jobs[i].submit);
  CHECK(t.jobs.front().id == JobId(1));
  CHECK(t.jobs.back().id == JobId(4206));

  // The first record of the file (8 GPUs on m412, 3219.7 min).
  const auto it = std::find_if(t.jobs.begin(), t.jobs.end(),
                               [](const Job& j) { return j.name == "application_1506638472019_14199"; });
  REQUIRE(it != t.jobs.end());
  CHECK(it->account == "ee9e8c");
  CHECK(it->user == "ce2f4c");
  CHECK(it->req.nodes_min == 1);
  CHECK(it->req.gpus_per_node->count == 8);
  CHECK(it->duration == SimTime::seconds(193182));
  CHECK(it->source_line == 2);

  // 79 jobs list more GPUs on one machine than on another.
  int uneven = 0;
  for (const Job& j : t.jobs) uneven += *j.req.nodes_min * j.req.gpus_per_node->count != j.recorded_gpus;
  CHECK(uneven == 79);
  CHECK(std::count_if(t.assumptions.begin(), t.assumptions.end(),
                      [](const std::string& a) { return a.find("no time limits") != std::string::npos; }) == 1);
}

TEST_CASE("Philly original attempts format", "[philly]") {
  const std::string text = R"([
 {"status": "Killed", "vc": "vc1", "jobid": "application_1_2", "user": "u1",
  "submitted_time": "2017-10-01 00:00:10",
  "attempts": [
   {"start_time": "2017-10-01 00:01:00", "end_time": "2017-10-01 00:02:00",
    "detail": [{"ip": "m1", "gpus": ["gpu0"]}]},
   {"start_time": "2017-10-01 01:00:00", "end_time": "2017-10-01 02:00:30",
    "detail": [{"ip": "m2", "gpus": ["gpu0", "gpu1"]}, {"ip": "m3", "gpus": ["gpu0"]},
               {"ip": "m2", "gpus": ["gpu2"]}]}]},
 {"status": "Pass", "vc": "vc2", "jobid": "application_1_1", "user": "u2",
  "submitted_time": "2017-10-01 00:00:00",
  "attempts": [{"start_time": "2017-10-01 00:00:05", "end_time": "2017-10-01 00:00:10",
                "detail": [{"ip": "m9", "gpus": ["gpu3"]}]}]},
 {"status": "Killed", "vc": "vc2", "jobid": "application_1_3", "user": "u2",
  "submitted_time": "2017-10-01 00:00:20", "attempts": []},
 {"status": "Failed", "vc": "vc2", "jobid": "application_1_4", "user": "u2",
  "submitted_time": "2017-10-01 00:00:30",
  "attempts": [{"start_time": "2017-10-01 00:00:35", "end_time": null,
                "detail": [{"ip": "m9", "gpus": ["gpu3"]}]}]}
])";
  Diagnostics d;
  const Trace t = parse_philly_json(text, "orig.json", d);
  REQUIRE(t.jobs.size() == 2);
  REQUIRE(d.all().size() == 2);
  CHECK(d.all()[0].str() == "orig.json: warning: skipped 1 jobs that never started (empty attempts)");
  CHECK(d.all()[1].str() == "orig.json: warning: skipped 1 jobs with no end time in their final attempt");
  const Job& a = t.jobs[0];
  CHECK(a.name == "application_1_1");
  CHECK(a.submit == SimTime());
  CHECK(a.duration == SimTime::seconds(5));
  CHECK(a.recorded_state == RecordedState::kCompleted);
  const Job& b = t.jobs[1];
  CHECK(b.name == "application_1_2");
  CHECK(b.submit == SimTime::seconds(10));
  CHECK(b.attempts == 2);
  CHECK(b.recorded_gpus == 4);  // final attempt: m2 has 3 GPUs, m3 has 1
  CHECK(b.req.nodes_min == 2);
  CHECK(b.req.gpus_per_node->count == 3);
  CHECK(b.req.ntasks == 4);
  CHECK(b.duration == SimTime::seconds(3630));
  CHECK(b.recorded_state == RecordedState::kCancelled);
  CHECK(b.account == "vc1");
}

TEST_CASE("Philly reader errors point at the value", "[philly]") {
  Diagnostics d;
  CHECK(error_of([&] { (void)parse_philly_json("{}", "p.json", d); }) ==
        "p.json:1:1: error: expected a JSON array of Philly job records, found object");
  const std::string bad = "[\n {\"status\": \"Done\", \"jobid\": \"j\", \"submitted_time\": \"2017-10-01 00:00:00\",\n"
                          "  \"runtime_min\": 1, \"detail\": [{\"ip\": \"m1\", \"gpus\": [\"gpu0\"]}]},\n"
                          " {\"status\": \"Pass\", \"jobid\": \"k\", \"submitted_time\": \"yesterday\",\n"
                          "  \"runtime_min\": 1, \"detail\": []}\n]";
  try {
    (void)parse_philly_json(bad, "p.json", d);
    FAIL("no error");
  } catch (const InputError& e) {
    const auto& all = e.diagnostics().all();
    REQUIRE(all.size() == 2);
    CHECK(all[0].str() == "p.json:2:13: error: unknown status 'Done' (expected Pass, Failed or Killed)");
    CHECK(all[1].str() ==
          "p.json:4:53: error: invalid submitted_time 'yesterday': expected YYYY-MM-DD HH:MM:SS");
  }
}

TEST_CASE("Philly machine lists: original and revised", "[philly]") {
  const NodeTemplate def = philly_default_node();
  CHECK(def.cores() == 24);
  CHECK(def.memory_mb == 262144);
  {
    Diagnostics d;
    const Cluster c = read_philly_machines(src("tests/data/traces/philly/cluster_machine_list.csv"), def, d);
    CHECK(c.nodes.size() == 552);
    CHECK(c.total_gpus() == 2490);
    REQUIRE(c.templates.size() == 2);
    std::map<std::string, int> per_template;
    for (const auto& n : c.nodes) ++per_template[c.templates[n.template_index].name];
    CHECK(per_template == std::map<std::string, int>{{"philly-2gpu-12gb", 321}, {"philly-8gpu-24gb", 231}});
    const int m0 = c.find_node("m0");
    REQUIRE(m0 >= 0);
    const NodeTemplate& t = c.tmpl(m0);
    REQUIRE(t.gpus.size() == 2);
    CHECK(t.gpus[0].gres_type == "p100");
    CHECK(t.gpus[0].memory_bytes == 12LL << 30);
    CHECK(t.gpus[0].numa == 0);
    CHECK(t.gpus[1].numa == 1);
    CHECK(t.cores() == 24);
    REQUIRE(c.partitions.size() == 1);
    CHECK(c.partitions[0].name == "philly");
    CHECK(c.partitions[0].is_default);
    CHECK(c.partitions[0].nodes.size() == 552);
    CHECK(c.total_cores() == 552 * 24);
    REQUIRE(d.all().size() == 1);
    CHECK(d.all()[0].severity == Severity::kNote);
  }
  {
    Diagnostics d;
    NodeTemplate custom = def;
    custom.gpus.push_back(GpuSpec{"p100", "Tesla P100-PCIE-16GB", 16LL << 30, 0, -1, ""});
    const Cluster c = read_philly_machines(src("tests/data/traces/philly/revised_machine_list.csv"), custom, d);
    CHECK(c.nodes.size() == 552);
    CHECK(c.total_gpus() == 3205);
    std::map<size_t, int> by_gpus;
    for (const auto& n : c.nodes) ++by_gpus[c.templates[n.template_index].gpus.size()];
    CHECK(by_gpus == std::map<size_t, int>{{0, 13}, {2, 3}, {3, 1}, {4, 271}, {8, 264}});
    CHECK(c.tmpl(c.find_node("m0")).gpus.size() == 8);
    CHECK(c.tmpl(c.find_node("m0")).gpus[0].model == "Tesla P100-PCIE-16GB");
    CHECK(c.gpu_types() == std::vector<std::string>{"p100"});
  }
}

TEST_CASE("Philly machine list: vc column and errors", "[philly]") {
  Diagnostics d;
  const Cluster c = parse_philly_machines("machineId,number of GPUs,vc\nm1,8,a\nm2,8,b\nm3,2,a\n", "v.csv",
                                          philly_default_node(), d);
  REQUIRE(c.partitions.size() == 2);
  CHECK(c.partitions[0].name == "a");
  CHECK(c.partitions[0].nodes == std::vector<int>{0, 2});
  CHECK(c.partitions[1].nodes == std::vector<int>{1});
  CHECK(c.tmpl(0).gpus[0].gres_type == "gpu");
  CHECK(error_of([&] {
          (void)parse_philly_machines("machineId, number of GPUs\nm1,2\nm1,x\n", "e.csv", philly_default_node(), d);
        }) == "e.csv:3:1: error: duplicate machineId 'm1'");
  CHECK(error_of([&] {
          (void)parse_philly_machines("machineId, number of GPUs\nm1, two\n", "e.csv", philly_default_node(), d);
        }) == "e.csv:2:4: error: invalid GPU count 'two': expected an integer 0..1024");
  CHECK(error_of([&] { (void)parse_philly_machines("id,gpus\n", "e.csv", philly_default_node(), d); }) ==
        "e.csv:1:1: error: missing column 'machineId'");
}

TEST_CASE("Helios hand-written sample in the cluster_log layout", "[helios]") {
  Diagnostics d;
  const Trace t = read_helios_csv(src("tests/data/traces/helios/helios_sample_handwritten.csv"), d);
  CHECK(t.format == "helios-csv");
  REQUIRE(t.jobs.size() == 8);
  REQUIRE(t.unix_start.has_value());
  CHECK(*t.unix_start == *slurm_time::parse_iso("2020-05-01 00:00:00"));
  std::vector<int64_t> order;
  for (const Job& j : t.jobs) order.push_back(j.id.value);
  CHECK(order == std::vector<int64_t>{108, 101, 102, 103, 104, 105, 106, 107});
  auto job = [&](int64_t id) -> const Job& {
    return *std::find_if(t.jobs.begin(), t.jobs.end(), [&](const Job& j) { return j.id.value == id; });
  };
  CHECK(job(101).duration == SimTime::seconds(204));
  CHECK(job(101).recorded_state == RecordedState::kCompleted);
  CHECK(job(101).account == "vc6YE");
  CHECK(job(101).user == "uA1b2");
  CHECK(job(101).submit == SimTime::seconds(10));
  CHECK(job(103).recorded_state == RecordedState::kFailed);
  CHECK(job(103).req.nodes_min == 2);
  CHECK(job(103).req.gpus_per_node->count == 8);
  CHECK(job(103).req.cpus_per_task == 48);
  CHECK(job(104).recorded_gpus == 0);
  CHECK_FALSE(job(104).req.gpus_per_node.has_value());
  CHECK(job(105).recorded_state == RecordedState::kCancelled);
  CHECK(job(105).duration == SimTime());
  CHECK(job(106).recorded_state == RecordedState::kTimeout);
  CHECK(job(106).submit == SimTime::seconds(600));  // epoch seconds row
  CHECK(job(106).duration == SimTime::seconds(86400));
  CHECK(job(107).recorded_state == RecordedState::kFailed);  // NODE_FAIL
  CHECK(job(107).req.gpus_per_node->count == 2);             // 3 GPUs over 2 nodes, rounded up
  CHECK(job(107).recorded_gpus == 3);
  auto has = [&](const char* s) {
    return std::any_of(t.assumptions.begin(), t.assumptions.end(),
                       [&](const std::string& a) { return a.find(s) != std::string::npos; });
  };
  CHECK(has("1 NODE_FAIL jobs"));
  CHECK(has("1 jobs never started"));
  CHECK(has("1 jobs have gpu_num not divisible"));
}

TEST_CASE("Helios columns in any order and errors", "[helios]") {
  Diagnostics d;
  const Trace t = parse_helios_csv(
      "state,start_time,end_time,gpu_num,submit_time,extra\n"
      "COMPLETED,100,160,4,90,x\n"
      "CANCELLED,\"2020-01-01 00:00:00\",\"2020-01-01 00:00:30\",1,1577836790,y\n",
      "h.csv", d);
  REQUIRE(t.jobs.size() == 2);
  CHECK(t.jobs[0].duration == SimTime::seconds(60));
  CHECK(t.jobs[0].id == JobId(1));
  CHECK(t.jobs[0].name == "helios1");
  CHECK(t.jobs[1].duration == SimTime::seconds(30));
  CHECK(t.jobs[1].submit == SimTime::seconds(1577836790 - 90));
  CHECK(t.jobs[0].req.gpus_per_node->count == 4);
  try {
    (void)parse_helios_csv("job_id,state,gpu_num,submit_time,duration\n1,DONE,1,2020-01-01 00:00:00,5\n"
                           "2,COMPLETED,-1,2020-01-01 00:00:00,5\n1,COMPLETED,1,2020-13-01 00:00:00,5\n",
                           "h.csv", d);
    FAIL("no error");
  } catch (const InputError& e) {
    const auto& all = e.diagnostics().all();
    REQUIRE(all.size() == 4);
    CHECK(all[0].str() == "h.csv:2:3: error: unknown state 'DONE' (expected COMPLETED, FAILED, CANCELLED, TIMEOUT or NODE_FAIL)");
    CHECK(all[1].str() == "h.csv:3:13: error: invalid gpu_num '-1': expected a non-negative integer");
    CHECK(all[2].str() == "h.csv:4:1: error: duplicate job_id 1");
    CHECK(all[3].str() ==
          "h.csv:4:15: error: invalid submit_time '2020-13-01 00:00:00': expected YYYY-MM-DD HH:MM:SS or epoch seconds");
  }
  CHECK(error_of([&] { (void)parse_helios_csv("job_id,state\n", "h.csv", d); }) ==
        "h.csv:1:1: error: missing required column 'submit_time'");
}

TEST_CASE("Helios published cluster summary loads", "[helios]") {
  const std::string text = read_input_file(src("tests/data/traces/helios/helios_cluster_summary.csv"));
  const auto lines = split_lines(text);
  REQUIRE(lines.size() >= 6);
  const auto header = split(lines[0], ',');
  auto col = [&](const char* name) {
    const auto it = std::find(header.begin(), header.end(), std::string_view(name));
    REQUIRE(it != header.end());
    return static_cast<size_t>(it - header.begin());
  };
  const size_t c_id = col("id"), c_gpus = col("gpu_num"), c_med = col("med_run_time_gpu"), c_jobs = col("job_num");
  std::vector<std::string> names;
  std::map<std::string, std::vector<std::string_view>> rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (trim(lines[i]).empty()) continue;
    const auto f = split(lines[i], ',');
    REQUIRE(f.size() == header.size());
    names.emplace_back(f[c_id]);
    rows[std::string(f[c_id])] = f;
  }
  CHECK(names == std::vector<std::string>{"Venus", "Earth", "Saturn", "Uranus", "total"});
  // traces.md 4.2: Venus 1,022 GPUs, 246,708 jobs, median GPU run 204 s.
  CHECK(rows["Venus"][c_gpus] == "1022");
  CHECK(rows["Venus"][c_jobs] == "246708");
  CHECK(rows["Venus"][c_med] == "204.0");
  CHECK(rows["total"][c_jobs] == "3362981");
}
