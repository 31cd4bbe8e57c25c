// nvidia-smi topo -m importer: every fixture parses with the expected columns, link
// classes and affinities; the derived NodeTemplate gives back every cell; layouts
// (tabs, mlx5 columns, colour codes, old drivers) and errors with line:col.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "sim/cluster/import_nvidia_smi.hpp"
#include "sim/core/input_file.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;

namespace {

const char* const kDir = "tests/data/nvidia-smi/";

std::string fixture(const std::string& name) { return test::src(std::string(kDir) + name); }

const std::vector<std::string> kAllFixtures = {
    "hivedscheduler-4xK80-node.topo-m.txt",
    "ml-engineering-8xA100-nv12.topo-m.txt",
    "ml-engineering-8xH100-nv18.topo-m.txt",
    "nccl-topo/2x-h100-pcie-nvlink-bridge.txt",
    "nccl-topo/autodl-2x-rtx2080ti-pix.txt",
    "nccl-topo/b200-flapping-airplanes.txt",
    "nccl-topo/desktop-2x-rtx2080ti-nvlink.txt",
    "nccl-topo/dgx-a100.txt",
    "nccl-topo/dgx-b200-use3a-ss.txt",
    "nccl-topo/gcp-a3-megagpu-8g.txt",
    "nccl-topo/h100-sxm-together-gpu-dp.txt",
    "nccl-topo/hgx-a100-4x-cx6-nccltests100.txt",
    "nccl-topo/hgx-a100-80gb-dkh.txt",
    "nccl-topo/hgx-a100-80gb-thanos.txt",
    "nccl-topo/hgx-h100-sxm-nccl1455.txt",
};

/// The link class two devices of a NodeTemplate have under the documented rule.
/// Devices: GPUs first, then NICs.
std::string link_class(const NodeTemplate& t, int a, int b) {
  const int g = static_cast<int>(t.gpus.size());
  if (a == b) return "X";
  if (a < g && b < g) {
    if (t.nvlink.kind == NvlinkKind::kNvswitch) return "NV" + std::to_string(t.nvlink.links_per_gpu);
    for (const auto& p : t.nvlink.pairs)
      if ((p.a == a && p.b == b) || (p.a == b && p.b == a)) return "NV" + std::to_string(p.links);
  }
  auto sw = [&](int i) { return i < g ? t.gpus[i].pcie_switch : t.nics[i - g].pcie_switch; };
  auto numa = [&](int i) { return i < g ? t.gpus[i].numa : t.nics[i - g].numa; };
  const int sa = sw(a), sb = sw(b);
  if (sa >= 0 && sa == sb) return "PIX";
  if (numa(a) != numa(b)) return "SYS";
  if (sa >= 0 && sb >= 0) {
    std::set<int> up;
    for (int s = sa; s >= 0; s = t.pcie_switches[s].parent) up.insert(s);
    for (int s = sb; s >= 0; s = t.pcie_switches[s].parent)
      if (up.count(s)) return "PXB";
    if (t.pcie_switches[sa].host_bridge >= 0 && t.pcie_switches[sa].host_bridge == t.pcie_switches[sb].host_bridge)
      return "PHB";
  }
  return "NODE";
}

/// Sets of device names sharing a PCIe switch (only switches with 2+ devices).
std::set<std::set<std::string>> pix_groups(const NvidiaSmiMatrix& m, const NodeTemplate& t) {
  std::map<int, std::set<std::string>> by;
  for (size_t i = 0; i < t.gpus.size(); ++i)
    if (t.gpus[i].pcie_switch >= 0) by[t.gpus[i].pcie_switch].insert(m.gpus[i]);
  for (size_t i = 0; i < t.nics.size(); ++i)
    if (t.nics[i].pcie_switch >= 0) by[t.nics[i].pcie_switch].insert(m.nics[i]);
  std::set<std::set<std::string>> out;
  for (auto& [k, v] : by)
    if (v.size() >= 2) out.insert(v);
  return out;
}

/// Every off-diagonal GPU-GPU cell, when they are all the same; "" otherwise.
std::string all_gpu_pairs(const NvidiaSmiMatrix& m) {
  std::set<std::string> v;
  for (size_t a = 0; a < m.gpus.size(); ++a)
    for (size_t b = 0; b < m.gpus.size(); ++b)
      if (a != b) v.insert(m.cells[a][b]);
  return v.size() == 1 ? *v.begin() : "";
}

std::vector<std::string> rep(const std::string& s, int n) { return std::vector<std::string>(n, s); }
std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

struct Expect {
  std::string file;
  size_t gpus, nics;
  std::string gpu_pairs;                   // the class of every GPU pair
  std::vector<std::string> numa_affinity;  // as printed; empty = no column
  std::vector<std::string> cpu_affinity;
  std::set<std::set<std::string>> pix;     // devices sharing a switch
  NvlinkKind kind;
  int numa_domains, cores_per_numa, threads;
  std::vector<int> gpu_numa;               // derived NUMA index per GPU
};

std::vector<Expect> expectations() {
  const auto na8 = rep("N/A", 8);
  const auto half = cat(rep("0", 4), rep("1", 4));
  const std::vector<int> n0(8, 0), n01 = {0, 0, 0, 0, 1, 1, 1, 1};
  return {
      {"hivedscheduler-4xK80-node.topo-m.txt", 4, 0, "NODE", {}, rep("0-11", 4), {}, NvlinkKind::kNone, 1, 12, 1,
       {0, 0, 0, 0}},
      {"ml-engineering-8xA100-nv12.topo-m.txt", 8, 0, "NV12", half, cat(rep("0-23", 4), rep("24-47", 4)), {},
       NvlinkKind::kNvswitch, 2, 24, 1, n01},
      {"ml-engineering-8xH100-nv18.topo-m.txt", 8, 0, "NV18", half, cat(rep("0-51", 4), rep("52-103", 4)), {},
       NvlinkKind::kNvswitch, 2, 52, 1, n01},
      {"nccl-topo/2x-h100-pcie-nvlink-bridge.txt", 2, 0, "NV12", rep("N/A", 2), rep("N/A", 2), {}, NvlinkKind::kPairs,
       1, 1, 1, {0, 0}},
      {"nccl-topo/autodl-2x-rtx2080ti-pix.txt", 2, 0, "PIX", rep("1", 2), rep("24-47,72-95", 2), {{"GPU0", "GPU1"}},
       NvlinkKind::kNone, 2, 24, 2, {1, 1}},
      {"nccl-topo/b200-flapping-airplanes.txt", 8, 12, "NV18", na8, na8,
       {{"GPU0", "NIC0"}, {"GPU1", "NIC1"}, {"GPU2", "NIC2"}, {"GPU3", "NIC3"}, {"GPU4", "NIC4"}, {"GPU5", "NIC5"},
        {"GPU6", "NIC6"}, {"GPU7", "NIC7"}, {"NIC8", "NIC9"}, {"NIC10", "NIC11"}},
       NvlinkKind::kNvswitch, 2, 1, 1, n01},
      {"nccl-topo/desktop-2x-rtx2080ti-nvlink.txt", 2, 0, "NV2", rep("0", 2), rep("0-5", 2), {}, NvlinkKind::kPairs,
       1, 6, 1, {0, 0}},
      {"nccl-topo/dgx-a100.txt", 8, 10, "NV12", {"3", "3", "1", "1", "7", "7", "5", "5"},
       {"48-63,176-191", "48-63,176-191", "16-31,144-159", "16-31,144-159", "112-127,240-255", "112-127,240-255",
        "80-95,208-223", "80-95,208-223"},
       {{"NIC8", "NIC9"}}, NvlinkKind::kNvswitch, 8, 16, 2, {3, 3, 1, 1, 7, 7, 5, 5}},
      {"nccl-topo/dgx-b200-use3a-ss.txt", 8, 8, "NV18", half, cat(rep("0-55,112-167", 4), rep("56-111,168-223", 4)),
       {{"GPU0", "NIC0"}, {"GPU1", "NIC1"}, {"GPU2", "NIC2"}, {"GPU3", "NIC3"}, {"GPU4", "NIC4"}, {"GPU5", "NIC5"},
        {"GPU6", "NIC6"}, {"GPU7", "NIC7"}},
       NvlinkKind::kNvswitch, 2, 56, 2, n01},
      {"nccl-topo/gcp-a3-megagpu-8g.txt", 8, 8, "NV18", half, cat(rep("0-51,104-155", 4), rep("52-103,156-207", 4)),
       {{"GPU0", "GPU1", "NIC0", "NIC1"}, {"GPU2", "GPU3", "NIC2", "NIC3"}, {"GPU4", "GPU5", "NIC4", "NIC5"},
        {"GPU6", "GPU7", "NIC6", "NIC7"}},
       NvlinkKind::kNvswitch, 2, 52, 2, n01},
      {"nccl-topo/h100-sxm-together-gpu-dp.txt", 8, 0, "NV18", na8, na8, {}, NvlinkKind::kNvswitch, 1, 1, 1, n0},
      {"nccl-topo/hgx-a100-4x-cx6-nccltests100.txt", 8, 4, "NV12", half,
       cat(rep("0-31,64-95", 4), rep("32-63,96-127", 4)), {}, NvlinkKind::kNvswitch, 2, 32, 2, n01},
      {"nccl-topo/hgx-a100-80gb-dkh.txt", 8, 0, "NV12", na8, na8, {}, NvlinkKind::kNvswitch, 1, 1, 1, n0},
      {"nccl-topo/hgx-a100-80gb-thanos.txt", 8, 0, "NV12", na8, na8, {}, NvlinkKind::kNvswitch, 1, 1, 1, n0},
      {"nccl-topo/hgx-h100-sxm-nccl1455.txt", 8, 0, "NV18", na8, na8, {}, NvlinkKind::kNvswitch, 1, 1, 1, n0},
  };
}

}  // namespace

