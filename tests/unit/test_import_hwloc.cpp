// hwloc importer on the real fixtures in tests/data/hwloc: GPU NUMA domains and gres.conf
// Cores= against hwloc-calc's answers (expected.tsv), object counts against INVENTORY.tsv,
// the PCIe structure of g4dn.metal and DGX-2, NVLink, v1 files and the v3 refusal.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <hwloc.h>

#include "sim/cluster/import_hwloc.hpp"
#include "sim/core/input_file.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;

namespace {

std::string fixture(const std::string& rel) { return test::src("tests/data/hwloc/" + rel); }

HwlocImport load(const std::string& rel, Diagnostics* w = nullptr) {
  Diagnostics local;
  return import_hwloc_xml_detailed(fixture(rel), w ? *w : local);
}

// "0-3,8" -> {0,1,2,3,8}; "-" -> {}.
std::vector<int> parse_ranges(const std::string& s) {
  std::vector<int> out;
  if (s == "-") return out;
  for (auto part : split(s, ',')) {
    const std::string p(part);
    const auto dash = p.find('-');
    const int lo = std::stoi(p.substr(0, dash));
    const int hi = dash == std::string::npos ? lo : std::stoi(p.substr(dash + 1));
    for (int i = lo; i <= hi; ++i) out.push_back(i);
  }
  return out;
}

struct Row {
  std::map<std::string, std::string> f;
};

// Tab-separated table with a header line; '#' lines are comments.
std::vector<Row> read_tsv(const std::string& path) {
  std::vector<Row> rows;
  std::vector<std::string> header;
  const std::string text = read_input_file(path);
  for (auto line : split_lines(text)) {
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> cells;
    for (auto c : split(line, '\t')) cells.emplace_back(c);
    if (header.empty()) {
      header = cells;
      continue;
    }
    Row r;
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) r.f[header[i]] = cells[i];
    rows.push_back(std::move(r));
  }
  return rows;
}

bool has_warning(const Diagnostics& d, const std::string& needle) {
  return std::any_of(d.all().begin(), d.all().end(), [&](const Diagnostic& x) {
    return x.severity == Severity::kWarning && x.message.find(needle) != std::string::npos;
  });
}

int gpu_by_bus(const NodeTemplate& t, const std::string& bus) {
  for (size_t i = 0; i < t.gpus.size(); ++i)
    if (t.gpus[i].bus_id == bus) return static_cast<int>(i);
  return -1;
}

}  // namespace

TEST_CASE("hwloc GPU NUMA domains and Cores= match hwloc-calc on every GPU fixture", "[hwloc]") {
  const auto rows = read_tsv(fixture("expected.tsv"));
  std::map<std::string, std::vector<Row>> by_file;
  for (const auto& r : rows) by_file[r.f.at("file")].push_back(r);
  REQUIRE(by_file.size() == 20);
  size_t checked = 0;
  for (const auto& [file, gpus] : by_file) {
    INFO(file);
    Diagnostics w;
    const auto r = load(file, &w);
    REQUIRE(r.node.gpus.size() == gpus.size());
    REQUIRE(r.gpu_cores.size() == gpus.size());
    for (size_t i = 0; i < gpus.size(); ++i) {
      const auto& e = gpus[i].f;
      INFO("GPU " << e.at("bus_id"));
      const auto& g = r.node.gpus[i];
      CHECK(g.bus_id == e.at("bus_id"));  // also checks the PCI bus-id order
      CHECK(r.gpu_cores[i] == parse_ranges(e.at("cores")));
      if (e.at("numa") == "-") {
        CHECK(g.numa == 0);
        CHECK(has_warning(w, "GPU " + g.bus_id + " has no local CPU"));
      } else {
        CHECK(g.numa == std::stoi(e.at("numa")));
        // Every local core lies in the GPU's domain.
        for (int c : r.gpu_cores[i]) CHECK(r.node.numa_of_core(c) == g.numa);
      }
      ++checked;
    }
  }
  CHECK(checked == 101);
}

