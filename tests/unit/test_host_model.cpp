// The host and NUMA model (models/host) on real topologies: configs/dgx-a100-pod.yaml
// (NVSwitch, EPYC NPS4, GPUs and NICs under Gen4 switches), configs/pcie-8gpu.yaml (PCIe
// only, two Ice Lake sockets) and the LLNL cts1 Pascal hwloc XML (two Broadwell sockets,
// two P100 PCIe, the platform of the gearshifft measurement). Expected numbers are worked
// out by hand from configs/host/default.yaml; the arithmetic is in the comments.
// Raw PCIe (sim/cluster/topology.cpp): Gen3 x16 = 16 x 0.985 = 15.76 GB/s,
// Gen4 x16 = 16 x 1.969 = 31.504 GB/s; effective = 0.8 x raw: 12.608 and 25.2032 GB/s.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "models/host/host_model.hpp"
#include "models/placement/placement.hpp"
#include "sim/cluster/cluster_yaml.hpp"
#include "sim/cluster/import_hwloc.hpp"
#include "sim/core/input_file.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;
namespace fs = std::filesystem;

namespace {

const HostParams& defaults() {
  static const HostParams p = load_host_params(test::src("configs/host/default.yaml"));
  return p;
}

/// One node template with its graph, kept together (HostModel holds references).
struct HostNode {
  NodeTemplate t;
  NodeTopology topo;
  explicit HostNode(NodeTemplate tmpl) : t(std::move(tmpl)), topo(build_node_topology(t)) {}
};

HostNode from_cluster(const std::string& rel) { return HostNode(load_cluster_yaml(test::src(rel)).templates.at(0)); }
HostNode cts1() {
  Diagnostics w;
  return HostNode(import_hwloc_xml(test::src("tests/data/hwloc/mpibind/cts1-pascal.xml"), w));
}

std::vector<int> range(int lo, int hi) {  // [lo, hi]
  std::vector<int> v;
  for (int i = lo; i <= hi; ++i) v.push_back(i);
  return v;
}

constexpr double kGen3 = 15.76e9;    // 16 x 0.985 GB/s
constexpr double kGen4 = 31.504e9;   // 16 x 1.969 GB/s

Approx near(double v) { return Approx(v).epsilon(1e-9); }

std::string diagnostics_of(const std::string& rel) {
  const std::string text = read_input_file(test::src(rel));
  try {
    if (fs::path(rel).filename().string().rfind("calibration", 0) == 0)
      (void)parse_host_calibration(defaults(), text, rel);
    else
      (void)parse_host_params(text, rel);
  } catch (const InputError& e) {
    return e.diagnostics().format();
  }
  return "";
}

}  // namespace

TEST_CASE("host params: configs/host/default.yaml", "[host]") {
  const HostParams& p = defaults();
  CHECK(p.pcie_efficiency == 0.8);
  CHECK(p.dram_dma_per_socket_Bps == near(56e9));
  CHECK(p.same_socket_factor == 1.0);
  CHECK(p.rho_memory_bound == 0.3);
  CHECK(p.rho_compute_bound == 0.05);
  CHECK(p.gdr_staging.phb == 1.0);
  CHECK(p.gdr_staging.node == 0.76);
  CHECK(p.gdr_staging.sys == 0.48);
  REQUIRE(p.platforms.size() == 6);
  // NCCL's SYS constants (topo.h): BDW 6, SKL-ICX 10, SPR 22, EMR 40, AMD 16.
  CHECK(p.platform("intel-bdw")->sys_bandwidth_Bps == near(6e9));
  CHECK(p.platform("intel-skl-icx")->sys_bandwidth_Bps == near(10e9));
  CHECK(p.platform("intel-spr")->sys_bandwidth_Bps == near(22e9));
  CHECK(p.platform("intel-emr")->sys_bandwidth_Bps == near(40e9));
  CHECK(p.platform("amd-epyc")->sys_bandwidth_Bps == near(16e9));
  // gearshifft: H2D 3.78/12.15, D2H 2.54/12.89; GB200: 115/330; DGX H100: 13.5/33.
  CHECK(p.platform("intel-bdw")->h2d_remote == 0.31);
  CHECK(p.platform("intel-bdw")->d2h_remote == 0.20);
  CHECK(p.platform("grace-c2c")->d2h_remote == 0.35);
  CHECK(p.platform("intel-spr")->d2h_remote_all_gpus == 0.41);
  CHECK(p.platform_for("dgx-a100").name == "amd-epyc");
  CHECK(p.platform_for("sys-420gp-tnr").name == "intel-skl-icx");
  CHECK(p.platform_for("cts1-pascal").name == "intel-bdw");
  CHECK(p.platform_for("no-such-template").name == p.default_platform);
}