TEST_CASE("nvidia-smi: every fixture parses with the expected counts and affinities", "[nvidia-smi]") {
  const auto all = expectations();
  REQUIRE(all.size() == kAllFixtures.size());
  for (const auto& e : all) {
    INFO(e.file);
    const NvidiaSmiMatrix m = read_nvidia_smi_topo(fixture(e.file));
    CHECK(m.gpus.size() == e.gpus);
    CHECK(m.nics.size() == e.nics);
    REQUIRE(m.cells.size() == e.gpus + e.nics);
    CHECK(all_gpu_pairs(m) == e.gpu_pairs);
    CHECK(m.numa_affinity == e.numa_affinity);
    CHECK(m.cpu_affinity == e.cpu_affinity);
    Diagnostics w;
    const NodeTemplate t = node_from_nvidia_smi(m, {}, w);
    CHECK(pix_groups(m, t) == e.pix);
    CHECK(t.nvlink.kind == e.kind);
    CHECK(t.numa_domains() == e.numa_domains);
    CHECK(t.cores_per_numa == e.cores_per_numa);
    CHECK(t.threads_per_core == e.threads);
    std::vector<int> numa;
    for (const auto& g : t.gpus) numa.push_back(g.numa);
    CHECK(numa == e.gpu_numa);
    CHECK(t.gpus.size() == e.gpus);
    CHECK(t.nics.size() == e.nics);
  }
}