TEST_CASE("hwloc counts match INVENTORY.tsv", "[hwloc]") {
  // Files whose INVENTORY figure differs from the importer's on purpose.
  //  numa: CPU-less NUMA nodes (V100 memory in hwloc v1 files) are not domains; a package
  //        whose NUMA nodes do not split its cores (memoryless Threadripper dies, NUMA
  //        nodes spanning x3950 packages) is one domain.
  //  packages: packages without cores (the restricted UV2000 subset) are not sockets.
  //  gpus: INVENTORY counts the Radeon ES1000 server VGA chip as an AMD GPU and does not
  //        know the MI300A's PCI id.
  const std::map<std::string, int> numa_override = {{"flux/sierra.xml", 2},
                                                    {"mpibind/coral-lassen-hwloc1.xml", 2},
                                                    {"flux/chimera.xml", 1},
                                                    {"hwloc-tests/xml/96em64t-4n4d3ca2co-pci.xml", 16}};
  const std::map<std::string, int> package_override = {
      {"hwloc-tests/xml/64intel64-3g2n+2n-irregulargroups+pci.xml", 2}};
  const std::map<std::string, int> gpu_override = {{"hwloc-tests/xml/24em64t-2n6c2t-pci.xml", 3},
                                                   {"hwloc-tests/xml/96em64t-4n4d3ca2co-pci.xml", 0},
                                                   {"flux/tuo.CPX.xml", 4},
                                                   {"flux/tuo.SPX.xml", 4}};
  // PCI functions of class 0200/0207 in each XML.
  const std::map<std::string, size_t> nics = {
      {"flux/chimera.xml", 2},        {"flux/ipa20.xml", 6},           {"flux/lassen-0.xml", 6},
      {"mpibind/g4dnmetal.xml", 2},   {"mpibind/cts1-pascal.xml", 3},  {"hwloc-tests/xml/nvidiaDGX2.xml", 0},
      {"mpibind/eas-tioga.xml", 5},   {"flux/tuo.SPX.xml", 5},         {"hwloc-tests/xml/96em64t-4n4d3ca2co-pci.xml", 8},
      {"mpibind/coral-lassen.xml", 6}};
  std::map<std::string, Row> inv;
  for (auto& r : read_tsv(fixture("INVENTORY.tsv"))) inv[r.f.at("file (relative to shared/data/topology/hwloc/)")] = r;

  size_t files = 0;
  for (const auto& dir : {"flux", "hwloc-tests/xml", "mpibind"}) {
    for (const auto& [name, row] : inv) {
      if (name.rfind(std::string(dir) + "/", 0) != 0) continue;
      if (!std::ifstream(fixture(name))) continue;  // not copied
      INFO(name);
      const auto& e = row.f;
      const NodeTemplate t = load(name).node;
      CHECK(t.total_sockets() ==
            (package_override.count(name) ? package_override.at(name) : std::stoi(e.at("packages"))));
      CHECK(t.cores() == std::stoi(e.at("cores")));
      CHECK(t.cpus() == std::stoi(e.at("pus")));
      CHECK(static_cast<int>(t.cpu_os_ids.size()) == t.cpus());
      const int numa = numa_override.count(name) ? numa_override.at(name) : std::stoi(e.at("numa"));
      CHECK(t.numa_domains() == numa);
      const int gpus = gpu_override.count(name) ? gpu_override.at(name)
                                                : std::stoi(e.at("nvidia_gpus")) + std::stoi(e.at("amd_gpus"));
      CHECK(static_cast<int>(t.gpus.size()) == gpus);
      if (nics.count(name)) CHECK(t.nics.size() == nics.at(name));
      ++files;
    }
  }
  CHECK(files == 24);
}