TEST_CASE("host: local against remote copies on a two-socket Broadwell node (hwloc XML)", "[host]") {
  const HostNode n = cts1();
  REQUIRE(n.topo.gpu_count() == 2);
  REQUIRE(n.topo.numa_count() == 2);
  REQUIRE(n.topo.gpu_numa(0) == 0);
  const HostModel m(defaults(), n.t, n.topo);
  CHECK(m.platform().name == "intel-bdw");
  // Local: 0.8 x Gen3 x16 = 0.8 x 15.76 = 12.608 GB/s (gearshifft measured 12.15 H2D).
  CHECK(m.h2d_bandwidth_Bps(0, MemBinding::gpu_local()) == near(0.8 * kGen3));
  CHECK(m.d2h_bandwidth_Bps(0, MemBinding::gpu_local()) == near(0.8 * kGen3));
  // Remote (numactl -m1): H2D x0.31 = 3.90848 GB/s (measured 3.78), D2H x0.20 = 2.5216 (2.54).
  CHECK(m.h2d_bandwidth_Bps(0, MemBinding::on_numa(1)) == near(0.31 * 0.8 * kGen3));
  CHECK(m.d2h_bandwidth_Bps(0, MemBinding::on_numa(1)) == near(0.20 * 0.8 * kGen3));
  // Interleaved over both domains: half the bytes at 1, half at 0.31:
  // 12.608 / (0.5 + 0.5 / 0.31) = 12.608 / 2.112903 = 5.967 GB/s.
  CHECK(m.h2d_bandwidth_Bps(0, MemBinding::interleaved()) == near(0.8 * kGen3 / (0.5 + 0.5 / 0.31)));
  // Both GPUs behind one PEX 8747 share its Gen3 x16 uplink: 12.608 / 2 = 6.304 GB/s each.
  CHECK(m.h2d_bandwidth_Bps(0, MemBinding::gpu_local(), {0, 1}) == near(0.8 * kGen3 / 2));
  // The HCA mlx5_0 sits on the same switch (PIX): GPUDirect RDMA at its rate.
  CHECK(m.gdr_factor(0) == 1.0);
}

TEST_CASE("host: remote factor on the two-socket PCIe node follows the configured platform", "[host]") {
  const HostNode n = from_cluster("configs/pcie-8gpu.yaml");
  REQUIRE(n.topo.numa_count() == 2);
  REQUIRE(n.topo.gpu_numa(0) == 0);
  SECTION("Ice Lake (intel-skl-icx): one stream is not slowed") {
    const HostModel m(defaults(), n.t, n.topo);
    // 0.8 x Gen4 x16 = 25.2032 GB/s, local and remote (single-stream factor 1.0).
    CHECK(m.h2d_bandwidth_Bps(0, MemBinding::gpu_local()) == near(0.8 * kGen4));
    CHECK(m.h2d_bandwidth_Bps(0, MemBinding::on_numa(1)) == near(0.8 * kGen4));
  }
  SECTION("the same node declared intel-bdw") {
    HostParams p = defaults();
    p.template_platforms["sys-420gp-tnr"] = "intel-bdw";
    const HostModel m(p, n.t, n.topo);
    // 25.2032 x 0.31 = 7.812992 GB/s; D2H 25.2032 x 0.20 = 5.04064 GB/s.
    CHECK(m.h2d_bandwidth_Bps(0, MemBinding::on_numa(1)) == near(7.812992e9));
    CHECK(m.d2h_bandwidth_Bps(0, MemBinding::on_numa(1)) == near(5.04064e9));
    CHECK(m.h2d_bandwidth_Bps(4, MemBinding::on_numa(0)) == near(7.812992e9));
    CHECK(m.h2d_bandwidth_Bps(4, MemBinding::gpu_local()) == near(0.8 * kGen4));
  }
}

