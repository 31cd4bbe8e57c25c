// The real mode (issue 8) on this machine and on real hwloc XML fixtures:
//  - `gcsim real exec --ntasks=2 --cpus-per-task=1 -- grep Cpus_allowed_list ...`: each
//    child runs on its own CPU;
//  - `gcsim real bind` under a faked srun environment exports the ranks PyTorch reads and
//    binds inside the cpuset it was given (taskset stands in for srun's cpuset);
//  - `gcsim real place --topology-file X --binding numa-bound` puts every task's cores on
//    its GPUs' NUMA domain, and is exactly the allocation the simulator's Simulation makes
//    for the same request on the same (empty) node;
//  - `gcsim real probe --quick` writes a calibration that the host model and
//    `gcsim run --host-calibration` load.
#include <catch2/catch.hpp>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "models/host/host_model.hpp"
#include "models/placement/placement.hpp"
#include "models/sched/registry.hpp"
#include "sim/cluster/import_hwloc.hpp"
#include "sim/cluster/topology.hpp"
#include "sim/sched/simulation.hpp"
#include "sim/workload/sbatch_options.hpp"
#include "tests/unit/test_paths.hpp"
#include "sim/cluster/import_nvidia_smi.hpp"
#include "tools/real/real_mode.hpp"

using namespace gcsim;
using gcsim::test::gcsim_binary;
using gcsim::test::slurp;
using gcsim::test::src;
namespace fs = std::filesystem;

namespace {

using gcsim::test::Proc;

/// stdout and stderr together.
Proc shell(const std::string& cmd) { return gcsim::test::run_shell(cmd + " 2>&1"); }

std::map<std::string, std::string> vars(const std::string& out) {
  std::map<std::string, std::string> m;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line))
    if (auto eq = line.find('='); eq != std::string::npos && line.find(' ') > eq) m[line.substr(0, eq)] = line.substr(eq + 1);
  return m;
}

std::string cpus_allowed(const std::string& out) {
  std::smatch m;
  static const std::regex re("Cpus_allowed_list:\\s*([0-9,-]+)");
  return std::regex_search(out, m, re) ? m[1].str() : std::string();
}

const std::string kSrunEnv =
    "env SLURM_NTASKS=4 SLURM_NODEID=1 SLURM_JOB_NODELIST='gpu[07-08]' SLURM_JOB_ID=4242 "
    "SLURM_TASKS_PER_NODE='2(x2)' SLURM_CPUS_PER_TASK=1 ";

}  // namespace

TEST_CASE("real exec runs one child per task, each on its own CPU", "[real]") {
  const auto aff = real::current_affinity();
  if (aff.size() < 2) {
    WARN("this process may use " << aff.size() << " CPU: the two-task check needs two");
    return;
  }
  const Proc p = shell(gcsim_binary() + " real exec --ntasks=2 --cpus-per-task=1 --label -- grep Cpus_allowed_list /proc/self/status");
  INFO(p.output);
  REQUIRE(p.status == 0);
  std::set<std::string> seen;
  for (const std::string label : {"0: ", "1: "}) {
    const auto at = p.output.find(label + "Cpus_allowed_list:");
    REQUIRE(at != std::string::npos);
    const std::string list = cpus_allowed(p.output.substr(at));
    auto ids = parse_cpu_list(list);
    REQUIRE(ids);
    CHECK(ids->size() == 1);  // one CPU per task
    CHECK(std::binary_search(aff.begin(), aff.end(), ids->front()));
    seen.insert(list);
  }
  CHECK(seen.size() == 2);  // distinct

  // Inside a narrower cpuset (a container, taskset): only its CPUs, and a request that
  // needs more is refused.
  const std::string only = std::to_string(aff[1]);
  const Proc narrow = shell("taskset -c " + only + " " + gcsim_binary() + " real exec -n 1 -- grep Cpus_allowed_list /proc/self/status");
  INFO(narrow.output);
  CHECK(narrow.status == 0);
  CHECK(cpus_allowed(narrow.output) == only);
  const Proc two = shell("taskset -c " + only + " " + gcsim_binary() + " real exec -n 2 -- true");
  CHECK(two.status == 2);

  // srun's task environment and exit status: the largest task exit code.
  const Proc env = shell(gcsim_binary() + " real exec -n 2 --label -- sh -c 'echo rank=$SLURM_PROCID local=$SLURM_LOCALID ntasks=$SLURM_NTASKS; exit $((3 + SLURM_PROCID))'");
  CHECK(env.status == 4);
  CHECK(env.output.find("0: rank=0 local=0 ntasks=2") != std::string::npos);
  CHECK(env.output.find("1: rank=1 local=1 ntasks=2") != std::string::npos);
  CHECK(env.output.find("task 1: Exited with exit code 4") != std::string::npos);
}