TEST_CASE("hwloc g4dn.metal: eight T4s on their own root ports and two per host bridge", "[hwloc]") {
  const auto r = load("mpibind/g4dnmetal.xml");
  const NodeTemplate& t = r.node;
  REQUIRE(t.gpus.size() == 8);
  CHECK(t.sockets == 2);
  CHECK(t.numa_per_socket == 1);
  CHECK(t.cores_per_numa == 24);
  CHECK(t.threads_per_core == 2);
  CHECK(t.memory_mb == 395861840 / 1024);  // lstopo: Machine total=395861840KB
  // hwloc-calc --po core:0 / core:47 --intersect pu -> 0,48 and 47,95.
  CHECK(t.cpu_os_ids[0] == 0);
  CHECK(t.cpu_os_ids[1] == 48);
  CHECK(t.cpu_os_ids[94] == 47);
  CHECK(t.cpu_os_ids[95] == 95);
  std::set<int> switches;
  std::map<int, std::vector<std::string>> by_host_bridge;
  for (const auto& g : t.gpus) {
    CHECK(g.model == "Tesla T4");
    CHECK(g.gres_type == "tesla_t4");
    CHECK(g.memory_bytes == int64_t{15472384} * 1024);
    REQUIRE(g.pcie_switch >= 0);
    const auto& s = t.pcie_switches.at(static_cast<size_t>(g.pcie_switch));
    CHECK(s.name.rfind("rp:", 0) == 0);
    CHECK(s.parent == -1);
    CHECK(s.numa == g.numa);
    switches.insert(g.pcie_switch);
    by_host_bridge[s.host_bridge].push_back(g.bus_id);
  }
  CHECK(switches.size() == 8);  // no two GPUs share a switch
  std::set<std::vector<std::string>> pairs;
  for (const auto& [hb, buses] : by_host_bridge) pairs.insert(buses);
  CHECK(pairs == std::set<std::vector<std::string>>{{"0000:18:00.0", "0000:19:00.0"},
                                                    {"0000:35:00.0", "0000:36:00.0"},
                                                    {"0000:e7:00.0", "0000:e8:00.0"},
                                                    {"0000:f4:00.0", "0000:f5:00.0"}});
  CHECK(t.nvlink.kind == NvlinkKind::kNone);
  // EFA and ENA sit behind one switch on the second socket.
  REQUIRE(t.nics.size() == 2);
  CHECK(t.nics[0].pcie_switch == t.nics[1].pcie_switch);
  CHECK(t.nics[0].numa == 1);
  CHECK(t.nics[1].name == "eth0");
}

TEST_CASE("hwloc DGX-2: GPU pairs share a switch under two levels of PEX9781 and NVSwitch", "[hwloc]") {
  const auto r = load("hwloc-tests/xml/nvidiaDGX2.xml");
  const NodeTemplate& t = r.node;
  REQUIRE(t.gpus.size() == 16);
  CHECK(t.cores() == 4);  // saved restricted to PUs 0, 1, 24, 25
  CHECK(t.cpu_os_ids == std::vector<int>{0, 1, 24, 25});
  std::map<int, std::vector<std::string>> by_switch;
  for (const auto& g : t.gpus) {
    REQUIRE(g.pcie_switch >= 0);
    by_switch[g.pcie_switch].push_back(g.bus_id);
    CHECK(g.gres_type == "tesla_v100-sxm3-32gb-h");
  }
  std::set<std::vector<std::string>> groups;
  for (const auto& [s, buses] : by_switch) groups.insert(buses);
  CHECK(groups == std::set<std::vector<std::string>>{
                      {"0000:34:00.0", "0000:36:00.0"}, {"0000:39:00.0", "0000:3b:00.0"},
                      {"0000:57:00.0", "0000:59:00.0"}, {"0000:5c:00.0", "0000:5e:00.0"},
                      {"0000:b7:00.0", "0000:b9:00.0"}, {"0000:bc:00.0", "0000:be:00.0"},
                      {"0000:e0:00.0", "0000:e2:00.0"}, {"0000:e5:00.0", "0000:e7:00.0"}});
  // The two leaf switches of a quad hang off one upstream switch, which hangs off a root
  // port of its own host bridge; four quads, four host bridges.
  auto sw = [&](int i) { return t.pcie_switches.at(static_cast<size_t>(i)); };
  const int a = t.gpus[0].pcie_switch, b = t.gpus[2].pcie_switch, c = t.gpus[4].pcie_switch;
  CHECK(sw(a).parent == sw(b).parent);
  CHECK(sw(a).parent != sw(c).parent);
  const auto up = sw(sw(a).parent);
  CHECK(up.name == "sw:0000:2c:00.0");
  REQUIRE(up.parent >= 0);
  CHECK(sw(up.parent).name == "rp:0000:2b:00.0");
  CHECK(sw(up.parent).parent == -1);
  std::set<int> hbs;
  for (const auto& g : t.gpus) hbs.insert(sw(g.pcie_switch).host_bridge);
  CHECK(hbs.size() == 4);
  CHECK(sw(a).gen == 3);
  CHECK(sw(a).width == 16);  // 15.75 GB/s
  // 12 NVSwitch PCI devices; each GPU has 25000 MB/s to 6 of them.
  CHECK(t.nvlink.kind == NvlinkKind::kNvswitch);
  CHECK(t.nvlink.links_per_gpu == 6);
  CHECK(t.nvlink.link_bandwidth_bps == Approx(25000 * 8e6));
}