TEST_CASE("host: all eight GPUs copying at once", "[host]") {
  const std::vector<int> all = range(0, 7);
  SECTION("pcie-8gpu: local buffers, then each GPU's buffer on the other socket") {
    const HostNode n = from_cluster("configs/pcie-8gpu.yaml");
    const HostModel m(defaults(), n.t, n.topo);
    // Two GPUs per switch uplink: 0.8 x 31.504 / 2 = 12.6016 GB/s; DMA per socket
    // 56 / 4 streams = 14 GB/s, not binding.
    for (int g : all) CHECK(m.h2d_bandwidth_Bps(g, MemBinding::gpu_local(), all) == near(12.6016e9));
    std::vector<CopyStream> crossed;
    for (int g : all) crossed.push_back({g, MemBinding::on_numa(g < 4 ? 1 : 0)});
    // All 8 read across sockets: the all-GPUs factor 0.41 (DGX H100 13.5/33):
    // 12.6016 x 0.41 = 5.166656 GB/s.
    for (double bw : m.copy_bandwidths_Bps(CopyDir::kH2D, crossed)) CHECK(bw == near(5.166656e9));
    for (double bw : m.copy_bandwidths_Bps(CopyDir::kD2H, crossed)) CHECK(bw == near(5.166656e9));
  }
  SECTION("dgx-a100: every buffer on NUMA domain 0") {
    const HostNode n = from_cluster("configs/dgx-a100-pod.yaml");
    const HostModel m(defaults(), n.t, n.topo);
    CHECK(m.h2d_bandwidth_Bps(0, MemBinding::gpu_local(), all) == near(12.6016e9));
    // Socket 0's DMA split 8 ways: 56 / 8 = 7 GB/s < 12.6016. GPU0 (NUMA 3) is on socket
    // 0: same_socket_factor 1.0 -> 7 GB/s. GPU4 (NUMA 7, socket 1) reads across sockets
    // with 4 of 8 GPUs doing so: factor 1 + (0.41 - 1) x (4 - 1) / (8 - 1) = 0.747143:
    // 7 x 0.747143 = 5.23 GB/s.
    CHECK(m.h2d_bandwidth_Bps(0, MemBinding::on_numa(0), all) == near(7e9));
    CHECK(m.h2d_bandwidth_Bps(4, MemBinding::on_numa(0), all) == near(5.23e9));
  }
  SECTION("dgx-a100: a pair on one switch shares its uplink, a pair on two does not") {
    const HostNode n = from_cluster("configs/dgx-a100-pod.yaml");
    const HostModel m(defaults(), n.t, n.topo);
    CHECK(m.h2d_bandwidth_Bps(0, MemBinding::gpu_local(), {0, 1}) == near(12.6016e9));
    CHECK(m.h2d_bandwidth_Bps(0, MemBinding::gpu_local(), {0, 2}) == near(25.2032e9));
  }
}

