// Tests of the node/cluster topology graphs and their text views (nvidia-smi topo -m,
// gres.conf, slurm.conf), against a real DGX A100 `nvidia-smi topo -m` and the four configs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <sstream>

#include "sim/cluster/cluster_yaml.hpp"
#include "sim/cluster/topo_views.hpp"
#include "sim/cluster/topology.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;

namespace {

Cluster load(const std::string& name) { return load_cluster_yaml(test::src("configs/" + name + ".yaml")); }

const NodeTemplate& tmpl(const Cluster& c, const std::string& name) {
  for (const auto& t : c.templates)
    if (t.name == name) return t;
  throw std::runtime_error("no template " + name);
}

/// Tabs expanded to 8-column stops, as a terminal shows them.
std::string expand_tabs(const std::string& s) {
  std::string out;
  size_t col = 0;
  for (char ch : s) {
    if (ch == '\n') {
      out += ch;
      col = 0;
    } else if (ch == '\t') {
      do {
        out += ' ';
        ++col;
      } while (col % 8 != 0);
    } else {
      out += ch;
      ++col;
    }
  }
  return out;
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  for (std::string l; std::getline(is, l);) out.push_back(l);
  return out;
}

/// A matrix row split at tabs, each cell trimmed.
std::vector<std::string> tab_cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    auto b = cur.find_first_not_of(' '), e = cur.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? "" : cur.substr(b, e - b + 1));
    cur.clear();
  };
  for (char ch : line) {
    if (ch == '\t') flush();
    else cur += ch;
  }
  flush();
  return out;
}

std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream is(line);
  for (std::string w; is >> w;) out.push_back(w);
  return out;
}

/// The class cell of GPU/NIC row r, column c (0-based over GPUs then NICs) of our matrix.
std::string smi_cell(const std::string& smi, int r, int c) {
  auto ls = lines_of(smi);
  return tab_cells(ls.at(static_cast<size_t>(r + 1))).at(static_cast<size_t>(c + 1));
}

// `nvidia-smi topo -m` of a real NVIDIA DGX A100 (2x EPYC 7742 NPS4, 8x A100-SXM4, 10 HDR
// ports), as published in public GitHub notes of host 1mcprddgx05 (same layout as
// NVIDIA/nccl#1505); held in the project's research data as shared/data/nccl/topo/dgx-a100.txt
// (see shared/research/nccl_model.md §3.0). nvidia-smi prints tabs; the published copy has
// them expanded to 8-column stops, which is how it is compared here.
const char* kRealDgxA100 =
    R"(        GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7    NIC0    NIC1    NIC2    NIC3    NIC4    NIC5    NIC6    NIC7    NIC8    NIC9    CPU Affinity    NUMA Affinity   GPU NUMA ID
GPU0     X      NV12    NV12    NV12    NV12    NV12    NV12    NV12    PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     48-63,176-191   3               N/A
GPU1    NV12     X      NV12    NV12    NV12    NV12    NV12    NV12    PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     48-63,176-191   3               N/A
GPU2    NV12    NV12     X      NV12    NV12    NV12    NV12    NV12    SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     16-31,144-159   1               N/A
GPU3    NV12    NV12    NV12     X      NV12    NV12    NV12    NV12    SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     16-31,144-159   1               N/A
GPU4    NV12    NV12    NV12    NV12     X      NV12    NV12    NV12    SYS     SYS     SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     112-127,240-255 7               N/A
GPU5    NV12    NV12    NV12    NV12    NV12     X      NV12    NV12    SYS     SYS     SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     112-127,240-255 7               N/A
GPU6    NV12    NV12    NV12    NV12    NV12    NV12     X      NV12    SYS     SYS     SYS     SYS     SYS     SYS     PXB     PXB     SYS     SYS     80-95,208-223   5               N/A
GPU7    NV12    NV12    NV12    NV12    NV12    NV12    NV12     X      SYS     SYS     SYS     SYS     SYS     SYS     PXB     PXB     SYS     SYS     80-95,208-223   5               N/A
NIC0    PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS      X      PXB     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS
NIC1    PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     PXB      X      SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS
NIC2    SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS      X      PXB     SYS     SYS     SYS     SYS     SYS     SYS
NIC3    SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     PXB      X      SYS     SYS     SYS     SYS     SYS     SYS
NIC4    SYS     SYS     SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS      X      PXB     SYS     SYS     SYS     SYS
NIC5    SYS     SYS     SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     PXB      X      SYS     SYS     SYS     SYS
NIC6    SYS     SYS     SYS     SYS     SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS      X      PXB     SYS     SYS
NIC7    SYS     SYS     SYS     SYS     SYS     SYS     PXB     PXB     SYS     SYS     SYS     SYS     SYS     SYS     PXB      X      SYS     SYS
NIC8    SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS      X      PIX
NIC9    SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     SYS     PIX      X 

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks

NIC Legend:

  NIC0: mlx5_0
  NIC1: mlx5_1
  NIC2: mlx5_2
  NIC3: mlx5_3
  NIC4: mlx5_4
  NIC5: mlx5_5
  NIC6: mlx5_6
  NIC7: mlx5_7
  NIC8: mlx5_8
  NIC9: mlx5_9
)";

}  // namespace

// ---------------------------------------------------------------------------------------
// nvidia-smi topo -m

TEST_CASE("nvidia-smi topo of the DGX A100 config matches the real output cell for cell", "[topology]") {
  const Cluster c = load("dgx-a100-pod");
  const std::string smi = format_nvidia_smi_topo(tmpl(c, "dgx-a100"));
  const auto ours = lines_of(smi);
  const auto real = lines_of(kRealDgxA100);
  // Matrix part: header + 8 GPU rows + 10 NIC rows, compared cell by cell.
  for (size_t r = 0; r < 19; ++r) {
    INFO("row " << r << ": " << real.at(r));
    auto want = words(real.at(r));
    auto got = tab_cells(ours.at(r));
    if (r == 0) {
      // Header: a leading empty cell, then GPU0.., NIC0.., and the three affinity titles.
      REQUIRE(got.front().empty());
      got.erase(got.begin());
      want = {"GPU0", "GPU1", "GPU2", "GPU3", "GPU4", "GPU5", "GPU6", "GPU7", "NIC0", "NIC1", "NIC2",
              "NIC3", "NIC4", "NIC5", "NIC6", "NIC7", "NIC8", "NIC9", "CPU Affinity", "NUMA Affinity",
              "GPU NUMA ID"};
    } else if (r <= 8) {
      // GPU rows carry an empty cell between NUMA Affinity and GPU NUMA ID (two tabs).
      REQUIRE(got.size() == 1 + 18 + 4);
      REQUIRE(got[got.size() - 2].empty());
      got.erase(got.end() - 2);
    }
    CHECK(got == want);
  }
}

TEST_CASE("nvidia-smi topo of the DGX A100 config is the real text once tabs are expanded", "[topology]") {
  const Cluster c = load("dgx-a100-pod");
  const std::string smi = format_nvidia_smi_topo(tmpl(c, "dgx-a100"));
  CHECK(smi.find('\t') != std::string::npos);  // real nvidia-smi separates with tabs
  CHECK(expand_tabs(smi) == kRealDgxA100);
}

