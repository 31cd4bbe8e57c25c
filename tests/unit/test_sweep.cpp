// gcsim sweep: the tidy CSV, the target answer, thread-count independence, and the job
// array path (emit, run each task's script, merge) giving the local sweep's bytes.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <sstream>

#include "tests/unit/test_paths.hpp"

using gcsim::test::run_shell;
using gcsim::test::slurp;
using gcsim::test::src;
namespace fs = std::filesystem;

namespace {

std::string sweep_args() {
  return " sweep --cluster " + src("configs/dgx-a100-pod.yaml") + " --trace " + src("traces/philly-d07-d21.csv") +
         " --runtime-model step --profiles " + src("configs/profiles/input-bound.yaml") +
         " --grid nodes=16,32,48 --grid binding=numa-bound,unbound --target 'p95_wait<=1d' --no-progress";
}

struct Row {
  std::string point, nodes, binding, metric;
  double value = 0;
};

std::vector<Row> read_sweep(const std::string& text) {
  std::vector<Row> rows;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  REQUIRE(line == "point,nodes,binding,metric,value");
  while (std::getline(in, line)) {
    Row r;
    std::istringstream l(line);
    std::string v;
    std::getline(l, r.point, ',');
    std::getline(l, r.nodes, ',');
    std::getline(l, r.binding, ',');
    std::getline(l, r.metric, ',');
    std::getline(l, v, ',');
    r.value = std::stod(v);
    rows.push_back(r);
  }
  return rows;
}

}  // namespace

TEST_CASE("sweep: a tidy CSV over the grid and the cheapest point that meets the target", "[sweep]") {
  const std::string a = (fs::temp_directory_path() / "gcsim-test-sweep-a").string();
  const std::string b = (fs::temp_directory_path() / "gcsim-test-sweep-b").string();
  fs::remove_all(a);
  fs::remove_all(b);
  const auto p = run_shell(gcsim::test::gcsim_binary() + sweep_args() + " --threads 1 --out " + a + " 2>&1");
  INFO(p.output);
  REQUIRE(p.status == 0);
  const auto rows = read_sweep(slurp(a + "/sweep.csv"));
  REQUIRE(rows.size() == 6 * 15);  // six points, fifteen metrics each
  std::map<std::string, std::map<std::string, double>> m;  // point -> metric -> value
  std::map<std::string, std::string> settings;
  for (const auto& r : rows) {
    m[r.point][r.metric] = r.value;
    settings[r.point] = "nodes=" + r.nodes + ",binding=" + r.binding;
  }
  // The grid as given, the last axis fastest.
  CHECK(settings["p0"] == "nodes=16,binding=numa-bound");
  CHECK(settings["p1"] == "nodes=16,binding=unbound");
  CHECK(settings["p5"] == "nodes=48,binding=unbound");
  CHECK(m["p4"]["gpus"] == 384);
  // A point's figures are its own run's: the same as its summary.json.
  CHECK(slurp(a + "/points/p2/summary.json").find("\"total_gpus\": 256") != std::string::npos);
  // More nodes, shorter p95 waits; unbound loaders run longer.
  CHECK(m["p0"]["wait_p95_s"] > m["p2"]["wait_p95_s"]);
  CHECK(m["p2"]["wait_p95_s"] > m["p4"]["wait_p95_s"]);
  CHECK(m["p3"]["inflation_mean"] > m["p2"]["inflation_mean"]);
  // The target: the fewest GPUs among the points with p95 wait <= 1 day.
  std::string best;
  for (const auto& [pt, mm] : m)
    if (mm.at("wait_p95_s") <= 86400 && (best.empty() || mm.at("gpus") < m[best].at("gpus"))) best = pt;
  REQUIRE(!best.empty());
  const std::string target = slurp(a + "/target.txt");
  CHECK(target.find("cheapest point " + best + ":") != std::string::npos);
  CHECK(target.find("(" + settings[best] + ")") != std::string::npos);
  for (const char* f : {"sweep.html", "plot_wait_p95_s.svg", "plot_gpu_util.svg"}) CHECK(fs::exists(a + "/" + f));
  CHECK(slurp(a + "/sweep.html").find("<figure class=\"chart\" id=\"fig-wait_p95_s\">") != std::string::npos);
  const std::string manifest = slurp(a + "/manifest.json");
  CHECK(manifest.find("\"points_completed\": 6") != std::string::npos);
  CHECK(manifest.find("\"completed\": true") != std::string::npos);

  // Two threads: the same bytes.
  REQUIRE(run_shell(gcsim::test::gcsim_binary() + sweep_args() + " --threads 2 --out " + b + " 2>&1").status == 0);
  for (const char* f : {"sweep.csv", "sweep.html", "target.txt", "plan.tsv", "manifest.json", "points/p3/jobs.sacct"}) {
    INFO(f);
    CHECK(slurp(a + "/" + f) == slurp(b + "/" + f));
  }
  fs::remove_all(a);
  fs::remove_all(b);
}