TEST_CASE("host: GPUDirect RDMA by GPU-NIC path class", "[host]") {
  SECTION("dgx-a100: PXB gives the full NIC rate, SYS about half") {
    const HostNode n = from_cluster("configs/dgx-a100-pod.yaml");
    const HostModel m(defaults(), n.t, n.topo);
    // GPU0 and mlx5_0 share sw0 (PXB): 200 Gb/s = 25 GB/s.
    const NicRoute r0 = m.nic_routes({0}).front();
    CHECK(r0.nic == 0);
    CHECK(r0.cls == PathClass::kPxb);
    CHECK(m.inter_node_bandwidth_Bps(r0) == near(25e9));
    CHECK(m.gdr_factor(0) == 1.0);
    // Eight GPUs sending at once get a NIC each (the 8 compute ports), all at 25 GB/s.
    const auto routes = m.nic_routes(range(0, 7));
    for (size_t i = 0; i < routes.size(); ++i) {
      CHECK(routes[i].nic == static_cast<int>(i));
      CHECK(m.gdr_factor(routes[i]) == 1.0);
    }
    // GPU0 through storage port mlx5_8 (NUMA 4, SYS): staged through host memory:
    // min(25, 56 / 2 = 28, 0.48 x 0.8 x 31.504 = 12.097536, EPYC SYS 16) = 12.097536 GB/s,
    // 12.097536 / 25 = 0.484 of the NIC (perftest #241: 11 of 23).
    const NicRoute sys = m.route(0, 8);
    CHECK(sys.cls == PathClass::kSys);
    CHECK(m.inter_node_bandwidth_Bps(sys) == near(12.097536e9));
    CHECK(m.gdr_factor(sys) == near(0.48390144));
  }
  SECTION("pcie-8gpu: NODE and SYS are staged") {
    const HostNode n = from_cluster("configs/pcie-8gpu.yaml");
    const HostModel m(defaults(), n.t, n.topo);
    // GPU2 (sw1) has no NIC on its switch; mlx5_0 (sw0, same NUMA domain) is NODE:
    // min(25, 28, 0.76 x 0.8 x 31.504 = 19.154432) = 19.154432 GB/s, x0.766.
    CHECK(m.nic_routes({2}).front().cls == PathClass::kNode);
    CHECK(m.inter_node_bandwidth_Bps(2) == near(19.154432e9));
    CHECK(m.gdr_factor(2) == near(0.76617728));
    // GPU4 to mlx5_0 on the other socket: min(25, 28, 12.097536, Ice Lake SYS 10) = 10 GB/s.
    const NicRoute sys = m.route(4, 0);
    CHECK(sys.cls == PathClass::kSys);
    CHECK(m.inter_node_bandwidth_Bps(sys) == near(10e9));
    CHECK(m.gdr_factor(sys) == near(0.4));
    // All 8 sending: 4 GPUs per NIC, 25 / 4 = 6.25 GB/s each; the staged ones (GPU2,3 on
    // socket 0) get min(6.25, 56 / (2 x 2) = 14, 19.15) = 6.25: the NIC share binds.
    for (const auto& r : m.nic_routes(range(0, 7))) {
      CHECK(r.nic_sharers == 4);
      CHECK(m.inter_node_bandwidth_Bps(r) == near(6.25e9));
    }
  }
}

