// The slurm.conf importer: the oracle example, a 10,000-node case on the Slurm test
// suite's 3-level switch tree, the lexer's corners (continuations, Include, DEFAULT lines,
// case-insensitive keys) and the invalid corpus in tests/inputs/invalid/slurm.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "sim/cluster/import_slurm_conf.hpp"
#include "tests/unit/test_paths.hpp"

namespace fs = std::filesystem;
using gcsim::Cluster;
using gcsim::Diagnostics;
using gcsim::load_slurm_conf;
using gcsim::SimTime;
using gcsim::test::slurp;
using gcsim::test::src;

namespace {

/// Writes the files of a case into a fresh temp directory; returns its slurm.conf path.
std::string write_case(const std::string& name, const std::map<std::string, std::string>& files) {
  const fs::path dir = fs::temp_directory_path() / ("gcsim-slurmconf-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& [file, text] : files) std::ofstream(dir / file) << text;
  return (dir / "slurm.conf").string();
}

/// The diagnostics of a failing load, with the source dir prefix removed.
std::string load_errors(const std::string& path) {
  Diagnostics w;
  try {
    (void)load_slurm_conf(path, w);
  } catch (const gcsim::InputError& e) {
    std::string out = e.diagnostics().format();
    const std::string prefix = std::string(GCSIM_SOURCE_DIR) + "/";
    for (size_t p; (p = out.find(prefix)) != std::string::npos;) out.erase(p, prefix.size());
    return out;
  }
  return "(loaded without errors)\n";
}

int leaf_of(const Cluster& c, const std::string& node) {
  const int n = c.find_node(node);
  for (size_t s = 0; s < c.network.switches.size(); ++s) {
    const auto& nodes = c.network.switches[s].nodes;
    if (std::find(nodes.begin(), nodes.end(), n) != nodes.end()) return static_cast<int>(s);
  }
  return -1;
}

}  // namespace

TEST_CASE("slurm.conf: the oracle example with its gres.conf", "[slurm_conf]") {
  Diagnostics w;
  const Cluster c = load_slurm_conf(src("tests/data/slurm/oracle-example/slurm.conf"), w);
  CHECK(w.all().empty());
  CHECK(c.name == "emutest");
  REQUIRE(c.nodes.size() == 4);
  REQUIRE(c.templates.size() == 1);
  const auto& t = c.templates[0];
  CHECK(t.name == "g[01-04]");
  CHECK(t.total_sockets() == 2);
  CHECK(t.numa_per_socket == 1);
  CHECK(t.cores() == 16);
  CHECK(t.cpus() == 16);
  CHECK(t.memory_mb == 64000);
  REQUIRE(t.gpus.size() == 4);
  for (int g = 0; g < 4; ++g) {
    CHECK(t.gpus[g].gres_type == "a100");
    CHECK(t.gpus[g].numa == (g < 2 ? 0 : 1));  // Cores=0-7 -> socket 0, Cores=8-15 -> socket 1
  }
  CHECK(t.nvlink.kind == gcsim::NvlinkKind::kNone);
  for (const auto& n : c.nodes) {
    CHECK(n.weight == 10);
    CHECK(n.partitions == std::vector<int>{0});
  }
  CHECK(c.nodes[2].name == "g03");
  REQUIRE(c.partitions.size() == 1);
  CHECK(c.partitions[0].name == "gpu");
  CHECK(c.partitions[0].is_default);
  CHECK(c.partitions[0].max_time == SimTime::infinite());
  CHECK(c.partitions[0].nodes == std::vector<int>{0, 1, 2, 3});
  CHECK(c.partitions[0].params.at("State") == "UP");
  CHECK(c.slurm_params.at("SchedulerType") == "sched/backfill");
  CHECK(c.slurm_params.at("SchedulerParameters") == "bf_interval=5,bf_resolution=60,bf_window=1440");
  CHECK(c.slurm_params.at("PriorityWeightAge") == "1000");
  CHECK(c.slurm_params.at("SelectTypeParameters") == "CR_Core_Memory");
  CHECK(c.slurm_params.count("NodeName") == 0);
  CHECK_FALSE(c.def_mem_per_cpu_mb.has_value());
  CHECK(c.network.kind == gcsim::NetworkSpec::Kind::kNone);
}

TEST_CASE("slurm.conf: configs/curie is the CEA-Curie log's machine", "[slurm_conf]") {
  // The SWF header of CEA-Curie-2011-2.1-cln: MaxProcs 93312 = 80640 thin + 11520 fat +
  // 1152 hybrid cores on 5040 + 360 + 144 nodes.
  Diagnostics w;
  const Cluster c = load_slurm_conf(src("configs/curie/slurm.conf"), w);
  CHECK(w.all().empty());
  CHECK(c.nodes.size() == 5544);
  CHECK(c.total_cores() == 93312);
  CHECK(c.total_gpus() == 288);
  REQUIRE(c.templates.size() == 3);
  std::map<std::string, int64_t> cores_by_kind;
  for (size_t n = 0; n < c.nodes.size(); ++n)
    cores_by_kind[c.nodes[n].name.substr(0, c.nodes[n].name.find_first_of("0123456789"))] += c.tmpl(n).cores();
  CHECK(cores_by_kind == std::map<std::string, int64_t>{{"fat", 11520}, {"hybrid", 1152}, {"thin", 80640}});
  const auto& hybrid = c.tmpl(c.find_node("hybrid001"));
  REQUIRE(hybrid.gpus.size() == 2);
  CHECK(hybrid.gpus[0].numa == 0);  // gres.conf Cores=0-3
  CHECK(hybrid.gpus[1].numa == 1);  // Cores=4-7
  // Every core of every node type can be allocated at DefMemPerCPU.
  REQUIRE(c.def_mem_per_cpu_mb.has_value());
  for (const auto& t : c.templates) CHECK(*c.def_mem_per_cpu_mb * t.cores() <= t.memory_mb);
  REQUIRE(c.partitions.size() == 1);
  CHECK(c.partitions[0].nodes.size() == 5544);
}

TEST_CASE("slurm.conf: 10000 nodes on the test suite's 3-level switch tree", "[slurm_conf]") {
  Diagnostics w;
  const Cluster c = load_slurm_conf(src("tests/data/slurm/tree-3level/slurm.conf"), w);
  // MemSpecLimit on the H100 line is the one key gcsim does not model.
  REQUIRE(w.all().size() == 1);
  CHECK(w.all()[0].severity == gcsim::Severity::kWarning);
  CHECK(w.all()[0].message == "parameter 'MemSpecLimit' is not modelled by gcsim");
  CHECK(w.all()[0].loc.line == 27);

  CHECK(c.name == "peta");
  REQUIRE(c.nodes.size() == 10000);
  REQUIRE(c.templates.size() == 2);
  CHECK(c.def_mem_per_cpu_mb == 3900);
  CHECK(c.def_mem_per_gpu_mb == 120000);
  CHECK(c.slurm_params.at("OverTimeLimit") == "5");
  CHECK(c.slurm_params.at("PriorityWeightTRES") == "GRES/gpu=500");
  CHECK(c.slurm_params.at("TopologyPlugin") == "topology/tree");
  CHECK(c.total_gpus() == 80000);

  const int a = c.find_node("peta10000");
  const int h = c.find_node("peta19999");
  REQUIRE(a == 0);
  REQUIRE(h == 9999);
  const auto& ta = c.tmpl(a);
  const auto& th = c.tmpl(h);
  CHECK(ta.name == "peta[10000-14999]");
  CHECK(th.name == "peta[15000-19999]");
  CHECK(c.nodes[4999].template_index == c.nodes[a].template_index);
  CHECK(c.nodes[5000].template_index == c.nodes[h].template_index);
  // NodeName=DEFAULT gave both lines Boards, SocketsPerBoard and ThreadsPerCore.
  CHECK(ta.total_sockets() == 2);
  CHECK(ta.cores_per_socket() == 64);
  CHECK(ta.threads_per_core == 2);
  CHECK(ta.cpus() == 256);
  CHECK(ta.memory_mb == 1031000);
  CHECK(th.cpus() == 224);
  CHECK(th.cores_per_socket() == 56);
  CHECK(th.memory_mb == 2063000);

  // A100: Cores= of a NUMA quarter (48-63, 16-31, 112-127, 80-95) -> the socket holding it.
  REQUIRE(ta.gpus.size() == 8);
  REQUIRE(th.gpus.size() == 8);
  for (int g = 0; g < 8; ++g) {
    CHECK(ta.gpus[g].gres_type == "a100");
    CHECK(ta.gpus[g].numa == (g < 4 ? 0 : 1));
    CHECK(th.gpus[g].gres_type == "h100");
    CHECK(th.gpus[g].numa == (g < 4 ? 0 : 1));
  }
  CHECK(ta.nvlink.kind == gcsim::NvlinkKind::kPairs);
  CHECK(ta.nvlink.pairs.size() == 28);  // all to all
  CHECK(ta.nvlink.pairs[0].links == 12);
  REQUIRE(th.nvlink.pairs.size() == 4);  // bridged pairs 0-1, 2-3, 4-5, 6-7
  for (int p = 0; p < 4; ++p) {
    CHECK(th.nvlink.pairs[p].a == 2 * p);
    CHECK(th.nvlink.pairs[p].b == 2 * p + 1);
    CHECK(th.nvlink.pairs[p].links == 6);
  }

  CHECK(c.nodes[a].weight == 10);
  CHECK(c.nodes[h].weight == 20);
  CHECK(c.nodes[h].features == std::vector<std::string>{"h100", "ib"});

  // Partitions come from the Included partitions.conf, with a PartitionName=DEFAULT line.
  REQUIRE(c.partitions.size() == 2);
  const auto& gpu = c.partitions[0];
  const auto& prio = c.partitions[1];
  CHECK(gpu.name == "gpu");
  CHECK(gpu.is_default);
  CHECK(gpu.nodes.size() == 10000);
  CHECK(gpu.max_time == SimTime::seconds(2 * 86400));
  REQUIRE(gpu.default_time.has_value());
  CHECK(*gpu.default_time == SimTime::seconds(3600));
  CHECK(gpu.priority_tier == 1);
  CHECK(gpu.params.at("OverSubscribe") == "NO");
  CHECK(gpu.params.at("MaxNodes") == "512");
  CHECK(prio.name == "h100-prio");
  CHECK_FALSE(prio.is_default);
  CHECK(prio.priority_tier == 10);
  CHECK(prio.max_time == SimTime::seconds(12 * 3600));
  CHECK_FALSE(prio.default_time.has_value());
  REQUIRE(prio.nodes.size() == 5000);
  CHECK(prio.nodes.front() == 5000);
  CHECK(prio.params.at("DefMemPerCPU") == "8000");
  CHECK(prio.params.at("TRESBillingWeights") == "CPU=1.0,Mem=0.25G,GRES/gpu=16.0");
  CHECK(prio.params.at("State") == "UP");  // from PartitionName=DEFAULT
  CHECK(c.nodes[a].partitions == std::vector<int>{0});
  CHECK(c.nodes[h].partitions == std::vector<int>{0, 1});
  CHECK(c.find_partition("h100-prio") == 1);

  // The network: root, im[0-1], grp[10-35], leaf[100-599].
  CHECK(c.network.kind == gcsim::NetworkSpec::Kind::kTree);
  REQUIRE(c.network.switches.size() == 1 + 2 + 26 + 500);
  CHECK(c.network.switches[0].name == "root");
  CHECK(c.network.switches[0].children == std::vector<std::string>{"im0", "im1"});
  CHECK(c.network.switches[0].nodes.empty());
  const auto name_of_leaf = [&](const std::string& node) {
    const int s = leaf_of(c, node);
    return s < 0 ? std::string("none") : c.network.switches[s].name;
  };
  CHECK(name_of_leaf("peta10000") == "leaf100");
  CHECK(name_of_leaf("peta10019") == "leaf100");
  CHECK(name_of_leaf("peta10020") == "leaf101");
  CHECK(name_of_leaf("peta14999") == "leaf349");
  CHECK(name_of_leaf("peta15000") == "leaf350");
  CHECK(name_of_leaf("peta19999") == "leaf599");
  const auto& leaf = c.network.switches[leaf_of(c, "peta15000")];
  CHECK(leaf.nodes.size() == 20);
  CHECK(leaf.children.empty());
}

TEST_CASE("slurm.conf: continuations, comments, quotes, case-insensitive keys, DEFAULT lines", "[slurm_conf]") {
  const std::string path = write_case("lexer", {{"slurm.conf",
                                                 "clustername=lex   # trailing comment\n"
                                                 "nodename=DEFAULT realmemory=4000 \\\n"
                                                 "   threadspercore=2\n"
                                                 "NODENAME=c[1-3] cpus=8 feature=\"big, fast\"\n"
                                                 "NodeName=c4 CPUs=6 RealMemory=2000 Weight=7\n"
                                                 "NodeName=c5\n"
                                                 "partitionname=all nodes=ALL maxtime=30 default=yes\n"
                                                 "FooBar=1 PriorityWeightAge=100\n"
                                                 "NodeName=c6 Bogus=1 FooBar=2\n"
                                                 "Desc=\"has a # inside\"\n"}});
  Diagnostics w;
  const Cluster c = load_slurm_conf(path, w);
  CHECK(c.name == "lex");
  REQUIRE(c.nodes.size() == 6);
  // CPUs=8 without a socket layout: one socket of CPUs/ThreadsPerCore cores.
  const auto& t = c.tmpl(0);
  CHECK(t.total_sockets() == 1);
  CHECK(t.cores() == 4);
  CHECK(t.threads_per_core == 2);
  CHECK(t.memory_mb == 4000);
  CHECK(c.nodes[0].features == std::vector<std::string>{"big", "fast"});
  CHECK(c.tmpl(3).cores() == 3);
  CHECK(c.tmpl(3).memory_mb == 2000);
  CHECK(c.nodes[3].weight == 7);
  CHECK(c.nodes[0].weight == 1);
  // c5 and c6: only the defaults, so one core of two threads each, and one template.
  CHECK(c.tmpl(4).cpus() == 2);
  CHECK(c.templates.size() == 3);
  CHECK(c.tmpl(5).name == "c[5-6]");
  REQUIRE(c.partitions.size() == 1);
  CHECK(c.partitions[0].max_time == SimTime::seconds(1800));
  CHECK(c.partitions[0].is_default);
  CHECK(c.slurm_params.at("PriorityWeightAge") == "100");
  CHECK(c.slurm_params.at("Desc") == "has a # inside");
  // One warning per unknown key name, at its first use.
  std::vector<std::string> msgs;
  for (const auto& d : w.all()) msgs.push_back(d.str().substr(path.size()));
  CHECK(msgs == std::vector<std::string>{":8:1: warning: parameter 'FooBar' is not modelled by gcsim",
                                         ":9:13: warning: parameter 'Bogus' is not modelled by gcsim",
                                         ":10:1: warning: parameter 'Desc' is not modelled by gcsim"});
}

TEST_CASE("slurm.conf: Gres without gres.conf and with AutoDetect", "[slurm_conf]") {
  const std::string conf =
      "NodeName=g[1-2] SocketsPerBoard=2 CoresPerSocket=4 Gres=gpu:a100:2,gpu:v100:1,mps:200\n"
      "PartitionName=p Nodes=g[1-2]\n";
  SECTION("no gres.conf") {
    Diagnostics w;
    const Cluster c = load_slurm_conf(write_case("nogres", {{"slurm.conf", conf}}), w);
    const auto& t = c.tmpl(0);
    REQUIRE(t.gpus.size() == 3);
    CHECK(t.gpus[0].gres_type == "a100");
    CHECK(t.gpus[2].gres_type == "v100");
    CHECK(t.memory_mb == 1);  // Slurm's default RealMemory
    REQUIRE(w.all().size() == 1);
    CHECK(w.all()[0].message == "GRES 'mps' is not modelled by gcsim");
    CHECK(c.default_partition() == 0);
  }
  SECTION("AutoDetect=nvml") {
    Diagnostics w;
    const Cluster c = load_slurm_conf(
        write_case("autodetect", {{"slurm.conf", conf},
                                  {"gres.conf", "AutoDetect=nvml\nNodeName=g1 Name=gpu Type=v100 File=/dev/nvidia2 Cores=4-7\n"}}),
        w);
    REQUIRE(c.tmpl(0).gpus.size() == 3);
    // g1's V100 is described (socket 1) and listed first; its A100s come from Gres= counts.
    CHECK(c.tmpl(0).gpus[0].gres_type == "v100");
    CHECK(c.tmpl(0).gpus[0].numa == 1);
    CHECK(c.tmpl(1).gpus[0].gres_type == "a100");
    CHECK(c.templates.size() == 2);
    bool warned = false;
    for (const auto& d : w.all()) warned = warned || d.message.rfind("AutoDetect=nvml: gcsim cannot", 0) == 0;
    CHECK(warned);
  }
}

TEST_CASE("slurm.conf: invalid corpus gives the exact diagnostics", "[slurm_conf][invalid]") {
  const fs::path dir = src("tests/inputs/invalid/slurm");
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory()) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  CHECK(cases.size() >= 6);
  for (const auto& d : cases) {
    DYNAMIC_SECTION(d.filename().string()) {
      const std::string expected = slurp((d / "expected").string());
      REQUIRE_FALSE(expected.empty());
      CHECK(load_errors((d / "slurm.conf").string()) == expected);
    }
  }
}
