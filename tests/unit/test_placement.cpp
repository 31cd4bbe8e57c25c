// Placement scenarios (tests/data/placement/*.scen): a tiny language, one command a line,
//   node sockets=2 cores_per_numa=8 [numa_per_socket=N] [threads=T] [gpu_numa=0,0,1,1] [links=0-1:4,...]
//   busy cores=0-5 gpus=0       (taken before the next request)
//   reset                        (everything free again)
//   request [tasks=N] [cpt=C] [gpus=G] [gpt=K] [cpg=K] [enforce] [gpu-bind=X] [dist=X] [tasks-vary] [first-pass]
//                                (cpg: --cpus-per-gpu; tasks-vary: -n without -N,
//                                NodeRequest::tasks_fixed false; first-pass: Slurm's first pass)
//   expect MODE fail | expect MODE [cores=L] [gpus=L] [tasks=L;L;...] [task_gpus=L;L;...]
//   apply MODE                   (the last request's placement under MODE becomes busy)
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>

#include "models/placement/placement.hpp"
#include "sim/core/input_file.hpp"
#include "tests/unit/schedule_checker.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;
namespace fs = std::filesystem;

namespace {

std::map<std::string, std::string> kv(const std::vector<std::string_view>& toks, size_t from) {
  std::map<std::string, std::string> m;
  for (size_t i = from; i < toks.size(); ++i) {
    const auto eq = toks[i].find('=');
    if (eq == std::string_view::npos)
      m[std::string(toks[i])] = "";
    else
      m[std::string(toks[i].substr(0, eq))] = std::string(toks[i].substr(eq + 1));
  }
  return m;
}

std::string per_task(const NodeAlloc& a, bool gpus) {
  std::string s;
  for (size_t i = 0; i < a.bindings.size(); ++i)
    s += (i ? ";" : "") + format_id_list(gpus ? a.bindings[i].gpus : a.bindings[i].cores);
  return s;
}

void run_scenario(const fs::path& file) {
  const std::string text = read_input_file(file.string());
  NodeTemplate t;
  gcsim::CoreMask core_free;
  uint64_t gpu_free = 0;
  NodeRequest req;
  int line_no = 0;
  for (auto line : split_lines(text)) {
    ++line_no;
    line = trim(line);
    if (line.empty() || line.front() == '#') continue;
    const auto toks = split_ws(line);
    const std::string cmd(toks[0]);
    INFO(file.filename().string() << ":" << line_no << ": " << line);
    if (cmd == "node") {
      auto m = kv(toks, 1);
      t = NodeTemplate{};
      t.sockets = std::stoi(m["sockets"]);
      t.cores_per_numa = std::stoi(m["cores_per_numa"]);
      if (m.count("numa_per_socket")) t.numa_per_socket = std::stoi(m["numa_per_socket"]);
      if (m.count("threads")) t.threads_per_core = std::stoi(m["threads"]);
      if (m.count("gpu_numa"))
        for (auto g : split(m["gpu_numa"], ',')) {
          GpuSpec spec;
          spec.gres_type = "gpu";
          spec.numa = std::stoi(std::string(g));
          t.gpus.push_back(spec);
        }
      if (m.count("links")) {
        t.nvlink.kind = NvlinkKind::kPairs;
        for (auto l : split(m["links"], ',')) {
          auto dash = l.find('-'), colon = l.find(':');
          t.nvlink.pairs.push_back({std::stoi(std::string(l.substr(0, dash))),
                                    std::stoi(std::string(l.substr(dash + 1, colon - dash - 1))),
                                    std::stoi(std::string(l.substr(colon + 1)))});
        }
      }
      core_free = gcsim::CoreMask(t.cores());
      gpu_free = (1ULL << t.gpus.size()) - 1;
    } else if (cmd == "reset") {
      core_free = gcsim::CoreMask(t.cores());
      gpu_free = (1ULL << t.gpus.size()) - 1;
    } else if (cmd == "busy") {
      auto m = kv(toks, 1);
      for (int c : gcsim::test::parse_id_list(m["cores"])) core_free.set(c, false);
      for (int g : gcsim::test::parse_id_list(m["gpus"])) gpu_free &= ~(1ULL << g);
    } else if (cmd == "request") {
      auto m = kv(toks, 1);
      req = NodeRequest{};
      if (m.count("tasks")) req.tasks = std::stoi(m["tasks"]);
      if (m.count("cpt")) req.cpus_per_task = std::stoi(m["cpt"]);
      if (m.count("gpus")) req.gpus = std::stoi(m["gpus"]);
      if (m.count("gpt")) req.gpus_per_task = std::stoi(m["gpt"]);
      req.enforce_binding = m.count("enforce") > 0;
      req.tasks_fixed = m.count("tasks-vary") == 0;
      req.first_pass = m.count("first-pass") > 0;
      if (m.count("cpg")) req.cpus_per_gpu = std::stoi(m["cpg"]);
      if (m.count("gpu-bind")) req.gpu_bind = m["gpu-bind"];
      if (m.count("dist")) req.distribution = m["dist"];
    } else if (cmd == "expect" || cmd == "apply") {
      const auto mode = parse_placement_mode(std::string(toks.at(1)));
      REQUIRE(mode.has_value());
      const NodePlacement p = place_on_template(t, core_free, gpu_free, 0, req, *mode);
      {
        // asked only whether it fits (slurm selection's capacity test): the same answer
        // and the same cores and GPUs, with no task bindings computed
        NodeRequest fit_req = req;
        fit_req.fit_only = true;
        const NodePlacement f = place_on_template(t, core_free, gpu_free, 0, fit_req, *mode);
        CHECK(f.fits == p.fits);
        if (f.fits && p.fits) {
          CHECK(f.alloc.cores == p.alloc.cores);
          CHECK(f.alloc.gpus == p.alloc.gpus);
        }
      }
      if (cmd == "apply") {
        REQUIRE(p.fits);
        for (int c : p.alloc.cores) core_free.set(c, false);
        for (int g : p.alloc.gpus) gpu_free &= ~(1ULL << g);
        continue;
      }
      auto m = kv(toks, 2);
      if (m.count("fail")) {
        CHECK_FALSE(p.fits);
        continue;
      }
      INFO("reason: " << p.reason);
      REQUIRE(p.fits);
      // Every task's cores are inside the allocation and no core is given twice.
      std::vector<int> all;
      for (const auto& b : p.alloc.bindings) all.insert(all.end(), b.cores.begin(), b.cores.end());
      std::sort(all.begin(), all.end());
      CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
      if (m.count("cores")) CHECK(format_id_list(p.alloc.cores) == m["cores"]);
      if (m.count("gpus")) CHECK(format_id_list(p.alloc.gpus) == m["gpus"]);
      if (m.count("tasks")) CHECK(per_task(p.alloc, false) == m["tasks"]);
      if (m.count("task_gpus")) CHECK(per_task(p.alloc, true) == m["task_gpus"]);
    } else {
      FAIL("unknown scenario command " << cmd);
    }
  }
}

}  // namespace