TEST_CASE("hwloc NVLink matrices become link counts", "[hwloc]") {
  SECTION("POWER8 Minsky: P100 pairs with two NVLink 1 links") {
    const NodeTemplate t = load("hwloc-tests/xml/power8gpudistances.xml").node;
    REQUIRE(t.nvlink.kind == NvlinkKind::kPairs);
    REQUIRE(t.nvlink.pairs.size() == 2);
    CHECK(t.nvlink.pairs[0].a == 0);
    CHECK(t.nvlink.pairs[0].b == 1);
    CHECK(t.nvlink.pairs[0].links == 2);
    CHECK(t.nvlink.pairs[1].a == 2);
    CHECK(t.nvlink.pairs[1].b == 3);
    CHECK(t.nvlink.pairs[1].links == 2);
    CHECK(t.nvlink.link_bandwidth_bps == Approx(20000 * 8e6));
  }
  SECTION("Dell XE8640: four H100s fully connected, six links a pair") {
    const NodeTemplate t = load("flux/ipa20.xml").node;
    REQUIRE(t.nvlink.kind == NvlinkKind::kPairs);
    REQUIRE(t.nvlink.pairs.size() == 6);
    for (const auto& p : t.nvlink.pairs) CHECK(p.links == 6);
    CHECK(t.numa_per_socket == 4);  // SNC4
    CHECK(t.cores_per_numa == 14);
    CHECK(t.gpus[0].gres_type == "h100_80gb_hbm3");
    CHECK(t.gpus[0].memory_bytes == int64_t{83026944} * 1024);
    // hwloc-calc --po core:111 --intersect pu -> 111,223.
    CHECK(t.cpu_os_ids[222] == 111);
    CHECK(t.cpu_os_ids[223] == 223);
  }
  SECTION("Lassen has SXM2 V100s but no matrix: warned, not modelled") {
    Diagnostics w;
    const NodeTemplate t = load("mpibind/coral-lassen.xml", &w).node;
    CHECK(t.nvlink.kind == NvlinkKind::kNone);
    CHECK(has_warning(w, "no NVLinkBandwidth matrix"));
  }
}

TEST_CASE("hwloc LLNL Pascal: both P100s and the HCA behind one PEX 8747", "[hwloc]") {
  const NodeTemplate t = load("mpibind/cts1-pascal.xml").node;
  REQUIRE(t.gpus.size() == 2);
  REQUIRE(t.nics.size() == 3);
  CHECK(t.gpus[0].pcie_switch == t.gpus[1].pcie_switch);
  const auto& s = t.pcie_switches.at(static_cast<size_t>(t.gpus[0].pcie_switch));
  CHECK(s.name == "sw:0000:02:00.0");
  CHECK(s.gen == 3);
  CHECK(s.width == 16);
  CHECK(t.pcie_switches.at(static_cast<size_t>(s.parent)).name == "rp:0000:00:03.0");
  const auto ib = std::find_if(t.nics.begin(), t.nics.end(), [](const NicSpec& n) { return n.name == "mlx5_0"; });
  REQUIRE(ib != t.nics.end());
  CHECK(ib->bus_id == "0000:08:00.0");
  CHECK(ib->pcie_switch == t.gpus[0].pcie_switch);
  CHECK(ib->bandwidth_bps == Approx(15.753846 * 8e9).epsilon(1e-6));
  CHECK(t.gpus[0].model == "Tesla P100-PCIE-16GB");
  CHECK(t.gpus[0].gres_type == "tesla_p100-pcie-16gb");
  CHECK(t.gpus[0].memory_bytes == int64_t{16671616} * 1024);
  CHECK(t.cpu_os_ids[0] == 0);
  CHECK(t.cpu_os_ids[1] == 36);
}