TEST_CASE("host: data-loader factor from the share of remote cores and memory", "[host]") {
  const HostNode n = from_cluster("configs/dgx-a100-pod.yaml");
  const HostModel m(defaults(), n.t, n.topo);
  // GPU0 is on NUMA 3 = cores 48-63 (16 cores per domain).
  const std::vector<int> gpu0{0};
  const double rho = m.loader_rho(LoaderKind::kMemoryBound);
  CHECK(rho == 0.3);
  // All cores remote (NUMA 0), first-touch memory follows them: 1 - 0.3 = 0.7.
  CHECK(m.loader_factor(range(0, 15), MemBinding::first_touch(range(0, 15)), gpu0, rho) == near(0.7));
  // Half: cores 40-47 on NUMA 2, 48-55 on NUMA 3: 1 - 0.3 / 2 = 0.85.
  CHECK(m.remote_fraction(range(40, 55), MemBinding::first_touch(range(40, 55)), gpu0) == near(0.5));
  CHECK(m.loader_factor(range(40, 55), MemBinding::first_touch(range(40, 55)), gpu0, rho) == near(0.85));
  // Local cores and memory: 1.
  CHECK(m.loader_factor(range(48, 63), MemBinding::gpu_local(), gpu0, rho) == 1.0);
  // Local cores, memory bound elsewhere: remote fraction 1 -> 0.7.
  CHECK(m.loader_factor(range(48, 63), MemBinding::on_numa(0), gpu0, rho) == near(0.7));
  // Local cores, memory interleaved over 8 domains: 7/8 remote -> 1 - 0.3 x 0.875 = 0.7375.
  CHECK(m.loader_factor(range(48, 63), MemBinding::interleaved(), gpu0, rho) == near(0.7375));
  // A compute-bound pipeline: 1 - 0.05 = 0.95.
  CHECK(m.loader_factor(range(0, 15), MemBinding::first_touch(range(0, 15)), gpu0,
                        m.loader_rho(LoaderKind::kComputeBound)) == near(0.95));
  CHECK_THROWS_AS(m.loader_factor(range(0, 15), MemBinding::gpu_local(), gpu0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(m.loader_factor({}, MemBinding::gpu_local(), gpu0, rho), std::invalid_argument);
}

TEST_CASE("host: loader factor of the placement library's bindings", "[host]") {
  const HostNode n = from_cluster("configs/dgx-a100-pod.yaml");
  const HostModel m(defaults(), n.t, n.topo);
  NodeRequest req;
  req.tasks = 1;
  req.cpus_per_task = 16;
  req.gpus = 1;
  const gcsim::CoreMask all_free(n.t.cores());
  const uint64_t gpus_free = 0xff;
  SECTION("numa-bound: the task's cores are on its GPU's domain: factor 1") {
    const NodePlacement p = place_on_template(n.t, all_free, gpus_free, 0, req, PlacementMode::kNumaBound);
    REQUIRE(p.fits);
    REQUIRE(p.alloc.bindings.size() == 1);
    const TaskBinding& b = p.alloc.bindings[0];
    REQUIRE(b.gpus.size() == 1);
    for (int c : b.cores) CHECK(n.t.numa_of_core(c) == n.topo.gpu_numa(b.gpus[0]));
    CHECK(m.loader_factor(b, 0.3) == 1.0);
  }
  SECTION("unbound: lowest cores (NUMA 0) with GPU0 (NUMA 3): 1 - rho") {
    const NodePlacement p = place_on_template(n.t, all_free, gpus_free, 0, req, PlacementMode::kUnbound);
    REQUIRE(p.fits);
    REQUIRE(p.alloc.bindings.size() == 1);
    const TaskBinding& b = p.alloc.bindings[0];
    CHECK(b.gpus == std::vector<int>{0});
    for (int c : b.cores) CHECK(n.t.numa_of_core(c) == 0);
    CHECK(m.loader_factor(b, 0.3) == near(0.7));
  }
}

namespace {

/// Eight tasks, one GPU each: task i gets GPU i and the 4 cores `first(i)`.. +3.
template <class F>
NodeAlloc eight_tasks(F first) {
  NodeAlloc a;
  a.node = 0;
  a.tasks = 8;
  for (int i = 0; i < 8; ++i) {
    TaskBinding b;
    b.cores = range(first(i), first(i) + 3);
    b.gpus = {i};
    a.bindings.push_back(b);
    a.cores.insert(a.cores.end(), b.cores.begin(), b.cores.end());
    a.gpus.push_back(i);
  }
  std::sort(a.cores.begin(), a.cores.end());
  return a;
}

}  // namespace

TEST_CASE("host effects: unbound cores slow a PCIe job; an NVLink job keeps its GPU-GPU path", "[host]") {
  // Unbound: the lowest 32 cores for 8 tasks (socket 0 only).
  const NodeAlloc unbound = eight_tasks([](int i) { return 4 * i; });
  SECTION("pcie-8gpu (cores 0-39 NUMA 0, 40-79 NUMA 1; GPU0-3 NUMA 0, GPU4-7 NUMA 1)") {
    const HostNode n = from_cluster("configs/pcie-8gpu.yaml");
    const HostModel m(defaults(), n.t, n.topo);
    const HostEffects fx = m.host_effects(unbound);
    // Every buffer first-touched on socket 0: its DMA split 8 ways = 7 GB/s; GPU4-7 read
    // across sockets, 4 of 8: x0.747143 -> 5.23 GB/s. Local reference 12.6016 GB/s:
    // 5.23 / 12.6016 = 0.415027.
    CHECK(fx.h2d_Bps == near(5.23e9));
    CHECK(fx.h2d_factor == near(5.23 / 12.6016));
    CHECK(fx.d2h_Bps == near(5.23e9));
    // Tasks 4-7: every core off their GPU's domain: 1 - 0.3 = 0.7.
    CHECK(fx.loader_factor == near(0.7));
    // No P2P beyond PXB: GPU0-GPU2 (NODE) and GPU0-GPU4 (SYS) go through host memory.
    // GPU4-7 have no core on their domain, so NCCL's buffers land on socket 0:
    // x(1 + (0.41 - 1) x 3 / 7) = 0.747143.
    CHECK(fx.host_staged);
    CHECK(fx.staging_factor == near(1 + (0.41 - 1) * 3.0 / 7.0));
    CHECK(fx.inter_node_Bps == near(6.25e9));
    CHECK(fx.gdr_factor == 1.0);
    CHECK_FALSE(fx.notes.empty());
    // Without notes (the step model's way): the same figures, nothing written.
    HostJobOptions quiet;
    quiet.notes = false;
    const HostEffects qx = m.host_effects(unbound, quiet);
    CHECK(qx.notes.empty());
    CHECK(qx.h2d_Bps == fx.h2d_Bps);
    CHECK(qx.d2h_Bps == fx.d2h_Bps);
    CHECK(qx.loader_factor == fx.loader_factor);
    CHECK(qx.staging_factor == fx.staging_factor);
    CHECK(qx.inter_node_Bps == fx.inter_node_Bps);
    CHECK(qx.gdr_factor == fx.gdr_factor);

    // numa-bound: tasks 0-3 on cores 0-15, tasks 4-7 on cores 40-55.
    const NodeAlloc bound = eight_tasks([](int i) { return i < 4 ? 4 * i : 40 + 4 * (i - 4); });
    const HostEffects bx = m.host_effects(bound);
    CHECK(bx.h2d_Bps == near(12.6016e9));
    CHECK(bx.h2d_factor == 1.0);
    CHECK(bx.loader_factor == 1.0);
    CHECK(bx.host_staged);
    CHECK(bx.staging_factor == 1.0);
  }
  SECTION("dgx-a100 (NVSwitch)") {
    const HostNode n = from_cluster("configs/dgx-a100-pod.yaml");
    const HostModel m(defaults(), n.t, n.topo);
    const HostEffects fx = m.host_effects(unbound);
    // Cores 0-31 = NUMA 0 and 1 (socket 0); no task's cores are on its GPU's domain
    // (GPU0,1 NUMA 3; 2,3 NUMA 1 but tasks 2,3 have cores 8-15 on NUMA 0; 4-7 socket 1).
    CHECK(fx.loader_factor == near(0.7));
    // Copies as on the PCIe node: 7 GB/s on socket 0, 5.23 GB/s across.
    CHECK(fx.h2d_Bps == near(5.23e9));
    // GPU-GPU traffic stays on NVLink: nothing staged through host memory.
    CHECK_FALSE(fx.host_staged);
    CHECK(fx.staging_factor == 1.0);
    CHECK(fx.inter_node_Bps == near(25e9));
    CHECK(fx.gdr_factor == 1.0);
  }
}

TEST_CASE("host calibration: measured figures replace the model's", "[host]") {
  const std::string text =
      "schema_version: 1\n"
      "source: hand-written test calibration\n"
      "node_templates:\n"
      "  dgx-a100:\n"
      "    copy: {h2d_local: 24GB/s, h2d_remote: 12GB/s}\n"
      "    gpus:\n"
      "      - {gpu: 1, h2d_local: 20GB/s}\n"
      "    all_gpus: {d2h_local: 20GB/s, d2h_remote: 5GB/s}\n"
      "    loader: {local: 1000, remote: 800}\n"
      "    gdr_factor: {sys: 0.6}\n"
      "  sys-420gp-tnr:\n"
      "    platform: intel-bdw\n";
  const fs::path file = fs::temp_directory_path() / "gcsim-host-calibration-test.yaml";
  {
    std::ofstream f(file);
    f << text;
  }
  const HostParams p = apply_host_calibration(defaults(), file.string());
  fs::remove(file);
  REQUIRE(p.calibration_for("dgx-a100") != nullptr);
  CHECK(p.calibration_for("dgx-a100")->sources.at(0) == file.string() + " (hand-written test calibration)");
  const HostNode n = from_cluster("configs/dgx-a100-pod.yaml");
  const HostModel m(p, n.t, n.topo);
  // Single stream: the measured 24 GB/s local, 12 remote (ratio 0.5 across sockets).
  CHECK(m.h2d_bandwidth_Bps(0, MemBinding::gpu_local()) == near(24e9));
  CHECK(m.h2d_bandwidth_Bps(0, MemBinding::on_numa(7)) == near(12e9));
  // GPU1's own figure 20 GB/s, remote by the template's ratio: 20 x 12/24 = 10 GB/s.
  CHECK(m.h2d_bandwidth_Bps(1, MemBinding::gpu_local()) == near(20e9));
  CHECK(m.h2d_bandwidth_Bps(1, MemBinding::on_numa(7)) == near(10e9));
  // GPU0 and GPU1 share sw0's uplink: efficiency 24/31.504 resp. 20/31.504 of half of it:
  // 12 and 10 GB/s.
  CHECK(m.h2d_bandwidth_Bps(0, MemBinding::gpu_local(), {1}) == near(12e9));
  CHECK(m.h2d_bandwidth_Bps(1, MemBinding::gpu_local(), {0}) == near(10e9));
  // D2H keeps the model's 25.2032 GB/s alone; all 8 from NUMA 0 use the measured
  // all-GPUs ratio 5/20 = 0.25: 7 x (1 + (0.25 - 1) x 3/7) = 7 x 0.678571 = 4.75 GB/s.
  CHECK(m.d2h_bandwidth_Bps(0, MemBinding::gpu_local()) == near(25.2032e9));
  CHECK(m.d2h_bandwidth_Bps(4, MemBinding::on_numa(0), range(0, 7)) == near(4.75e9));
  // Loader: rho = 1 - 800/1000 = 0.2 replaces 0.3.
  CHECK(m.loader_rho(LoaderKind::kMemoryBound) == near(0.2));
  CHECK(m.loader_rho(LoaderKind::kComputeBound) == 0.05);
  // Staged SYS: the measured ratio 0.6 of the NIC: 25 x 0.6 = 15 GB/s.
  CHECK(m.inter_node_bandwidth_Bps(m.route(0, 8)) == near(15e9));
  // The PCIe template now counts as Broadwell: 25.2032 x 0.31 = 7.812992 GB/s remote.
  const HostNode pn = from_cluster("configs/pcie-8gpu.yaml");
  const HostModel pm(p, pn.t, pn.topo);
  CHECK(pm.platform().name == "intel-bdw");
  CHECK(pm.h2d_bandwidth_Bps(0, MemBinding::on_numa(1)) == near(7.812992e9));
  // A GPU the template does not have.
  const HostParams bad = parse_host_calibration(
      defaults(), "schema_version: 1\nnode_templates:\n  dgx-a100:\n    gpus: [{gpu: 9, h2d_local: 20GB/s}]\n", "c.yaml");
  CHECK_THROWS_AS(HostModel(bad, n.t, n.topo), std::invalid_argument);
}

TEST_CASE("host: invalid parameter and calibration files give exact diagnostics", "[host][invalid]") {
  const std::string dir = "tests/inputs/invalid/host";
  std::vector<std::string> cases;
  for (const auto& entry : fs::directory_iterator(test::src(dir)))
    if (entry.path().extension() == ".yaml") cases.push_back(entry.path().filename().string());
  std::sort(cases.begin(), cases.end());
  CHECK(cases.size() >= 5);
  for (const auto& name : cases) {
    const std::string rel = dir + "/" + name;
    INFO(rel);
    const std::string expected_path = test::src(rel + ".expected");
    REQUIRE(fs::exists(expected_path));
    const std::string got = diagnostics_of(rel);
    CHECK(!got.empty());
    CHECK(got == read_input_file(expected_path));
  }
}