TEST_CASE("nvidia-smi topo of the PCIe-only node has no NVLink and the expected PCIe classes", "[topology]") {
  const Cluster c = load("pcie-8gpu");
  const NodeTemplate& t = tmpl(c, "sys-420gp-tnr");
  const std::string smi = format_nvidia_smi_topo(t);
  CHECK(smi.find("\tNV") == std::string::npos);
  // GPU0/1 on sw0, GPU2/3 on sw1 (both NUMA 0), GPU4-7 on sw2/sw3 (NUMA 1);
  // mlx5_0 (NIC0) on sw0, mlx5_1 (NIC1) on sw2. Gen4 switches present two levels: PXB.
  CHECK(smi_cell(smi, 0, 1) == "PXB");
  CHECK(smi_cell(smi, 0, 2) == "NODE");
  CHECK(smi_cell(smi, 0, 4) == "SYS");
  CHECK(smi_cell(smi, 0, 8) == "PXB");
  CHECK(smi_cell(smi, 2, 8) == "NODE");
  CHECK(smi_cell(smi, 6, 9) == "NODE");
  CHECK(smi_cell(smi, 8, 9) == "SYS");
  CHECK(smi_cell(smi, 3, 3) == "X");
  auto row0 = tab_cells(lines_of(smi).at(1));
  CHECK(row0.at(11) == "0-39,80-119");
  CHECK(row0.at(12) == "0");
  auto row7 = tab_cells(lines_of(smi).at(8));
  CHECK(row7.at(11) == "40-79,120-159");
  CHECK(row7.at(12) == "1");
  CHECK(smi.find("  NIC1: mlx5_1\n") != std::string::npos);
}

TEST_CASE("single-level switches give PIX and a shared host bridge gives PHB", "[topology]") {
  const Cluster c = load("pcie-8gpu");
  NodeTemplate t = tmpl(c, "sys-420gp-tnr");
  for (auto& s : t.pcie_switches) s.levels = 1;
  t.pcie_switches[0].host_bridge = 0;
  t.pcie_switches[1].host_bridge = 0;
  const std::string smi = format_nvidia_smi_topo(t);
  CHECK(smi_cell(smi, 0, 1) == "PIX");
  CHECK(smi_cell(smi, 0, 8) == "PIX");
  CHECK(smi_cell(smi, 0, 2) == "PHB");   // sw0 and sw1 under one host bridge
  CHECK(smi_cell(smi, 4, 6) == "NODE");  // sw2 and sw3: host bridge unknown
  // Gen3 switches default to one level.
  NodeTemplate g3 = tmpl(c, "sys-420gp-tnr");
  for (auto& s : g3.pcie_switches) s.gen = 3;
  CHECK(smi_cell(format_nvidia_smi_topo(g3), 0, 1) == "PIX");
}

TEST_CASE("a child switch under a switch makes its devices PXB to the parent's devices", "[topology]") {
  NodeTemplate t;
  t.sockets = 1;
  t.cores_per_numa = 8;
  t.memory_mb = 1024;
  t.pcie_switches = {{"top", 0, 3, 16, -1, -1, 1}, {"a", 0, 3, 16, 0, -1, 1}, {"b", 0, 3, 16, 0, -1, 1}};
  t.gpus = {{"t4", "Tesla T4", 1, 0, 1, ""}, {"t4", "Tesla T4", 1, 0, 1, ""}, {"t4", "Tesla T4", 1, 0, 2, ""}};
  const NodeTopology topo = build_node_topology(t);
  CHECK(topo.path(DeviceRef::gpu(0), DeviceRef::gpu(1)).cls == PathClass::kPix);
  CHECK(topo.path(DeviceRef::gpu(0), DeviceRef::gpu(2)).cls == PathClass::kPxb);
  // Bottleneck: the child switch uplinks, Gen3 x16.
  CHECK(topo.path(DeviceRef::gpu(0), DeviceRef::gpu(2)).bandwidth_Bps == Approx(16 * 0.985e9));
}