TEST_CASE("real exec refuses a request that does not fit and runs nothing", "[real]") {
  const fs::path marker = fs::temp_directory_path() / ("gcsim-real-marker-" + std::to_string(::getpid()));
  fs::remove(marker);
  const int cpus = static_cast<int>(real::current_affinity().size());
  const Proc p = shell(gcsim_binary() + " real exec --ntasks=" + std::to_string(cpus + 1) + " -- touch " + marker.string());
  CHECK(p.status == 2);
  CHECK(p.output.find("error: the request does not fit") != std::string::npos);
  CHECK_FALSE(fs::exists(marker));
  const Proc q = shell(gcsim_binary() + " real exec --no-such-option -- true");
  CHECK(q.status == 2);
}

TEST_CASE("real bind under a faked srun environment exports the ranks and binds inside its cpuset", "[real]") {
  const auto aff = real::current_affinity();
  if (aff.size() < 2) {
    WARN("this process may use " << aff.size() << " CPU: the bind checks need two");
    return;
  }
  const std::string a = std::to_string(aff[0]), b = std::to_string(aff[1]);
  const std::string show = " -- sh -c 'env; grep Cpus_allowed_list /proc/self/status'";
  // The cpuset holds both local tasks' CPUs: every task computes the same plan, each takes its own.
  for (int local : {0, 1}) {
    const Proc p = shell(kSrunEnv + "SLURM_PROCID=" + std::to_string(2 + local) + " SLURM_LOCALID=" +
                         std::to_string(local) + " taskset -c " + a + "," + b + " " + gcsim_binary() + " real bind" + show);
    INFO(p.output);
    REQUIRE(p.status == 0);
    auto v = vars(p.output);
    CHECK(v["RANK"] == std::to_string(2 + local));
    CHECK(v["LOCAL_RANK"] == std::to_string(local));
    CHECK(v["WORLD_SIZE"] == "4");
    CHECK(v["LOCAL_WORLD_SIZE"] == "2");
    CHECK(v["NODE_RANK"] == "1");
    CHECK(v["MASTER_ADDR"] == "gpu07");
    CHECK(v["MASTER_PORT"] == std::to_string(10000 + 4242));
    CHECK(cpus_allowed(p.output) == (local == 0 ? a : b));
  }
  // The cpuset is this task's own (srun --cpu-bind): it stays inside it.
  const Proc own = shell(kSrunEnv + "SLURM_PROCID=2 SLURM_LOCALID=0 taskset -c " + b + " " + gcsim_binary() + " real bind" + show);
  INFO(own.output);
  REQUIRE(own.status == 0);
  CHECK(cpus_allowed(own.output) == b);
  CHECK(vars(own.output)["RANK"] == "2");
  // Not under srun: a clear error, nothing run.
  const Proc none = shell("env -u SLURM_PROCID " + gcsim_binary() + " real bind -- true");
  CHECK(none.status == 2);
  CHECK(none.output.find("SLURM_PROCID is not set") != std::string::npos);
}

TEST_CASE("real bind picks each task's GPU and the cores next to it (g4dn.metal, constrained devices)", "[real]") {
  // Slurm gave the job GPUs 4-7 (socket 1) and socket 1's CPUs; with ConstrainDevices the
  // task sees them as CUDA devices 0-3. Task 2 of 4 gets GPU 6 = CUDA device 2.
  const std::string xml = src("tests/data/hwloc/mpibind/g4dnmetal.xml");
  const Proc p = shell("env SLURM_NTASKS=4 SLURM_PROCID=2 SLURM_LOCALID=2 SLURM_TASKS_PER_NODE=4 "
                       "SLURM_CPUS_PER_TASK=2 SLURM_JOB_GPUS=4,5,6,7 CUDA_VISIBLE_DEVICES=0,1,2,3 SLURM_JOB_ID=7 "
                       "SLURM_JOB_NODELIST=g4dn1 " +
                       gcsim_binary() + " real bind --topology-file " + xml + " --cpuset 24-47,72-95 --dry-run");
  INFO(p.output);
  REQUIRE(p.status == 0);
  auto v = vars(p.output);
  CHECK(v["CUDA_VISIBLE_DEVICES"] == "2");
  CHECK(v["LOCAL_RANK"] == "2");
  CHECK(v["MASTER_PORT"] == "10007");
  // Its CPUs: one core (two hyperthreads) on GPU 6's NUMA domain (socket 1: 24-47,72-95).
  Diagnostics w;
  const real::Machine m = real::load_machine(xml, w);
  auto cpus = parse_cpu_list(v["GCSIM_BIND_CPUS"]);
  REQUIRE(cpus);
  CHECK(cpus->size() == 2);
  for (int c : *cpus) CHECK(((c >= 24 && c <= 47) || (c >= 72 && c <= 95)));
  CHECK(m.tmpl().gpus[6].numa == 1);
  CHECK(v["GCSIM_BIND_MEM_NUMA"] == "1");
}