TEST_CASE("hwloc v1 files import like their v2 counterparts", "[hwloc]") {
  SECTION("16amd64-4distances") {
    const NodeTemplate v1 = load("hwloc-tests/xml/16amd64-4distances.v1.xml").node;
    const NodeTemplate v2 = load("hwloc-tests/xml/16amd64-4distances.xml").node;
    CHECK(v1.sockets == 8);
    CHECK(v1.sockets == v2.sockets);
    CHECK(v1.numa_per_socket == v2.numa_per_socket);
    CHECK(v1.cores_per_numa == v2.cores_per_numa);
    CHECK(v1.threads_per_core == v2.threads_per_core);
    CHECK(v1.memory_mb == v2.memory_mb);
    CHECK(v1.cpu_os_ids == v2.cpu_os_ids);
  }
  SECTION("Lassen: the v1 file's V100-memory NUMA nodes are not domains") {
    Diagnostics w;
    const NodeTemplate v1 = load("mpibind/coral-lassen-hwloc1.xml", &w).node;
    const NodeTemplate v2 = load("mpibind/coral-lassen.xml").node;
    CHECK(has_warning(w, "CPU-less NUMA node(s) P#252,253,254,255"));
    CHECK(v1.numa_domains() == 2);
    CHECK(v1.memory_mb == v2.memory_mb);
    CHECK(v1.cpu_os_ids == v2.cpu_os_ids);
    // hwloc-calc --po core:0 --intersect pu -> 8,9,10,11 (PUs 0-7 are reserved by the site).
    CHECK(std::vector<int>(v2.cpu_os_ids.begin(), v2.cpu_os_ids.begin() + 4) == std::vector<int>{8, 9, 10, 11});
    REQUIRE(v1.gpus.size() == v2.gpus.size());
    for (size_t i = 0; i < v1.gpus.size(); ++i) {
      CHECK(v1.gpus[i].bus_id == v2.gpus[i].bus_id);
      CHECK(v1.gpus[i].numa == v2.gpus[i].numa);
      CHECK(v1.gpus[i].gres_type == v2.gpus[i].gres_type);
    }
  }
}

TEST_CASE("hwloc irregular layouts are made uniform with warnings", "[hwloc]") {
  SECTION("Threadripper 2990WX: half the cores have no local memory") {
    Diagnostics w;
    const NodeTemplate t = load("flux/chimera.xml", &w).node;
    CHECK(has_warning(w, "P#0: NUMA nodes cover 16 of its 32 cores"));
    CHECK(t.numa_domains() == 1);
    CHECK(t.cores() == 32);
    REQUIRE(t.gpus.size() == 2);
    CHECK(t.gpus[0].gres_type == "geforce_gtx_1070");
    CHECK(t.gpus[1].gres_type == "radeon_vega_frontier_edition");
  }
  SECTION("x3950 M2: NUMA nodes span four packages each") {
    Diagnostics w;
    const NodeTemplate t = load("hwloc-tests/xml/96em64t-4n4d3ca2co-pci.xml", &w).node;
    CHECK(has_warning(w, "P#15: NUMA node P#3 spans several packages"));
    CHECK(t.sockets == 16);
    CHECK(t.numa_per_socket == 1);
    CHECK(t.cores_per_numa == 6);
    CHECK(t.gpus.empty());  // its only VGA is a Radeon ES1000
  }
  SECTION("Cluster-on-Die: two NUMA domains per package") {
    const NodeTemplate t = load("hwloc-tests/xml/28intel64-2p2g7c-CoDgroups.v1tov2.xml").node;
    CHECK(t.sockets == 2);
    CHECK(t.numa_per_socket == 2);
    CHECK(t.cores_per_numa == 7);
  }
  SECTION("UV2000 subset: GPUs on packages without CPUs") {
    Diagnostics w;
    const auto r = load("hwloc-tests/xml/64intel64-3g2n+2n-irregulargroups+pci.xml", &w);
    CHECK(has_warning(w, "package(s) P#4,6,8 have no cores"));
    CHECK(r.node.sockets == 2);
    REQUIRE(r.node.gpus.size() == 2);
    CHECK(r.node.gpus[0].model == "Quadro K5000");  // from the PCI id table
    CHECK(r.gpu_cores[0].empty());
  }
  SECTION("MI300A in CPX mode: six partitions per APU stay one GPU") {
    Diagnostics w;
    const NodeTemplate t = load("flux/tuo.CPX.xml", &w).node;
    CHECK(t.gpus.size() == 4);
    CHECK(t.gpus[0].gres_type == "instinct_mi300a");
    CHECK(has_warning(w, "6 RSMI devices"));
  }
  SECTION("Tioga: each MI250X GCD is local to one L3, half a NUMA domain") {
    const auto r = load("mpibind/eas-tioga.xml");
    const int g = gpu_by_bus(r.node, "0000:d6:00.0");
    REQUIRE(g >= 0);
    CHECK(r.node.gpus[static_cast<size_t>(g)].numa == 0);
    CHECK(r.gpu_cores[static_cast<size_t>(g)] == parse_ranges("8-15"));
    CHECK(r.node.gpus[static_cast<size_t>(g)].memory_bytes == int64_t{67092480} * 1024);
  }
  SECTION("GPUs without OS devices take the model of a sibling with the same PCI id") {
    const NodeTemplate t = load("hwloc-tests/xml/32em64t-2n8c2t-pci-normalio.xml").node;
    REQUIRE(t.gpus.size() == 4);
    CHECK(t.gpus[0].model == "Tesla K40m");
    CHECK(t.gpus[0].memory_bytes == t.gpus[2].memory_bytes);
    CHECK(t.gpus[3].gres_type == "radeon_r9_200_hd_7900_series");
  }
}