TEST_CASE("nvidia-smi topo of the mixed cluster shows NV2 and NV4 pairs and no output for CPU nodes", "[topology]") {
  const Cluster c = load("mixed");
  const std::string v100 = format_nvidia_smi_topo(tmpl(c, "c4140-v100"));
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) CHECK(smi_cell(v100, a, b) == (a == b ? "X" : "NV2"));
  CHECK(smi_cell(v100, 0, 4) == "NODE");  // GPU0 and mlx5_0 on NUMA 0, separate root ports
  CHECK(smi_cell(v100, 0, 5) == "SYS");
  CHECK(smi_cell(v100, 4, 5) == "SYS");
  CHECK(tab_cells(lines_of(v100).at(3)).at(7) == "20-39,60-79");
  const std::string a100 = format_nvidia_smi_topo(tmpl(c, "xe8545-a100"));
  CHECK(smi_cell(a100, 1, 3) == "NV4");
  CHECK(format_nvidia_smi_topo(tmpl(c, "r650-cpu")).empty());
}

TEST_CASE("nvidia-smi topo of the DGX H100 config pairs every GPU with one NIC", "[topology]") {
  const Cluster c = load("dgx-h100-pod");
  const std::string smi = format_nvidia_smi_topo(tmpl(c, "dgx-h100"));
  const int expect_nic[8] = {0, 3, 4, 5, 6, 9, 10, 11};
  for (int g = 0; g < 8; ++g) {
    int pxb = 0;
    for (int n = 0; n < 12; ++n) {
      const std::string cell = smi_cell(smi, g, 8 + n);
      if (cell == "PXB") {
        ++pxb;
        CHECK(n == expect_nic[g]);
      } else {
        const bool same_socket = (n < 6) == (g < 4);
        CHECK(cell == (same_socket ? "NODE" : "SYS"));
      }
    }
    CHECK(pxb == 1);
    CHECK(smi_cell(smi, g, (g + 1) % 8) == "NV18");
  }
  CHECK(smi_cell(smi, 8 + 1, 8 + 2) == "PIX");  // mlx5_1/2: ports of one storage adapter
  CHECK(smi_cell(smi, 8 + 7, 8 + 8) == "PIX");
  CHECK(tab_cells(lines_of(smi).at(5)).at(21) == "56-111,168-223");
}

// ---------------------------------------------------------------------------------------
// Path queries

