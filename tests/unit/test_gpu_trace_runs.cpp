// `gcsim run` on the public GPU traces, each against the inventory that ships with it
// where there is one: Philly jobs on Philly's machine list, Alibaba v2023 pods on their
// own node list (GPU-model constraints honoured), a Helios-layout log on a DGX pod.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>

#include "sim/core/input_file.hpp"
#include "sim/workload/alibaba_reader.hpp"
#include "tests/unit/test_paths.hpp"
#include "tools/gcsim/app.hpp"

using namespace gcsim;
using gcsim::test::slurp;
using gcsim::test::src;
namespace fs = std::filesystem;

namespace {

struct SacctRow {
  std::map<std::string, std::string> f;
};

std::vector<SacctRow> read_sacct(const std::string& path) {
  const std::string text = slurp(path);
  const auto lines = split_lines(text);
  std::vector<std::string> head;
  for (auto h : split(lines[0], '|')) head.emplace_back(h);
  std::vector<SacctRow> rows;
  for (size_t i = 1; i < lines.size(); ++i) {
    if (trim(lines[i]).empty()) continue;
    const auto cells = split(lines[i], '|');
    REQUIRE(cells.size() == head.size());
    SacctRow r;
    for (size_t c = 0; c < head.size(); ++c) r.f[head[c]] = std::string(cells[c]);
    rows.push_back(std::move(r));
  }
  return rows;
}

fs::path run_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("gcsim-gpu-run-" + name);
  fs::remove_all(d);
  return d;
}

}  // namespace

TEST_CASE("Philly sample runs on Philly's own machine list", "[gpu-runs][e2e]") {
  const fs::path out = run_dir("philly");
  REQUIRE(run_cli({"gcsim", "run", "--cluster", src("tests/data/traces/philly/cluster_machine_list.csv"), "--trace",
                   src("tests/data/traces/philly/philly_sampled_jobs_4206.json.gz"), "--out", out.string(),
                   "--no-progress"}) == 0);
  REQUIRE(slurp((out / "manifest.json").string()).find("\"completed\": true") != std::string::npos);
  const auto rows = read_sacct((out / "jobs.sacct").string());
  REQUIRE(rows.size() == 4206);
  // Replayed jobs end as the trace says they did: Pass 2,534, Failed 1,672.
  std::map<std::string, int> states;
  for (const auto& r : rows) ++states[r.f.at("State")];
  REQUIRE(states == std::map<std::string, int>{{"COMPLETED", 2534}, {"FAILED", 1672}});
  // The readers keep the recorded starts, so the replay report compares all of them.
  REQUIRE(slurp((out / "replay.json").string()).find("\"jobs_compared\": 4206") != std::string::npos);
  // With the step runtime model too: Philly's machine list has no NICs, so multi-node
  // jobs have no modelled communication, and the run says so instead of failing.
  REQUIRE(run_cli({"gcsim", "run", "--cluster", src("tests/data/traces/philly/cluster_machine_list.csv"), "--trace",
                   src("tests/data/traces/philly/philly_sampled_jobs_4206.json.gz"), "--out", out.string(),
                   "--no-progress", "--runtime-model", "step"}) == 0);
  REQUIRE(slurp((out / "manifest.json").string()).find("runtime: step model") != std::string::npos);
  fs::remove_all(out);
}

TEST_CASE("Alibaba v2023 pods run on their own node list, on the GPU models they allow", "[gpu-runs][e2e]") {
  const std::string pods = src("tests/data/traces/alibaba/gpu-v2023/openb_pod_list_gpuspec33.csv");
  const fs::path out = run_dir("alibaba");
  REQUIRE(run_cli({"gcsim", "run", "--cluster", src("tests/data/traces/alibaba/gpu-v2023/openb_node_list_gpu_node.csv"),
                   "--trace", pods, "--out", out.string(), "--no-progress"}) == 0);
  Diagnostics d;
  const Trace t = read_alibaba_v2023_pods(pods, d);
  std::map<std::string, const Job*> by_name;
  for (const Job& j : t.jobs) by_name[j.name] = &j;
  // One pod cannot run anywhere: 120 CPUs, 720 GiB and 8 G2 GPUs, while every G2 node
  // has 96 CPUs and 384 GiB. Slurm rejects such a job at submit with this reason.
  REQUIRE(slurp((out / "rejected.txt").string()) ==
          "JobID|JobName|Reason\n1640|openb-pod-1639|requested node configuration is not available\n");
  const auto rows = read_sacct((out / "jobs.sacct").string());
  REQUIRE(rows.size() == t.jobs.size() - 1);
  int64_t constrained = 0;
  for (const auto& r : rows) {
    const Job& j = *by_name.at(r.f.at("JobName"));
    if (j.req.gpu_types_allowed.empty()) continue;
    ++constrained;
    // AllocTRES names the model it got: gres/gpu:<type>=N.
    const std::string& alloc = r.f.at("AllocTRES");
    const auto at = alloc.find("gres/gpu:");
    REQUIRE(at != std::string::npos);
    const std::string type = alloc.substr(at + 9, alloc.find('=', at) - at - 9);
    INFO(j.name << " got " << type);
    REQUIRE(std::find(j.req.gpu_types_allowed.begin(), j.req.gpu_types_allowed.end(), type) !=
            j.req.gpu_types_allowed.end());
  }
  REQUIRE(constrained > 1000);  // gpuspec33: a third of the GPU pods name their models
  fs::remove_all(out);
}

TEST_CASE("A Helios-layout log runs, and --from/--to cut it", "[gpu-runs][e2e]") {
  const fs::path out = run_dir("helios");
  const std::string trace = src("tests/data/traces/helios/helios_sample_handwritten.csv");
  REQUIRE(run_cli({"gcsim", "run", "--cluster", src("configs/dgx-a100-pod.yaml"), "--trace", trace, "--out",
                   out.string(), "--no-progress"}) == 0);
  const size_t all = read_sacct((out / "jobs.sacct").string()).size();
  REQUIRE(all == 8);
  REQUIRE(run_cli({"gcsim", "run", "--cluster", src("configs/dgx-a100-pod.yaml"), "--trace", trace, "--out",
                   out.string(), "--no-progress", "--from", "60", "--to", "1h"}) == 0);
  const size_t cut = read_sacct((out / "jobs.sacct").string()).size();
  REQUIRE(cut < all);
  REQUIRE(cut > 0);
  REQUIRE(slurp((out / "manifest.json").string()).find("window: kept " + std::to_string(cut) + " of 8 jobs") !=
          std::string::npos);
  // An empty window is bad input: exit 2, and the earlier complete run is not replaced
  // by a half-written one.
  REQUIRE(run_cli({"gcsim", "run", "--cluster", src("configs/dgx-a100-pod.yaml"), "--trace", trace, "--out",
                   out.string(), "--no-progress", "--from", "400d"}) == 2);
  REQUIRE(slurp((out / "manifest.json").string()).find("\"completed\": true") != std::string::npos);
  fs::remove_all(out);
}