TEST_CASE("sweep: --emit-slurm tasks, run one by one, merge into the local sweep's bytes", "[sweep]") {
  const std::string local = (fs::temp_directory_path() / "gcsim-test-sweep-local").string();
  const std::string arr = (fs::temp_directory_path() / "gcsim-test-sweep-array").string();
  fs::remove_all(local);
  fs::remove_all(arr);
  REQUIRE(run_shell(gcsim::test::gcsim_binary() + sweep_args() + " --out " + local + " 2>&1").status == 0);
  const auto e = run_shell(gcsim::test::gcsim_binary() + sweep_args() + " --emit-slurm " + arr + " 2>&1");
  INFO(e.output);
  REQUIRE(e.status == 0);
  const std::string script = slurp(arr + "/sweep.sbatch");
  CHECK(script.find("#SBATCH --array=0-5\n") != std::string::npos);
  CHECK(script.find("--point \"$SLURM_ARRAY_TASK_ID\"") != std::string::npos);
  CHECK(script.find("--emit-slurm") == std::string::npos);
  CHECK(slurp(arr + "/plan.tsv") == slurp(local + "/plan.tsv"));
  // Merging before every task has run names what is missing.
  const auto early = run_shell(gcsim::test::gcsim_binary() + " sweep --merge " + arr + " 2>&1");
  CHECK(early.status == 2);
  CHECK(early.output.find("6 of 6 points have no point.csv") != std::string::npos);
  // Each array task, as Slurm would start it (the script with its task id).
  for (int k = 0; k < 6; ++k) {
    const auto t = run_shell("SLURM_ARRAY_TASK_ID=" + std::to_string(k) + " bash " + arr + "/sweep.sbatch 2>&1");
    INFO(t.output);
    REQUIRE(t.status == 0);
  }
  const auto m = run_shell(gcsim::test::gcsim_binary() + " sweep --merge " + arr + " --target 'p95_wait<=1d' 2>&1");
  INFO(m.output);
  REQUIRE(m.status == 0);
  for (const char* f : {"sweep.csv", "sweep.html", "target.txt", "plot_wait_mean_s.svg"}) {
    INFO(f);
    CHECK(slurp(arr + "/" + f) == slurp(local + "/" + f));
  }
  fs::remove_all(local);
  fs::remove_all(arr);
}

TEST_CASE("sweep: bad grids and targets are refused before anything is written", "[sweep][cli]") {
  const std::string out = (fs::temp_directory_path() / "gcsim-test-sweep-bad").string();
  fs::remove_all(out);
  const std::string base = gcsim::test::gcsim_binary() + " sweep --cluster " + src("configs/dgx-a100-pod.yaml") +
                           " --trace " + src("traces/philly-d07-d21.csv") + " --out " + out;
  auto p = run_shell(base + " --grid nodes --grid binding=sideways,unbound 2>&1");
  CHECK(p.status == 2);
  CHECK(p.output.find("--grid 'nodes': expected KEY=V1,V2,...") != std::string::npos);
  p = run_shell(base + " --grid binding=sideways,unbound 2>&1");
  CHECK(p.status == 2);
  CHECK(p.output.find("<command line>: error: grid binding=sideways: unknown binding mode") != std::string::npos);
  p = run_shell(base + " --grid nodes=8,16 --target 'p95_wait<=soon' 2>&1");
  CHECK(p.status == 2);
  CHECK(p.output.find("'soon' is not a number") != std::string::npos);
  p = run_shell(base + " --grid nodes=8,16 --target 'colour<=1' 2>&1");
  CHECK(p.status == 2);
  CHECK(p.output.find("unknown metric 'colour'") != std::string::npos);
  p = run_shell(base + " --grid nodes=8,16 --point 2 2>&1");
  CHECK(p.status == 2);
  CHECK(p.output.find("--point 2: the grid has 2 points (0-1)") != std::string::npos);
  CHECK(!fs::exists(out));
}