TEST_CASE("node topology paths carry bandwidth latency and shared edge ids", "[topology]") {
  const Cluster c = load("dgx-a100-pod");
  const NodeTopology topo = build_node_topology(tmpl(c, "dgx-a100"));
  CHECK(topo.gpu_count() == 8);
  CHECK(topo.nic_count() == 10);
  CHECK(topo.numa_count() == 8);
  CHECK(topo.has_nvswitch());

  auto nv01 = topo.path(DeviceRef::gpu(0), DeviceRef::gpu(1));
  auto nv02 = topo.path(DeviceRef::gpu(0), DeviceRef::gpu(2));
  CHECK(nv01.cls == PathClass::kNvlink);
  CHECK(nv01.nvlinks == 12);
  CHECK(nv01.label() == "NV12");
  CHECK(nv01.bandwidth_Bps == Approx(300e9));  // 12 x 25 GB/s
  REQUIRE(nv01.edges.size() == 2);
  REQUIRE(nv02.edges.size() == 2);
  CHECK(nv01.edges[0] == nv02.edges[0]);  // both leave GPU0 on its NVSwitch bond
  CHECK(nv01.edges[1] != nv02.edges[1]);
  CHECK(nv01.latency_ns == Approx(200));
  CHECK(topo.nvlinks_between(0, 5) == 12);
  CHECK(topo.nvlinks_between(3, 3) == -1);

  auto gn = topo.path(DeviceRef::gpu(0), DeviceRef::nic(0));
  CHECK(gn.cls == PathClass::kPxb);
  CHECK(gn.bandwidth_Bps == Approx(16 * 1.969e9));  // Gen4 x16
  CHECK(gn.edges.size() == 4);  // gpu-internal, internal-sw0, sw0-internal, internal-nic
  CHECK(gn.latency_ns == Approx(400));
  for (int id : gn.edges) CHECK(topo.edge(id).kind == TopoEdgeKind::kPcie);
  // The reverse path uses the same edges, reversed.
  auto ng = topo.path(DeviceRef::nic(0), DeviceRef::gpu(0));
  CHECK(std::vector<int>(ng.edges.rbegin(), ng.edges.rend()) == gn.edges);

  auto gpu_to_far_nic = topo.path(DeviceRef::gpu(0), DeviceRef::nic(4));
  CHECK(gpu_to_far_nic.cls == PathClass::kSys);
  CHECK(gpu_to_far_nic.bandwidth_Bps == Approx(16e9));  // the SMP link
  bool crosses_smp = false;
  for (int id : gpu_to_far_nic.edges) crosses_smp |= topo.edge(id).kind == TopoEdgeKind::kSmp;
  CHECK(crosses_smp);
  auto same_socket = topo.path(DeviceRef::gpu(0), DeviceRef::nic(2));  // NUMA 3 -> NUMA 1
  CHECK(same_socket.cls == PathClass::kSys);
  for (int id : same_socket.edges) CHECK(topo.edge(id).kind != TopoEdgeKind::kSmp);

  CHECK(topo.path(DeviceRef::gpu(0), DeviceRef::numa(3)).cls == PathClass::kPhb);
  CHECK(topo.path(DeviceRef::gpu(0), DeviceRef::numa(1)).cls == PathClass::kSys);
  CHECK(topo.path(DeviceRef::numa(2), DeviceRef::numa(2)).cls == PathClass::kSelf);
  CHECK(topo.path(DeviceRef::numa(2), DeviceRef::numa(6)).cls == PathClass::kSys);
  CHECK(topo.path(DeviceRef::nic(8), DeviceRef::nic(9)).cls == PathClass::kPix);
  CHECK(std::isinf(topo.path(DeviceRef::gpu(3), DeviceRef::gpu(3)).bandwidth_Bps));

  CHECK(topo.edge(topo.nic_port_edge(0)).kind == TopoEdgeKind::kNicPort);
  CHECK(topo.edge(topo.nic_port_edge(0)).bandwidth_Bps == Approx(25e9));
  CHECK_THROWS_AS((void)topo.vertex_of(DeviceRef::gpu(8)), std::out_of_range);
}

TEST_CASE("GPU NUMA domains and local cores follow the socket-major numbering", "[topology]") {
  const Cluster c = load("dgx-a100-pod");
  const NodeTopology topo = build_node_topology(tmpl(c, "dgx-a100"));
  CHECK(topo.gpu_numa(0) == 3);
  CHECK(topo.gpu_numa(4) == 7);
  CHECK(topo.nic_numa(8) == 4);
  auto cores = topo.gpu_local_cores(2);
  REQUIRE(cores.size() == 16);
  CHECK(cores.front() == 16);
  CHECK(cores.back() == 31);
  CHECK(topo.numa_cores(7).front() == 112);
  const TopoVertex& numa5 = topo.vertex(topo.vertex_of(DeviceRef::numa(5)));
  CHECK(numa5.memory_mb == 2097152 / 8);
  CHECK(numa5.first_core == 80);
}

TEST_CASE("NIC ports group by bus id when bus ids are known", "[topology]") {
  const Cluster c = load("dgx-a100-pod");
  NodeTemplate t = tmpl(c, "dgx-a100");
  t.nics[8].bus_id = "0000:e1:00.0";
  t.nics[9].bus_id = "0000:e1:00.1";
  CHECK(build_node_topology(t).path(DeviceRef::nic(8), DeviceRef::nic(9)).cls == PathClass::kPix);
  t.nics[9].bus_id = "0000:e2:00.0";
  CHECK(build_node_topology(t).path(DeviceRef::nic(8), DeviceRef::nic(9)).cls == PathClass::kNode);
}