TEST_CASE("nvidia-smi: the derived NodeTemplate reproduces every cell of every fixture", "[nvidia-smi]") {
  for (const auto& f : kAllFixtures) {
    INFO(f);
    const NvidiaSmiMatrix m = read_nvidia_smi_topo(fixture(f));
    Diagnostics w;
    const NodeTemplate t = node_from_nvidia_smi(m, {}, w);
    for (const auto& d : w.all()) CHECK(d.message.find("not consistent") == std::string::npos);
    const int n = static_cast<int>(m.devices());
    int checked = 0;
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b) {
        INFO(m.device_name(a) << " to " << m.device_name(b));
        CHECK(link_class(t, a, b) == m.cells[a][b]);
        ++checked;
      }
    CHECK(checked == n * n);
  }
}

TEST_CASE("nvidia-smi: DGX A100 details: NICs and NV12 switch and NPS4 CPU numbering", "[nvidia-smi]") {
  const NvidiaSmiMatrix m = read_nvidia_smi_topo(fixture("nccl-topo/dgx-a100.txt"));
  CHECK(m.nic_legend.size() == 10);
  CHECK(m.nic_legend.at("NIC9") == "mlx5_9");
  CHECK(m.cells[8][16] == "SYS");   // GPU0 to NIC8
  CHECK(m.cells[0][8] == "PXB");    // GPU0 to NIC0
  CHECK(m.cells[16][17] == "PIX");  // NIC8 to NIC9
  NvidiaSmiOptions o;
  o.gpu_model = "NVIDIA A100-SXM4-80GB";
  o.sockets = 2;
  o.nic_bandwidth_bps = 200e9;
  Diagnostics w;
  const NodeTemplate t = node_from_nvidia_smi(m, o, w);
  CHECK(t.nvlink.kind == NvlinkKind::kNvswitch);
  CHECK(t.nvlink.links_per_gpu == 12);
  CHECK(t.nvlink.link_bandwidth_bps == Approx(200e9));
  CHECK(t.sockets == 2);
  CHECK(t.numa_per_socket == 4);
  CHECK(t.cores() == 128);
  CHECK(t.cpus() == 256);
  CHECK(t.gpus[0].gres_type == "nvidia_a100-sxm4-80gb");
  CHECK(t.gpus[0].memory_bytes == (int64_t{80} << 30));
  CHECK(t.nics[0].name == "mlx5_0");
  CHECK(t.nics[0].numa == 3);
  CHECK(t.nics[8].numa == 0);  // the storage pair: SYS to every GPU, on a NUMA domain no GPU uses
  CHECK(t.nics[0].bandwidth_bps == Approx(200e9));
  // GPU0/GPU1/NIC0/NIC1: four PXB devices, one leaf switch each under a common parent.
  const int s0 = t.gpus[0].pcie_switch, s1 = t.gpus[1].pcie_switch;
  REQUIRE(s0 >= 0);
  REQUIRE(s1 >= 0);
  CHECK(s0 != s1);
  CHECK(t.pcie_switches[s0].parent >= 0);
  CHECK(t.pcie_switches[s0].parent == t.pcie_switches[s1].parent);
  CHECK(t.pcie_switches[s0].levels == 1);
  // Slurm core 48 (NUMA 3) is OS CPU 48, its sibling 176.
  REQUIRE(t.cpu_os_ids.size() == 256);
  CHECK(t.cpu_os_ids[48 * 2] == 48);
  CHECK(t.cpu_os_ids[48 * 2 + 1] == 176);
  CHECK(t.numa_of_core(48) == 3);
}