TEST_CASE("real place on hwloc fixtures: numa-bound cores on the GPUs' domains, as the simulator places them",
          "[real][placement]") {
  // Machines with GPUs on several NUMA domains (cts1: 2 sockets; g4dn: 8 GPUs over 2;
  // corona: EPYC NPS4, 8 domains; lassen: POWER9 SMT4).
  const std::vector<std::string> fixtures = {"mpibind/cts1-pascal.xml", "mpibind/g4dnmetal.xml",
                                             "mpibind/epyc-corona.xml", "flux/lassen-0.xml"};
  const std::vector<std::string> requests = {"--ntasks=2 --gpus-per-task=1 --cpus-per-task=4",
                                             "--ntasks-per-node=4 --gpus=4 --cpus-per-task=2 --gpu-bind=closest",
                                             "--ntasks=1 --gpus=1 --cpus-per-task=6"};
  int compared = 0;
  for (const auto& f : fixtures) {
    const std::string xml = src("tests/data/hwloc/" + f);
    Diagnostics w;
    const real::Machine m = real::load_machine(xml, w);
    const NodeTemplate& t = m.tmpl();
    for (const auto& req : requests) {
      INFO(f << ": " << req);
      Job job;
      job.name = "j";
      job.duration = SimTime::seconds(60);
      Diagnostics d;
      REQUIRE(parse_sbatch_options(req, SourceLoc{"t", 1, 1}, job.req, d));
      if (static_cast<int64_t>(t.gpus.size()) < 4 && req.find("--gpus=4") != std::string::npos) continue;

      // The simulator: one job on the same node, numa-bound, through the Simulation.
      const Cluster cluster = make_homogeneous_cluster("x", import_hwloc_xml(xml, w), 1, xml);
      Trace trace;
      trace.jobs.push_back(job);
      trace.jobs.back().id = JobId(1);
      auto policy = make_policy("fcfs");
      PlacementAllocator alloc(PlacementMode::kNumaBound);
      Simulation sim(cluster, trace, *policy, alloc);
      REQUIRE(sim.run().completed);
      const Allocation& simulated = sim.outcomes().front().alloc;
      REQUIRE(simulated.nodes.size() == 1);
      const NodeAlloc& sa = simulated.nodes.front();

      // The real mode, through the command.
      const Proc p = shell(gcsim_binary() + " real place --topology-file " + xml + " --binding numa-bound " + req);
      INFO(p.output);
      REQUIRE(p.status == 0);
      std::istringstream in(p.output);
      std::string line;
      std::vector<std::vector<std::string>> rows;
      while (std::getline(in, line)) {
        if (line.empty() || !std::isdigit(static_cast<unsigned char>(line[0]))) continue;  // the task rows
        std::istringstream ls(line);
        std::vector<std::string> cols;
        for (std::string c; ls >> c;) cols.push_back(c);
        rows.push_back(cols);
      }
      REQUIRE(rows.size() == static_cast<size_t>(sa.tasks));
      for (int k = 0; k < sa.tasks; ++k) {
        const TaskBinding& b = sa.bindings.at(static_cast<size_t>(k));
        // Same cores and GPUs as the simulator chose.
        CHECK(rows[k][2] == real::format_id_ranges(b.cores));
        std::string gpus;
        for (int g : b.gpus) gpus += (gpus.empty() ? "" : ",") + std::to_string(g);
        CHECK(rows[k][3] == gpus);
        // OS CPUs = the cores' PUs.
        std::vector<int> os;
        for (int c : b.cores)
          for (int th = 0; th < t.threads_per_core; ++th) os.push_back(t.cpu_os_ids[static_cast<size_t>(c * t.threads_per_core + th)]);
        std::sort(os.begin(), os.end());
        CHECK(rows[k][1] == real::format_id_ranges(os));
        // numa-bound: every core on the domain of one of the task's GPUs.
        std::set<int> gpu_doms;
        for (int g : b.gpus) gpu_doms.insert(t.gpus[g].numa);
        for (int c : b.cores) CHECK(gpu_doms.count(t.numa_of_core(c)) == 1);
        ++compared;
      }
    }
  }
  CHECK(compared >= 20);
}