TEST_CASE("CPU affinity uses cpu_os_ids when the template has them", "[topology]") {
  NodeTemplate t;
  t.sockets = 2;
  t.cores_per_numa = 2;
  t.threads_per_core = 2;
  t.memory_mb = 1024;
  t.gpus = {{"x", "X", 1, 1, -1, ""}};
  // Abstract CPU core*2+thread -> OS id: siblings adjacent (0,1 = core 0).
  t.cpu_os_ids = {0, 1, 2, 3, 4, 5, 6, 7};
  auto row = tab_cells(lines_of(format_nvidia_smi_topo(t)).at(1));
  CHECK(row.at(2) == "4-7");
  t.cpu_os_ids.clear();
  row = tab_cells(lines_of(format_nvidia_smi_topo(t)).at(1));
  CHECK(row.at(2) == "2-3,6-7");  // Linux numbering: sibling = core + 4
  CHECK(format_cpu_ranges({5, 1, 2, 3, 9, 8, 3}) == "1-3,5,8-9");
  CHECK(format_cpu_ranges({}).empty());
}

// ---------------------------------------------------------------------------------------
// gres.conf and slurm.conf

TEST_CASE("gres.conf of the DGX A100 config", "[topology]") {
  const Cluster c = load("dgx-a100-pod");
  // NVSwitch: AutoDetect=nvml sees only switch endpoints, so no GPU-GPU link counts.
  CHECK(format_gres_conf(tmpl(c, "dgx-a100"), "dgx[001-032]") ==
        "NodeName=dgx[001-032] Name=gpu Type=a100_80gb File=/dev/nvidia0 Cores=48-63 Links=-1,0,0,0,0,0,0,0\n"
        "NodeName=dgx[001-032] Name=gpu Type=a100_80gb File=/dev/nvidia1 Cores=48-63 Links=0,-1,0,0,0,0,0,0\n"
        "NodeName=dgx[001-032] Name=gpu Type=a100_80gb File=/dev/nvidia2 Cores=16-31 Links=0,0,-1,0,0,0,0,0\n"
        "NodeName=dgx[001-032] Name=gpu Type=a100_80gb File=/dev/nvidia3 Cores=16-31 Links=0,0,0,-1,0,0,0,0\n"
        "NodeName=dgx[001-032] Name=gpu Type=a100_80gb File=/dev/nvidia4 Cores=112-127 Links=0,0,0,0,-1,0,0,0\n"
        "NodeName=dgx[001-032] Name=gpu Type=a100_80gb File=/dev/nvidia5 Cores=112-127 Links=0,0,0,0,0,-1,0,0\n"
        "NodeName=dgx[001-032] Name=gpu Type=a100_80gb File=/dev/nvidia6 Cores=80-95 Links=0,0,0,0,0,0,-1,0\n"
        "NodeName=dgx[001-032] Name=gpu Type=a100_80gb File=/dev/nvidia7 Cores=80-95 Links=0,0,0,0,0,0,0,-1\n");
}

TEST_CASE("gres.conf of the other configs", "[topology]") {
  const Cluster mixed = load("mixed");
  const auto v100 = lines_of(format_gres_conf(tmpl(mixed, "c4140-v100"), "v100-[01-08]"));
  REQUIRE(v100.size() == 4);
  CHECK(v100[0] == "NodeName=v100-[01-08] Name=gpu Type=v100 File=/dev/nvidia0 Cores=0-19 Links=-1,2,2,2");
  CHECK(v100[3] == "NodeName=v100-[01-08] Name=gpu Type=v100 File=/dev/nvidia3 Cores=20-39 Links=2,2,2,-1");
  const auto a100 = lines_of(format_gres_conf(tmpl(mixed, "xe8545-a100"), "a100-[01-08]"));
  CHECK(a100.at(2) == "NodeName=a100-[01-08] Name=gpu Type=a100 File=/dev/nvidia2 Cores=64-127 Links=4,4,-1,4");
  CHECK(format_gres_conf(tmpl(mixed, "r650-cpu"), "cpu-[001-016]").empty());

  const Cluster pcie = load("pcie-8gpu");
  const auto p = lines_of(format_gres_conf(tmpl(pcie, "sys-420gp-tnr"), "pcie[001-016]"));
  REQUIRE(p.size() == 8);
  CHECK(p[5] == "NodeName=pcie[001-016] Name=gpu Type=a100_pcie File=/dev/nvidia5 Cores=40-79 Links=0,0,0,0,0,-1,0,0");

  const Cluster h100 = load("dgx-h100-pod");
  const auto h = lines_of(format_gres_conf(tmpl(h100, "dgx-h100"), "dgxh[001-016]"));
  REQUIRE(h.size() == 8);
  CHECK(h[4] == "NodeName=dgxh[001-016] Name=gpu Type=h100 File=/dev/nvidia4 Cores=56-111 Links=0,0,0,0,-1,0,0,0");
}