TEST_CASE("nvidia-smi: NVSwitch needs the generation's full link count", "[nvidia-smi]") {
  const NvidiaSmiMatrix a100 = read_nvidia_smi_topo(fixture("ml-engineering-8xA100-nv12.topo-m.txt"));
  Diagnostics w;
  NvidiaSmiOptions o;
  o.gpu_model = "NVIDIA H100 80GB HBM3";  // NV12 on H100 is not its full 18 links
  const NodeTemplate t = node_from_nvidia_smi(a100, o, w);
  CHECK(t.nvlink.kind == NvlinkKind::kPairs);
  CHECK(t.nvlink.pairs.size() == 28);
  CHECK(t.nvlink.pairs[0].links == 12);
  const NvidiaSmiMatrix bridge = read_nvidia_smi_topo(fixture("nccl-topo/2x-h100-pcie-nvlink-bridge.txt"));
  const NodeTemplate b = node_from_nvidia_smi(bridge, {}, w);
  REQUIRE(b.nvlink.pairs.size() == 1);
  CHECK(b.nvlink.pairs[0].a == 0);
  CHECK(b.nvlink.pairs[0].b == 1);
  CHECK(b.nvlink.pairs[0].links == 12);
  const NvidiaSmiMatrix h100 = read_nvidia_smi_topo(fixture("ml-engineering-8xH100-nv18.topo-m.txt"));
  const NodeTemplate h = node_from_nvidia_smi(h100, {}, w);
  CHECK(h.nvlink.kind == NvlinkKind::kNvswitch);
  CHECK(h.nvlink.links_per_gpu == 18);
}

