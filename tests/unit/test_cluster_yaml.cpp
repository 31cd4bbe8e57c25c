#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <set>

#include "sim/cluster/cluster_yaml.hpp"
#include "sim/core/input_file.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;
namespace fs = std::filesystem;

namespace {

std::vector<int> gpu_numas(const NodeTemplate& t) {
  std::vector<int> out;
  for (const auto& g : t.gpus) out.push_back(g.numa);
  return out;
}

const NicSpec* find_nic(const NodeTemplate& t, const std::string& name) {
  for (const auto& n : t.nics)
    if (n.name == name) return &n;
  return nullptr;
}

/// The diagnostics a text produces, formatted; "" when it loads.
std::string diagnostics_of(const std::string& text, const std::string& path = "x.yaml") {
  try {
    (void)parse_cluster_yaml(text, path);
  } catch (const InputError& e) {
    return e.diagnostics().format();
  }
  return "";
}

const char* kMinimal = R"(schema_version: 1
name: t
node_templates:
  small:
    sockets: 1
    cores_per_numa: 8
    memory: 64GiB
nodes:
  - {names: "n[1-4]", template: small}
partitions:
  - {name: p, nodes: ALL}
)";

}  // namespace

TEST_CASE("every config in configs/ loads", "[cluster_yaml]") {
  size_t n = 0;
  for (const auto& entry : fs::directory_iterator(test::src("configs"))) {
    if (entry.path().extension() != ".yaml") continue;
    INFO(entry.path().string());
    Cluster c;
    REQUIRE_NOTHROW(c = load_cluster_yaml(entry.path().string()));
    CHECK(c.source == entry.path().string());
    CHECK(!c.nodes.empty());
    CHECK(!c.partitions.empty());
    CHECK(c.find_node(c.nodes.front().name) == 0);
    ++n;
  }
  CHECK(n >= 4);
}

TEST_CASE("dgx-a100-pod matches the DGX A100 facts", "[cluster_yaml]") {
  const Cluster c = load_cluster_yaml(test::src("configs/dgx-a100-pod.yaml"));
  CHECK(c.name == "dgx-a100-pod");
  CHECK(c.schema_version == 1);
  REQUIRE(c.nodes.size() == 32);
  CHECK(c.nodes.front().name == "dgx001");
  CHECK(c.nodes.back().name == "dgx032");
  CHECK(c.find_node("dgx017") == 16);
  CHECK(c.find_node("dgx033") == -1);
  REQUIRE(c.templates.size() == 1);
  const NodeTemplate& t = c.templates[0];
  CHECK(t.total_sockets() == 2);
  CHECK(t.numa_domains() == 8);
  CHECK(t.cores() == 128);
  CHECK(t.cpus() == 256);
  CHECK(t.memory_mb == 2 * 1024 * 1024);
  CHECK(c.total_cores() == 32 * 128);
  CHECK(c.total_cpus() == 32 * 256);
  CHECK(c.total_gpus() == 32 * 8);
  CHECK(c.gpu_types() == std::vector<std::string>{"a100_80gb"});
  // nvidia-smi topo -m of a DGX A100 in NPS4.
  CHECK(gpu_numas(t) == std::vector<int>{3, 3, 1, 1, 7, 7, 5, 5});
  REQUIRE(t.pcie_switches.size() == 4);
  for (size_t i = 0; i < t.gpus.size(); ++i) {
    const auto& g = t.gpus[i];
    CHECK(g.memory_bytes == 80LL << 30);
    CHECK(g.model == "NVIDIA A100-SXM4-80GB");
    CHECK(g.pcie_switch == static_cast<int>(i / 2));
    CHECK(t.pcie_switches[g.pcie_switch].numa == g.numa);
    CHECK(t.pcie_switches[g.pcie_switch].gen == 4);
  }
  CHECK(t.nvlink.kind == NvlinkKind::kNvswitch);
  CHECK(t.nvlink.links_per_gpu == 12);
  CHECK(t.nvlink.link_bandwidth_bps == Approx(200e9));
  CHECK(t.nvlink.links_per_gpu * t.nvlink.link_bandwidth_bps / 8 * 2 == Approx(600e9));  // 600 GB/s
  REQUIRE(t.nics.size() == 10);
  for (int i = 0; i < 8; ++i) {
    const NicSpec* nic = find_nic(t, "mlx5_" + std::to_string(i));
    REQUIRE(nic);
    CHECK(nic->bandwidth_bps == Approx(200e9));
    CHECK(nic->pcie_switch == t.gpus[i].pcie_switch);  // PXB to GPU i
    CHECK(nic->numa == t.gpus[i].numa);
  }
  CHECK(find_nic(t, "mlx5_8")->pcie_switch == -1);
  REQUIRE(c.partitions.size() == 1);
  CHECK(c.partitions[0].name == "gpu");
  CHECK(c.partitions[0].is_default);
  CHECK(c.partitions[0].nodes.size() == 32);
  CHECK(c.partitions[0].max_time == SimTime::seconds(2 * 86400));
  CHECK(c.partitions[0].default_time == SimTime::seconds(3600));
  CHECK(c.default_partition() == 0);
  CHECK(c.nodes[5].partitions == std::vector<int>{0});
  CHECK(c.nodes[5].features == std::vector<std::string>{"a100", "a100_80gb", "nvswitch", "hdr"});
  CHECK(c.def_mem_per_cpu_mb == 8192);
  CHECK_FALSE(c.def_mem_per_gpu_mb);
  CHECK(c.network.kind == NetworkSpec::Kind::kFatTree);
  CHECK(c.network.nodes_per_leaf == 16);
  CHECK(c.network.link_bandwidth_bps == Approx(200e9));
  CHECK(c.network.uplink_bandwidth_bps == Approx(16 * 200e9));
  CHECK(c.network.hop_latency == SimTime::us(1));  // 130 ns, rounded up
}