TEST_CASE("slurm.conf node lines as slurmd -C prints them", "[topology]") {
  CHECK(format_slurm_node(tmpl(load("dgx-a100-pod"), "dgx-a100"), "dgx[001-032]") ==
        "NodeName=dgx[001-032] CPUs=256 Boards=1 SocketsPerBoard=2 CoresPerSocket=64 ThreadsPerCore=2 "
        "RealMemory=2097152 Gres=gpu:a100_80gb:8\n");
  CHECK(format_slurm_node(tmpl(load("dgx-h100-pod"), "dgx-h100"), "dgxh[001-016]") ==
        "NodeName=dgxh[001-016] CPUs=224 Boards=1 SocketsPerBoard=2 CoresPerSocket=56 ThreadsPerCore=2 "
        "RealMemory=2097152 Gres=gpu:h100:8\n");
  CHECK(format_slurm_node(tmpl(load("pcie-8gpu"), "sys-420gp-tnr"), "pcie[001-016]") ==
        "NodeName=pcie[001-016] CPUs=160 Boards=1 SocketsPerBoard=2 CoresPerSocket=40 ThreadsPerCore=2 "
        "RealMemory=1048576 Gres=gpu:a100_pcie:8\n");
  const Cluster mixed = load("mixed");
  CHECK(format_slurm_node(tmpl(mixed, "r650-cpu"), "cpu-[001-016]") ==
        "NodeName=cpu-[001-016] CPUs=128 Boards=1 SocketsPerBoard=2 CoresPerSocket=32 ThreadsPerCore=2 "
        "RealMemory=524288\n");
  NodeTemplate two = tmpl(mixed, "c4140-v100");
  two.gpus[2].gres_type = "v100s";
  two.gpus[3].gres_type = "v100s";
  CHECK(format_slurm_node(two, "x").find(" Gres=gpu:v100:2,gpu:v100s:2\n") != std::string::npos);
}

// ---------------------------------------------------------------------------------------
// Cluster topology

TEST_CASE("fat-tree cluster topology: leaves spine hops and bandwidth", "[topology]") {
  const Cluster c = load("dgx-a100-pod");
  const ClusterTopology net = build_cluster_topology(c);
  REQUIRE(net.modelled());
  CHECK(net.node_count() == 32);
  CHECK(net.switch_count() == 3);
  CHECK(net.switch_name(0) == "leaf0");
  CHECK(net.switch_name(2) == "spine");
  CHECK(net.leaf_of(0) == 0);
  CHECK(net.leaf_of(15) == 0);
  CHECK(net.leaf_of(16) == 1);
  CHECK(net.switches_above(20) == std::vector<int>{1, 2});
  CHECK(net.nodes_under(1).size() == 16);
  CHECK(net.nodes_under(2).size() == 32);
  CHECK(net.switch_hops(3, 3) == 0);
  CHECK(net.switch_hops(0, 15) == 1);
  CHECK(net.switch_hops(0, 16) == 3);
  CHECK(net.bandwidth_Bps(0, 16) == Approx(25e9));  // HDR node link
  auto p = net.path(0, 16);
  CHECK(p.edges.size() == 4);
  CHECK(p.latency == SimTime::us(3));  // 130 ns rounds to 1 us per hop
  CHECK(net.edge(p.edges[1]).bandwidth_Bps == Approx(16 * 25e9));

  const ClusterTopology pcie = build_cluster_topology(load("pcie-8gpu"));
  auto q = pcie.path(0, 15);
  CHECK(q.switch_hops == 3);
  CHECK(pcie.edge(q.edges[1]).bandwidth_Bps == Approx(8 * 25e9 / 2));  // 2:1 oversubscribed
}