TEST_CASE("nvidia-smi: tab-separated output with mlx5 columns and colour codes", "[nvidia-smi]") {
  // Old-driver layout: NICs named by device, SOC for SYS, no NIC legend, escape codes.
  const std::string text =
      "$ nvidia-smi topo -m\n"
      "\t\x1b[4mGPU0\tGPU1\tGPU2\tmlx5_0\tCPU Affinity\x1b[0m\n"
      "GPU0\t X \tPHB\tSOC\tPHB\t0-9,20-29\n"
      "GPU1\tPHB\t X \tSOC\tPHB\t0-9,20-29\n"
      "GPU2\tSOC\tSOC\t X \tSOC\t10-19,30-39\n"
      "mlx5_0\tPHB\tPHB\tSOC\t X \t\n"
      "\n"
      "Legend:\n"
      "  X   = Self\n";
  const NvidiaSmiMatrix m = parse_nvidia_smi_topo(text, "paste.txt");
  CHECK(m.header_line == 2);
  REQUIRE(m.gpus.size() == 3);
  REQUIRE(m.nics == std::vector<std::string>{"mlx5_0"});
  CHECK(m.cells[0][2] == "SYS");
  CHECK(m.cells[3][0] == "PHB");
  CHECK(m.numa_affinity.empty());
  CHECK(m.cpu_affinity[2] == "10-19,30-39");
  Diagnostics w;
  const NodeTemplate t = node_from_nvidia_smi(m, {}, w);
  CHECK(t.numa_domains() == 2);
  CHECK(t.cores_per_numa == 10);
  CHECK(t.threads_per_core == 2);
  CHECK(t.gpus[2].numa == 1);
  CHECK(t.nics[0].name == "mlx5_0");
  CHECK(t.nics[0].numa == 0);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) CHECK(link_class(t, a, b) == m.cells[a][b]);
}

TEST_CASE("nvidia-smi: GPU NUMA ID column and NIC legend", "[nvidia-smi]") {
  const std::string text =
      "        GPU0    GPU1    NIC0    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
      "GPU0     X      NV18    NODE    0-71            0               2\n"
      "GPU1    NV18     X      SYS     72-143          1               10\n"
      "NIC0    NODE    SYS      X\n"
      "\n"
      "NIC Legend:\n"
      "\n"
      "  NIC0: mlx5_0\n";
  const NvidiaSmiMatrix m = parse_nvidia_smi_topo(text, "gh200.txt");
  CHECK(m.gpu_numa_id == std::vector<std::string>{"2", "10"});
  CHECK(m.nic_legend.at("NIC0") == "mlx5_0");
  Diagnostics w;
  NvidiaSmiOptions o;
  o.gpu_model = "NVIDIA GH200 480GB";
  const NodeTemplate t = node_from_nvidia_smi(m, o, w);
  CHECK(t.nvlink.kind == NvlinkKind::kPairs);  // two GPUs: a pair, not a switch
  CHECK(t.nics[0].name == "mlx5_0");
  CHECK(t.nics[0].numa == 0);
  CHECK(t.cores_per_numa == 72);
}