TEST_CASE("dgx-h100-pod matches the DGX H100 facts", "[cluster_yaml]") {
  const Cluster c = load_cluster_yaml(test::src("configs/dgx-h100-pod.yaml"));
  REQUIRE(c.nodes.size() == 16);
  CHECK(c.nodes.front().name == "dgxh001");
  CHECK(c.nodes.back().name == "dgxh016");
  const NodeTemplate& t = c.templates.at(0);
  CHECK(t.numa_domains() == 2);
  CHECK(t.cores() == 112);
  CHECK(t.cpus() == 224);
  CHECK(t.memory_mb == 2 * 1024 * 1024);
  CHECK(c.total_gpus() == 128);
  CHECK(c.gpu_types() == std::vector<std::string>{"h100"});
  CHECK(gpu_numas(t) == std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(t.nvlink.kind == NvlinkKind::kNvswitch);
  CHECK(t.nvlink.links_per_gpu == 18);
  CHECK(t.nvlink.links_per_gpu * t.nvlink.link_bandwidth_bps / 8 * 2 == Approx(900e9));  // 900 GB/s
  CHECK(t.pcie_switches.size() == 8);
  REQUIRE(t.nics.size() == 12);
  // Each GPU shares its PCIe switch with exactly one compute NIC.
  const char* pxb_nic[] = {"mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"};
  for (int i = 0; i < 8; ++i) {
    INFO(i);
    const NicSpec* nic = find_nic(t, pxb_nic[i]);
    REQUIRE(nic);
    CHECK(nic->pcie_switch == t.gpus[i].pcie_switch);
    CHECK(nic->bandwidth_bps == Approx(400e9));
    CHECK(t.pcie_switches[nic->pcie_switch].gen == 5);
  }
  for (const char* s : {"mlx5_1", "mlx5_2", "mlx5_7", "mlx5_8"}) CHECK(find_nic(t, s)->pcie_switch == -1);
  CHECK(find_nic(t, "mlx5_7")->numa == 1);
  CHECK(c.def_mem_per_gpu_mb == 224 * 1024);
  CHECK(c.network.link_bandwidth_bps == Approx(400e9));
}

TEST_CASE("pcie-8gpu has two PCIe switches per socket and no NVLink", "[cluster_yaml]") {
  const Cluster c = load_cluster_yaml(test::src("configs/pcie-8gpu.yaml"));
  REQUIRE(c.nodes.size() == 16);
  const NodeTemplate& t = c.templates.at(0);
  CHECK(t.cores() == 80);
  CHECK(t.cpus() == 160);
  CHECK(t.memory_mb == 1024 * 1024);
  CHECK(t.nvlink.kind == NvlinkKind::kNone);
  CHECK(gpu_numas(t) == std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1});
  REQUIRE(t.pcie_switches.size() == 4);
  int per_switch[4] = {0, 0, 0, 0};
  for (const auto& g : t.gpus) ++per_switch[g.pcie_switch];
  for (int n : per_switch) CHECK(n == 2);
  CHECK(t.pcie_switches[1].numa == 0);
  CHECK(t.pcie_switches[2].numa == 1);
  REQUIRE(c.partitions.size() == 2);
  CHECK(c.partitions[1].name == "long");
  CHECK(c.partitions[1].nodes.size() == 8);
  CHECK(c.partitions[1].nodes.front() == 8);
  CHECK(c.nodes[8].partitions == std::vector<int>{0, 1});
  CHECK(c.nodes[0].partitions == std::vector<int>{0});
  CHECK(c.network.oversubscription == Approx(2.0));
  CHECK(c.network.uplink_bandwidth_bps == Approx(8 * 200e9 / 2));
}