TEST_CASE("real place --cpuset matches the simulator on a node another job already uses", "[real][placement]") {
  // The simulator starts a CPU job first (it takes the lowest cores), then the GPU job;
  // the real mode gets the CPUs the first job left as its cpuset.
  for (const std::string f : {"mpibind/g4dnmetal.xml", "mpibind/epyc-corona.xml", "mpibind/cts1-pascal.xml"}) {
    INFO(f);
    const std::string xml = src("tests/data/hwloc/" + f);
    Diagnostics w;
    const Cluster cluster = make_homogeneous_cluster("x", import_hwloc_xml(xml, w), 1, xml);
    const NodeTemplate& t = cluster.templates.front();
    Trace trace;
    for (const std::string args : {"--ntasks=1 --cpus-per-task=12", "--ntasks=2 --gpus-per-task=1 --cpus-per-task=4"}) {
      Job j;
      j.id = JobId(static_cast<int64_t>(trace.jobs.size()) + 1);
      j.name = "j" + std::to_string(j.id.value);
      j.duration = SimTime::seconds(600);
      Diagnostics d;
      REQUIRE(parse_sbatch_options(args, SourceLoc{"t", 1, 1}, j.req, d));
      trace.jobs.push_back(j);
    }
    auto policy = make_policy("fcfs");
    PlacementAllocator alloc(PlacementMode::kNumaBound);
    Simulation sim(cluster, trace, *policy, alloc);
    REQUIRE(sim.run().completed);
    const NodeAlloc& first = sim.outcomes()[0].alloc.nodes.front();
    const NodeAlloc& second = sim.outcomes()[1].alloc.nodes.front();
    REQUIRE(sim.outcomes()[1].start == SimTime());  // both ran at once
    std::vector<int> left;
    for (int c = 0; c < t.cores(); ++c)
      if (!std::binary_search(first.cores.begin(), first.cores.end(), c))
        for (int th = 0; th < t.threads_per_core; ++th) left.push_back(t.cpu_os_ids[static_cast<size_t>(c * t.threads_per_core + th)]);
    std::sort(left.begin(), left.end());
    const Proc p = shell(gcsim_binary() + " real place --topology-file " + xml + " --binding numa-bound --cpuset " +
                         real::format_id_ranges(left) + " --ntasks=2 --gpus-per-task=1 --cpus-per-task=4");
    INFO(p.output);
    REQUIRE(p.status == 0);
    for (int k = 0; k < 2; ++k) {
      const std::string want = std::to_string(k) + " ";
      const auto at = p.output.find("\n" + want);
      REQUIRE(at != std::string::npos);
      std::istringstream ls(p.output.substr(at + 1));
      std::vector<std::string> cols;
      for (std::string c; cols.size() < 4 && ls >> c;) cols.push_back(c);
      CHECK(cols[2] == real::format_id_ranges(second.bindings[static_cast<size_t>(k)].cores));
      CHECK(cols[3] == std::to_string(second.bindings[static_cast<size_t>(k)].gpus.front()));
      for (int c : second.bindings[static_cast<size_t>(k)].cores)
        CHECK_FALSE(std::binary_search(first.cores.begin(), first.cores.end(), c));
    }
  }
}