TEST_CASE("nvidia-smi: malformed matrices are refused with line and column", "[nvidia-smi]") {
  auto error_of = [](const std::string& text) {
    try {
      (void)parse_nvidia_smi_topo(text, "bad.txt");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of("hello\n") ==
        "bad.txt: error: no nvidia-smi topo -m matrix found (expected a header line starting with GPU0)");
  CHECK(error_of("  GPU0 GPU1\nGPU0 X NV4\nGPU1 NV4 XX\n") ==
        "bad.txt:3:10: error: unknown link class 'XX' (expected X, NV#, PIX, PXB, PHB, NODE or SYS)");
  CHECK(error_of("  GPU0 GPU1\nGPU0 X PIX\nGPU1 PXB X\n") ==
        "bad.txt:3:6: error: matrix is not symmetric: GPU1 to GPU0 is PXB but GPU0 to GPU1 is PIX");
  CHECK(error_of("  GPU0 GPU1\nGPU0 X PIX\n") == "bad.txt:1:8: error: no row for column 'GPU1'");
  CHECK(error_of("  GPU0 GPU1\nGPU0 X\n") == "bad.txt:2: error: row 'GPU0' has 1 cells, expected 2");
  CHECK(error_of("  GPU0 GPU1\nGPU0 X PIX\nGPU2 PIX X\n") ==
        "bad.txt:3:1: error: row 'GPU2' is not one of the header's devices");
  CHECK(error_of("  GPU0 GPU1 CPU Affinity\nGPU0 X PIX 0-3 7\nGPU1 PIX X 0-3\n") ==
        "bad.txt:2:16: error: unexpected value '7' after the last column");
  CHECK(error_of("  GPU0 GPU1 CPU Affinity\nGPU0 PIX PIX 0-3\nGPU1 PIX X 0-3\n") ==
        "bad.txt:2:6: error: the diagonal cell of 'GPU0' must be X");
}

TEST_CASE("nvidia-smi: CPU list helpers", "[nvidia-smi]") {
  CHECK(parse_cpu_list("0-3,8") == std::vector<int>{0, 1, 2, 3, 8});
  CHECK_FALSE(parse_cpu_list("N/A"));
  CHECK_FALSE(parse_cpu_list("3-1"));
  CHECK_FALSE(parse_cpu_list("a"));
  const CpuLayout l = infer_cpu_layout({*parse_cpu_list("0-31,64-95"), *parse_cpu_list("32-63,96-127")});
  REQUIRE(l.ok);
  CHECK(l.threads_per_core == 2);
  CHECK(l.cores_per_numa == 32);
  CHECK(l.total_cores == 64);
  CHECK_FALSE(infer_cpu_layout({*parse_cpu_list("0-7"), *parse_cpu_list("8-11")}).ok);
  CHECK(cpu_os_ids_for(l, 64)[1] == 64);
}

TEST_CASE("derived PCIe switches run at the GPU product's generation", "[nvidia-smi]") {
  // A pasted matrix says nothing about PCIe generations: a Turing card sits on Gen3, a
  // Hopper one on Gen5, others on Gen4 (as NCCL's own tables assume), unless told.
  const std::string path = test::src("tests/data/nccl/topo/autodl-2x-rtx2080ti-pix.txt");
  const NvidiaSmiMatrix m = parse_nvidia_smi_topo(read_input_file(path), path);
  Diagnostics w;
  NvidiaSmiOptions o;
  o.gpu_model = "NVIDIA GeForce RTX 2080 Ti";
  const NodeTemplate turing = node_from_nvidia_smi(m, o, w);
  REQUIRE_FALSE(turing.pcie_switches.empty());
  for (const auto& s : turing.pcie_switches) REQUIRE(s.gen == 3);
  o.gpu_model = "NVIDIA H100 80GB HBM3";
  for (const auto& s : node_from_nvidia_smi(m, o, w).pcie_switches) REQUIRE(s.gen == 5);
  o.pcie_gen = 4;
  for (const auto& s : node_from_nvidia_smi(m, o, w).pcie_switches) REQUIRE(s.gen == 4);
}