TEST_CASE("mixed: two GPU kinds, CPU nodes, weights, tree network", "[cluster_yaml]") {
  const Cluster c = load_cluster_yaml(test::src("configs/mixed.yaml"));
  REQUIRE(c.nodes.size() == 32);
  REQUIRE(c.templates.size() == 3);
  CHECK(c.gpu_types() == std::vector<std::string>{"a100", "v100"});
  CHECK(c.total_gpus() == 8 * 4 + 8 * 4);
  CHECK(c.total_cores() == 8 * 40 + 8 * 128 + 16 * 64);
  const Node& v = c.nodes[c.find_node("v100-03")];
  const Node& a = c.nodes[c.find_node("a100-08")];
  const Node& cpu = c.nodes[c.find_node("cpu-016")];
  CHECK(cpu.weight < v.weight);
  CHECK(v.weight < a.weight);
  CHECK(cpu.features == std::vector<std::string>{"cpu", "icelake"});
  CHECK(c.tmpl(c.find_node("cpu-001")).gpus.empty());
  CHECK(gpu_numas(c.tmpl(c.find_node("v100-01"))) == std::vector<int>{0, 0, 1, 1});
  const auto& nv = c.tmpl(c.find_node("a100-01")).nvlink;
  CHECK(nv.kind == NvlinkKind::kPairs);
  REQUIRE(nv.pairs.size() == 6);
  for (const auto& p : nv.pairs) CHECK(p.links == 4);
  CHECK(c.tmpl(c.find_node("v100-01")).nvlink.pairs.at(0).links == 2);
  REQUIRE(c.partitions.size() == 2);
  CHECK(c.default_partition() == c.find_partition("cpu"));
  CHECK(c.partitions[c.find_partition("gpu")].nodes.size() == 16);
  CHECK(c.partitions[c.find_partition("gpu")].priority_tier == 2);
  CHECK(c.network.kind == NetworkSpec::Kind::kTree);
  REQUIRE(c.network.switches.size() == 4);
  CHECK(c.network.switches[2].nodes.size() == 16);
  CHECK(c.network.switches[3].children == std::vector<std::string>{"leaf1", "leaf2", "leaf3"});
  CHECK(c.network.switches[0].uplink_bandwidth_bps == Approx(800e9));
}