TEST_CASE("real probe --quick writes a calibration that run --host-calibration loads", "[real][probe]") {
  const fs::path dir = fs::temp_directory_path() / ("gcsim-probe-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string cal = (dir / "cal.yaml").string();
  const Proc p = shell(gcsim_binary() + " real probe --quick --template sys-420gp-tnr -o " + cal);
  INFO(p.output);
  REQUIRE(p.status == 0);
  CHECK(p.output.find("TRIAD_GB/s") != std::string::npos);
  const std::string text = slurp(cal);
  INFO(text);
  CHECK(text.find("sys-420gp-tnr") != std::string::npos);
  CHECK(text.find("cpu_numa: 0, mem_numa: 0") != std::string::npos);

  // The host model reads it: the socket's DMA ceiling becomes the measured local triad.
  const HostParams base = load_host_params(src("configs/host/default.yaml"));
  const HostParams calibrated = apply_host_calibration(base, cal);
  const TemplateCalibration* tc = calibrated.calibration_for("sys-420gp-tnr");
  REQUIRE(tc);
  REQUIRE(!tc->memory.empty());
  const double triad = tc->memory.front().triad_Bps;
  CHECK(triad > 1e8);   // at least 0.1 GB/s: a real measurement
  CHECK(triad < 2e12);
  CHECK(tc->memory.front().latency_ns > 1);

  // gcsim run --host-calibration: the manifest names the file, the run completes.
  const std::string out = (dir / "run").string();
  const Proc r = shell(gcsim_binary() + " run --cluster " + src("configs/pcie-8gpu.yaml") + " --trace " +
                       src("traces/philly-d07-d21.csv") + " --to 1d --policy easy --runtime-model step " +
                       "--host-calibration " + cal + " --no-progress --out " + out);
  INFO(r.output);
  REQUIRE(r.status == 0);
  const std::string manifest = slurp(out + "/manifest.json");
  CHECK(manifest.find("cal.yaml") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a probe's memory matrix sets the socket DMA ceiling and the loader's remote penalty", "[real][probe][host]") {
  const HostParams base = load_host_params(src("configs/host/default.yaml"));
  const HostParams cal = parse_host_calibration(base,
                                                "schema_version: 1\n"
                                                "node_templates:\n"
                                                "  g4dnmetal:\n"
                                                "    memory:\n"
                                                "      - {cpu_numa: 0, mem_numa: 0, triad: 20GB/s, latency_ns: 90}\n"
                                                "      - {cpu_numa: 0, mem_numa: 1, triad: 12GB/s, latency_ns: 140}\n"
                                                "      - {cpu_numa: 1, mem_numa: 1, triad: 22GB/s}\n"
                                                "      - {cpu_numa: 1, mem_numa: 0, triad: 13GB/s}\n",
                                                "cal.yaml");
  Diagnostics w;
  const NodeTemplate t = import_hwloc_xml(src("tests/data/hwloc/mpibind/g4dnmetal.xml"), w);
  const NodeTopology topo = build_node_topology(t);
  const HostModel plain(base, t, topo), probed(cal, t, topo);
  CHECK(plain.dram_socket_Bps(0) == Approx(56e9));
  CHECK(probed.dram_socket_Bps(0) == Approx(20e9));
  CHECK(probed.dram_socket_Bps(1) == Approx(22e9));
  // rho = 1 - mean remote / mean local = 1 - 12.5 / 21.
  CHECK(probed.loader_rho(LoaderKind::kMemoryBound) == Approx(1 - 12.5 / 21));
  CHECK(plain.loader_rho(LoaderKind::kMemoryBound) == Approx(0.3));
  // Eight GPUs copying from socket 0's memory at once now share 20 GB/s, not 56.
  std::vector<CopyStream> all;
  for (int g = 0; g < 4; ++g) all.push_back({g, MemBinding::on_numa(0)});
  double sum = 0;
  for (double b : probed.copy_bandwidths_Bps(CopyDir::kH2D, all)) sum += b;
  CHECK(sum <= 20e9 * 1.0001);
  // A pair named twice, or a domain the template lacks, is an error.
  CHECK_THROWS_AS(parse_host_calibration(base,
                                         "schema_version: 1\nnode_templates:\n  g4dnmetal:\n    memory:\n"
                                         "      - {cpu_numa: 0, mem_numa: 0, triad: 20GB/s}\n"
                                         "      - {cpu_numa: 0, mem_numa: 0, triad: 21GB/s}\n",
                                         "dup.yaml"),
                  InputError);
  const HostParams bad = parse_host_calibration(
      base, "schema_version: 1\nnode_templates:\n  g4dnmetal:\n    memory:\n      - {cpu_numa: 5, mem_numa: 0, triad: 20GB/s}\n",
      "bad.yaml");
  CHECK_THROWS_AS(HostModel(bad, t, topo), std::invalid_argument);
}
