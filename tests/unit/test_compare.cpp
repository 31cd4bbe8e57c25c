// gcsim compare: the report's headline is what the variants' own run directories say,
// the report does not depend on the thread count, and bad variants are refused before
// anything is written.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <sstream>

#include "sim/cluster/cluster_yaml.hpp"
#include "sim/workload/trace_readers.hpp"
#include "tests/unit/schedule_checker.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;
using gcsim::test::run_shell;
using gcsim::test::slurp;
using gcsim::test::src;
namespace fs = std::filesystem;

namespace {

// The bundled comparison (tools/bootstrap.sh run), with a smaller bootstrap.
std::string compare_cmd(const std::string& out, int threads) {
  return gcsim::test::gcsim_binary() + " compare --cluster " + src("configs/dgx-a100-pod.yaml") + " --trace " +
         src("traces/philly-d07-d21.csv") + " --start 2017-09-25T05:25:35 --runtime-model step --profiles " +
         src("configs/profiles/input-bound.yaml") +
         " --variant numa-bound:binding=numa-bound --variant unbound:binding=unbound"
         " --variant k8s-none:binding=k8s-none --bootstrap 200 --no-progress --threads " +
         std::to_string(threads) + " --out " + out + " 2>&1";
}

std::vector<std::map<std::string, std::string>> read_csv(const std::string& text) {
  std::vector<std::map<std::string, std::string>> rows;
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> header;
  auto cells = [](const std::string& l) {
    std::vector<std::string> c;
    std::string cur;
    for (char ch : l) {
      if (ch == ',') {
        c.push_back(cur);
        cur.clear();
      } else {
        cur += ch;
      }
    }
    c.push_back(cur);
    return c;
  };
  while (std::getline(in, line)) {
    if (header.empty()) {
      header = cells(line);
      continue;
    }
    const auto c = cells(line);
    std::map<std::string, std::string> r;
    for (size_t i = 0; i < header.size() && i < c.size(); ++i) r[header[i]] = c[i];
    rows.push_back(r);
  }
  return rows;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

TEST_CASE("compare: the headline table is what each variant's jobs.sacct says", "[compare]") {
  const std::string out = (fs::temp_directory_path() / "gcsim-test-compare-1").string();
  fs::remove_all(out);
  const auto p = run_shell(compare_cmd(out, 1));
  INFO(p.output);
  REQUIRE(p.status == 0);
  CHECK(slurp(out + "/manifest.json").find("\"completed\": true") != std::string::npos);

  const Cluster cluster = load_cluster_yaml(src("configs/dgx-a100-pod.yaml"));
  Diagnostics d;
  const Trace trace = read_trace(src("traces/philly-d07-d21.csv"), d);
  std::map<std::string, double> duration;  // sacct JobID -> trace run time
  for (const auto& j : trace.jobs) duration[std::to_string(j.id.value)] = j.duration.to_seconds();

  const auto head = read_csv(slurp(out + "/headline.csv"));
  REQUIRE(head.size() == 3);
  std::map<std::string, double> wait_mean;
  for (const auto& h : head) {
    const std::string name = h.at("variant");
    INFO("variant " << name);
    // Recompute from the run directory alone (and the trace's durations for inflation).
    const auto rows = gcsim::test::parse_sacct(slurp(out + "/" + name + "/jobs.sacct"));
    REQUIRE(!rows.empty());
    std::vector<double> waits, inflation;
    double bsld = 0, gpu_s = 0;
    int64_t first = INT64_MAX, last = 0;
    for (const auto& r : rows) {
      const double wait = static_cast<double>(r.start - r.submit), run = static_cast<double>(r.end - r.start);
      waits.push_back(wait);
      bsld += std::max(1.0, (wait + run) / std::max(run, 10.0));
      int64_t gpus = 0;
      for (const auto& n : r.nodes) gpus += static_cast<int64_t>(n.gpus.size());
      gpu_s += static_cast<double>(gpus) * run;
      first = std::min(first, r.submit);
      last = std::max(last, r.end);
      if (r.f.at("State") != "TIMEOUT") inflation.push_back(run / duration.at(r.f.at("JobID")));
    }
    const double n = static_cast<double>(rows.size()), makespan = static_cast<double>(last - first);
    double wsum = 0, isum = 0;
    for (double w : waits) wsum += w;
    for (double x : inflation) isum += x;
    CHECK(std::stoll(h.at("finished")) == static_cast<int64_t>(rows.size()));
    CHECK(std::stod(h.at("makespan_s")) == Approx(makespan).margin(1));
    CHECK(std::stod(h.at("wait_mean_s")) == Approx(wsum / n).margin(1));
    CHECK(std::stod(h.at("wait_median_s")) == Approx(quantile(waits, 0.5)).margin(1));
    CHECK(std::stod(h.at("wait_p95_s")) == Approx(quantile(waits, 0.95)).margin(1));
    CHECK(std::stod(h.at("bsld_mean")) == Approx(bsld / n).margin(1e-3));
    CHECK(std::stod(h.at("throughput_jobs_per_h")) == Approx(n / (makespan / 3600)).margin(1e-3));
    CHECK(std::stod(h.at("gpu_util")) ==
          Approx(gpu_s / (static_cast<double>(cluster.total_gpus()) * makespan)).margin(1e-5));
    REQUIRE(!inflation.empty());
    CHECK(std::stod(h.at("inflation_mean")) == Approx(isum / static_cast<double>(inflation.size())).margin(1e-3));
    wait_mean[name] = std::stod(h.at("wait_mean_s"));
    // The page shows the same variant rows.
    CHECK(slurp(out + "/report.html").find("<th scope=\"row\">" + name + "</th>") != std::string::npos);
  }
  // What the comparison is for: unbound loaders on remote NUMA domains run longer.
  const auto by_name = [&](const std::string& v) {
    for (const auto& h : head)
      if (h.at("variant") == v) return h;
    FAIL("no variant " << v);
    return head.front();
  };
  CHECK(std::stod(by_name("numa-bound").at("inflation_mean")) == Approx(1.0).margin(1e-3));
  CHECK(std::stod(by_name("unbound").at("inflation_mean")) > 1.1);
  CHECK(std::stoll(by_name("numa-bound").at("gpu_jobs_not_numa_local")) == 0);
  CHECK(std::stoll(by_name("unbound").at("gpu_jobs_not_numa_local")) > 0);
  // Differences: variant minus numa-bound, inside their intervals.
  const auto diffs = read_csv(slurp(out + "/differences.csv"));
  REQUIRE(diffs.size() == 8);  // two variants x four metrics
  for (const auto& r : diffs) {
    INFO(r.at("variant") << " " << r.at("metric"));
    CHECK(std::stod(r.at("ci95_lo")) <= std::stod(r.at("diff")) + 1e-3);
    CHECK(std::stod(r.at("diff")) <= std::stod(r.at("ci95_hi")) + 1e-3);
    CHECK(r.at("paired") == "yes");
    if (r.at("metric") == "wait_mean_s")
      CHECK(std::stod(r.at("diff")) == Approx(wait_mean[r.at("variant")] - wait_mean["numa-bound"]).margin(0.01));
  }
  fs::remove_all(out);
}

TEST_CASE("compare: the report is byte-identical at one and two threads", "[compare][determinism]") {
  const std::string a = (fs::temp_directory_path() / "gcsim-test-compare-t1").string();
  const std::string b = (fs::temp_directory_path() / "gcsim-test-compare-t2").string();
  fs::remove_all(a);
  fs::remove_all(b);
  REQUIRE(run_shell(compare_cmd(a, 1)).status == 0);
  REQUIRE(run_shell(compare_cmd(b, 2)).status == 0);
  for (const char* f : {"report.html", "report.md", "headline.csv", "differences.csv", "by_gpus.csv",
                        "by_partition.csv", "timeseries.csv", "unbound/jobs.sacct", "k8s-none/summary.json"}) {
    INFO(f);
    const std::string x = slurp(a + "/" + f);
    CHECK(!x.empty());
    CHECK(x == slurp(b + "/" + f));
  }
  CHECK(slurp(b + "/manifest.json").find("\"threads\": 2") != std::string::npos);
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST_CASE("compare: cluster changes and policy parameters as variants", "[compare]") {
  const std::string out = (fs::temp_directory_path() / "gcsim-test-compare-3").string();
  fs::remove_all(out);
  const auto p = run_shell(gcsim::test::gcsim_binary() + " compare --cluster " + src("configs/dgx-a100-pod.yaml") +
                           " --trace " + src("traces/philly-d07-d21.csv") +
                           " --variant base --variant more:nodes+=8 --variant fewer:nodes-=16"
                           " --variant window:policy=slurm,bf_window=60 --variant busy:scale=1.5"
                           " --variant h100:cluster=" + src("configs/dgx-h100-pod.yaml") +
                           " --bootstrap 0 --no-progress --out " + out + " 2>&1");
  INFO(p.output);
  REQUIRE(p.status == 0);
  CHECK(slurp(out + "/more/summary.json").find("\"total_gpus\": 320") != std::string::npos);
  CHECK(slurp(out + "/fewer/summary.json").find("\"total_gpus\": 128") != std::string::npos);
  // Another cluster description: its own nodes (H100 SXM, dgx-h100-pod.yaml).
  CHECK(slurp(out + "/h100/jobs.sacct").find("gres/gpu:h100=") != std::string::npos);
  // The added nodes continue the numbering and run jobs.
  CHECK(slurp(out + "/more/jobs.sacct").find("|dgx040|") != std::string::npos);
  CHECK(slurp(out + "/fewer/jobs.sacct").find("dgx017") == std::string::npos);
  CHECK(slurp(out + "/window/manifest.json").find("\"bf_window\": \"3600\"") != std::string::npos);
  const auto head = read_csv(slurp(out + "/headline.csv"));
  REQUIRE(head.size() == 6);
  // Fewer nodes, longer waits; more nodes, shorter; a busier trace, longer.
  std::map<std::string, double> w;
  for (const auto& h : head) w[h.at("variant")] = std::stod(h.at("wait_mean_s"));
  CHECK(w["fewer"] > w["base"]);
  CHECK(w["more"] < w["base"]);
  CHECK(w["busy"] > w["base"]);
  fs::remove_all(out);
}

TEST_CASE("compare: bad variants are refused together, before anything is written", "[compare][cli]") {
  const std::string out = (fs::temp_directory_path() / "gcsim-test-compare-bad").string();
  fs::remove_all(out);
  const auto p = run_shell(gcsim::test::gcsim_binary() + " compare --cluster " + src("configs/dgx-a100-pod.yaml") +
                           " --trace " + src("traces/philly-d07-d21.csv") +
                           " --variant 'a b:binding=unbound' --variant x:binding=sideways --variant x:bf_window=5"
                           " --variant y:nodes=-3 --variant z:colour=blue --out " + out + " 2>&1");
  CHECK(p.status == 2);
  CHECK(p.output.find("<command line>: error: variant 'a b:binding=unbound': the name") != std::string::npos);
  CHECK(p.output.find("variant 'x': binding=sideways: unknown binding mode") != std::string::npos);
  CHECK(p.output.find("variant name 'x' is given twice") != std::string::npos);
  CHECK(p.output.find("'bf_window' is neither a variant key nor a parameter of policy easy") != std::string::npos);
  CHECK(p.output.find("variant 'y': nodes=-3: expected a node count") != std::string::npos);
  CHECK(p.output.find("variant 'z': 'colour'") != std::string::npos);
  CHECK(!fs::exists(out));
}

TEST_CASE("determinism: reruns, thread counts and reversed tie order give the same bytes", "[compare][determinism]") {
  // slurm and easy over the Philly fortnight with the step runtime model: many equal-time
  // submissions, ends and passes, so a hidden dependence on tie order would show.
  auto cmd = [](const std::string& out, int threads, bool reverse) {
    return gcsim::test::gcsim_binary() + " compare --cluster " + src("configs/dgx-a100-pod.yaml") + " --trace " +
           src("traces/philly-d07-d21.csv") + " --runtime-model step --variant slurm:policy=slurm" +
           " --variant easy:policy=easy,binding=unbound --bootstrap 100 --no-progress --threads " +
           std::to_string(threads) + (reverse ? " --reverse-ties" : "") + " --out " + out + " 2>&1";
  };
  const fs::path base = fs::temp_directory_path() / "gcsim-test-determinism";
  fs::remove_all(base);
  fs::create_directories(base);
  const std::vector<std::pair<std::string, std::string>> runs = {
      {"t1", cmd((base / "t1").string(), 1, false)},
      {"t1-again", cmd((base / "t1-again").string(), 1, false)},
      {"t2", cmd((base / "t2").string(), 2, false)},
      {"t2-reversed", cmd((base / "t2-reversed").string(), 2, true)}};
  for (const auto& [name, c] : runs) {
    const auto p = run_shell(c);
    INFO(name << ": " << p.output);
    REQUIRE(p.status == 0);
  }
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(base / "t1")) {
    if (!e.is_regular_file() || e.path().filename() == "manifest.json") continue;  // argv, threads, wall time
    const fs::path rel = fs::relative(e.path(), base / "t1");
    const std::string want = slurp(e.path().string());
    for (const auto& [name, c] : runs) {
      INFO(name << " " << rel.string());
      CHECK(slurp((base / name / rel).string()) == want);
    }
    ++files;
  }
  CHECK(files >= 12);  // report.html/md, CSVs, and each variant's jobs.sacct, summary.json, ...
  fs::remove_all(base);
}