TEST_CASE("defaults of optional keys", "[cluster_yaml]") {
  const Cluster c = parse_cluster_yaml(kMinimal, "m.yaml");
  CHECK(c.source == "m.yaml");
  const NodeTemplate& t = c.templates.at(0);
  CHECK(t.boards == 1);
  CHECK(t.numa_per_socket == 1);
  CHECK(t.threads_per_core == 1);
  CHECK(t.nvlink.kind == NvlinkKind::kNone);
  CHECK(c.nodes[0].weight == 1);
  CHECK(c.nodes[0].features.empty());
  const Partition& p = c.partitions.at(0);
  CHECK_FALSE(p.is_default);
  CHECK(p.max_time.is_infinite());
  CHECK_FALSE(p.default_time);
  CHECK(p.priority_tier == 1);
  CHECK(c.default_partition() == 0);
  CHECK(c.network.kind == NetworkSpec::Kind::kNone);
}

TEST_CASE("GPU NUMA comes from its PCIe switch; NIC names expand", "[cluster_yaml]") {
  const Cluster c = parse_cluster_yaml(R"(schema_version: 1
name: t
node_templates:
  b:
    boards: 2
    sockets: 1
    numa_per_socket: 2
    cores_per_numa: 4
    memory: 1.5GiB
    pcie_switches: [{name: s, numa: 3}]
    gpus: [{type: g, memory: 1GiB, pcie_switch: s, count: 3}]
    nics: [{name: "ib[0-1]", speed: 100Gbps, pcie_switch: s, count: 2}]
nodes:
  - {names: "n1", template: b, features: "x, y"}
partitions:
  - {name: p, nodes: "n1", max_time: UNLIMITED}
)",
                                       "t.yaml");
  const NodeTemplate& t = c.templates[0];
  CHECK(t.total_sockets() == 2);
  CHECK(t.numa_domains() == 4);
  CHECK(t.memory_mb == 1536);
  CHECK(gpu_numas(t) == std::vector<int>{3, 3, 3});
  REQUIRE(t.nics.size() == 2);
  CHECK(t.nics[1].name == "ib1");
  CHECK(t.nics[1].numa == 3);
  CHECK(c.nodes[0].features == std::vector<std::string>{"x", "y"});
  CHECK(c.partitions[0].max_time.is_infinite());
}

TEST_CASE("diagnostics carry file:line:col and a suggestion", "[cluster_yaml]") {
  std::string text = kMinimal;
  text.replace(text.find("cores_per_numa"), 14, "cores_per_nuam");
  CHECK(diagnostics_of(text, "a.yaml") ==
        "a.yaml:6:5: error: unknown key 'cores_per_nuam' in node template (did you mean 'cores_per_numa'?)\n"
        "a.yaml:4:3: error: missing required key 'cores_per_numa' in node template 'small'\n");
  CHECK(diagnostics_of("", "e.yaml") == "e.yaml: error: empty cluster description\n");
  CHECK(diagnostics_of(kMinimal).empty());
}

TEST_CASE("invalid-input corpus matches its expected diagnostics", "[cluster_yaml]") {
  // Paths in the diagnostics are written as given, relative to the repo root.
  const std::string dir = "tests/inputs/invalid/cluster";
  std::vector<std::string> cases;
  for (const auto& entry : fs::directory_iterator(test::src(dir)))
    if (entry.path().extension() == ".yaml") cases.push_back(entry.path().filename().string());
  std::sort(cases.begin(), cases.end());
  CHECK(cases.size() >= 12);
  for (const auto& name : cases) {
    const std::string rel = dir + "/" + name;
    INFO(rel);
    const std::string expected_path = test::src(rel + ".expected");
    REQUIRE(fs::exists(expected_path));
    const std::string text = read_input_file(test::src(rel));
    const std::string got = diagnostics_of(text, rel);
    CHECK(!got.empty());
    CHECK(got == read_input_file(expected_path));
  }
}

TEST_CASE("load_cluster_yaml: missing file is an InputError", "[cluster_yaml]") {
  CHECK_THROWS_AS(load_cluster_yaml(test::src("configs/does-not-exist.yaml")), InputError);
}