TEST_CASE("placement scenarios", "[placement]") {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(gcsim::test::src("tests/data/placement")))
    if (e.path().extension() == ".scen") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 6);
  for (const auto& f : files) {
    DYNAMIC_SECTION(f.filename().string()) { run_scenario(f); }
  }
}

TEST_CASE("srun environment for a two-node GPU job", "[placement]") {
  Cluster c = make_cpu_cluster("t", 2, 8, "test");
  c.templates[0].gpus.resize(4);
  Allocation a;
  for (int n = 0; n < 2; ++n) {
    NodeAlloc na;
    na.node = n;
    na.tasks = 2;
    na.cores = {0, 1, 4, 5};
    na.gpus = {1, 3};
    na.bindings = {TaskBinding{{0, 1}, {1}, 0}, TaskBinding{{4, 5}, {3}, 0}};
    a.nodes.push_back(na);
  }
  const auto env = srun_environment(c, a, false);
  REQUIRE(env.size() == 4);
  CHECK(env[3].at("SLURM_PROCID") == "3");
  CHECK(env[3].at("SLURM_LOCALID") == "1");
  CHECK(env[3].at("SLURM_NODEID") == "1");
  CHECK(env[3].at("SLURM_NTASKS") == "4");
  CHECK(env[3].at("SLURM_JOB_GPUS") == "1,3");
  CHECK(env[3].at("CUDA_VISIBLE_DEVICES") == "3");
  CHECK(env[0].at("SLURM_CPU_BIND") == "quiet,mask_cpu:0x3,0x30");
  CHECK(srun_environment(c, a, true)[3].at("CUDA_VISIBLE_DEVICES") == "1");
  CHECK(cpu_mask_hex({0, 1, 2, 3, 64}) == "0x1000000000000000F");
}