TEST_CASE("switch-tree cluster topology from the mixed config", "[topology]") {
  const Cluster c = load("mixed");
  const ClusterTopology net = build_cluster_topology(c);
  const int v1 = c.find_node("v100-01"), v2 = c.find_node("v100-08"), cpu = c.find_node("cpu-001");
  const int spine = net.find_switch("spine"), leaf1 = net.find_switch("leaf1");
  REQUIRE(spine >= 0);
  CHECK(net.leaf_of(v1) == leaf1);
  CHECK(net.switches_above(cpu) == std::vector<int>{net.find_switch("leaf3"), spine});
  CHECK(net.switch_hops(v1, v2) == 1);
  CHECK(net.switch_hops(v1, cpu) == 3);
  CHECK(net.bandwidth_Bps(v1, cpu) == Approx(12.5e9));  // 100 Gb/s node links
  CHECK(net.nodes_under(leaf1).size() == 8);
  CHECK(net.nodes_under(spine).size() == 32);
  CHECK(net.path(v1, cpu).latency == SimTime::us(3));
}

TEST_CASE("a cluster without a network is not connected between nodes", "[topology]") {
  const Cluster c = make_cpu_cluster("swf", 4, 8, "test");
  const ClusterTopology net = build_cluster_topology(c);
  CHECK_FALSE(net.modelled());
  CHECK(net.switch_hops(0, 0) == 0);
  CHECK(net.switch_hops(0, 1) == -1);
  CHECK(net.bandwidth_Bps(0, 1) == 0);
  CHECK(net.leaf_of(2) == -1);
  CHECK(net.switches_above(2).empty());
}

TEST_CASE("a copied topology answers from its own graph after the original is gone", "[topology]") {
  // Edge descriptors point into the graph that made them; a memberwise copy would read
  // the source's edges (freed here), which valgrind caught in the NCCL model.
  const Cluster c = load("dgx-a100-pod");
  auto original = std::make_unique<NodeTopology>(build_node_topology(c.templates[0]));
  const PathInfo before = original->path(DeviceRef::gpu(0), DeviceRef::nic(0));
  std::vector<double> bw;
  for (int e = 0; e < original->edge_count(); ++e) bw.push_back(original->edge(e).bandwidth_Bps);
  NodeTopology copy = *original;
  NodeTopology assigned;
  assigned = copy;
  original.reset();
  for (const NodeTopology* t : {&copy, &assigned}) {
    REQUIRE(t->edge_count() == static_cast<int>(bw.size()));
    for (int e = 0; e < t->edge_count(); ++e) {
      REQUIRE(t->edge(e).id == e);
      REQUIRE(t->edge(e).bandwidth_Bps == bw[static_cast<size_t>(e)]);
    }
    const PathInfo after = t->path(DeviceRef::gpu(0), DeviceRef::nic(0));
    REQUIRE(after.cls == before.cls);
    REQUIRE(after.edges == before.edges);
  }
  ClusterTopology net = build_cluster_topology(c);
  const ClusterTopology net_copy = net;
  net = ClusterTopology();
  for (int e = 0; e < net_copy.edge_count(); ++e) REQUIRE(net_copy.edge(e).id == e);
}