TEST_CASE("hwloc XML errors are file-level InputErrors", "[hwloc]") {
  Diagnostics w;
  SECTION("hwloc 3.0 XML is refused by name") {
    try {
      (void)import_hwloc_xml(fixture("spec/cxlmem+dax.v3.xml"), w);
      FAIL("no error");
    } catch (const InputError& e) {
      REQUIRE(e.diagnostics().all().size() == 1);
      const auto& d = e.diagnostics().all().front();
      CHECK(d.loc.file == fixture("spec/cxlmem+dax.v3.xml"));
      CHECK(d.loc.line == 0);
      CHECK(d.message.find("hwloc XML version 3.0 is not supported") != std::string::npos);
    }
  }
  SECTION("a file that is not XML") {
    CHECK_THROWS_WITH(import_hwloc_xml(fixture("expected.tsv"), w), Catch::Contains("not a valid hwloc XML topology"));
  }
  SECTION("a missing file") {
    CHECK_THROWS_AS(import_hwloc_xml(fixture("no-such-file.xml"), w), InputError);
  }
}

TEST_CASE("hwloc gzipped XML reads like the plain file", "[hwloc]") {
  const NodeTemplate a = load("mpibind/cts1-pascal.xml").node;
  const NodeTemplate b = load("mpibind/cts1-pascal.xml.gz").node;
  CHECK(b.name == "cts1-pascal");
  CHECK(a.cpu_os_ids == b.cpu_os_ids);
  REQUIRE(a.gpus.size() == b.gpus.size());
  CHECK(a.gpus[1].bus_id == b.gpus[1].bus_id);
  CHECK(a.pcie_switches.size() == b.pcie_switches.size());
}

TEST_CASE("hwloc gres type slugs and NVLink per-link figures", "[hwloc]") {
  CHECK(gres_type_slug("Tesla V100-SXM2-16GB") == "tesla_v100-sxm2-16gb");
  CHECK(gres_type_slug("NVIDIA H100 80GB HBM3") == "h100_80gb_hbm3");
  CHECK(gres_type_slug("Vega 20 WKS GL-XE [Radeon Pro VII]") == "radeon_pro_vii");
  CHECK(gres_type_slug("AMD Radeon R9 200 / HD 7900 Series") == "radeon_r9_200_hd_7900_series");
  CHECK(gres_type_slug("  ") == "gpu");
  CHECK(nvlink_link_mbps("Tesla P100-SXM2-16GB") == 20000);
  CHECK(nvlink_link_mbps("Tesla V100-SXM2-16GB") == 25000);
  CHECK(nvlink_link_mbps("NVIDIA B200") == 50000);
}

TEST_CASE("hwloc live topology of this machine converts", "[hwloc]") {
  // The real mode calls import_hwloc_topology on the running machine; only invariants can
  // be checked here, whatever the machine is.
  hwloc_topology_t topo = nullptr;
  REQUIRE(hwloc_topology_init(&topo) == 0);
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  REQUIRE(hwloc_topology_load(topo) == 0);
  Diagnostics w;
  const NodeTemplate t = import_hwloc_topology(topo, "live", w);
  const int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  hwloc_topology_destroy(topo);
  CHECK(t.name == "live");
  CHECK(t.cores() >= 1);
  CHECK(t.cpus() <= pus);
  CHECK(static_cast<int>(t.cpu_os_ids.size()) == t.cpus());
  CHECK(std::set<int>(t.cpu_os_ids.begin(), t.cpu_os_ids.end()).size() == t.cpu_os_ids.size());
  CHECK(t.memory_mb > 0);
}
