// NCCL topology XML importer: the strict XML reader (entities, comments, errors with
// line:col), every cloud fixture with its GPU / NVLink / NIC / switch counts, the quirks
// (graph file, GPU-less p5, the link-speed typo, VM link widths), NVLink from dumps.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "sim/cluster/import_nccl_xml.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;

namespace {

std::string fixture(const std::string& name) { return test::src("tests/data/nccl-xml/" + name); }

bool any_message(const Diagnostics& d, const std::string& part) {
  for (const auto& x : d.all())
    if (x.message.find(part) != std::string::npos) return true;
  return false;
}

/// Writes `text` to a fresh file under the temp directory and returns its path.
std::string temp_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "gcsim-test-nccl-xml";
  std::filesystem::create_directories(dir);
  const auto p = dir / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

std::string xml_error(const std::string& text) {
  try {
    (void)parse_xml(text, "t.xml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

struct Expect {
  std::string file;
  size_t gpus, nics, switches;
  NvlinkKind nvlink;
  size_t nvlink_pairs;
  int numa, cores_per_numa, threads;
};

}  // namespace

TEST_CASE("nccl-xml: XML reader basics", "[nccl-xml]") {
  const XmlElement r = parse_xml(
      "\xEF\xBB\xBF<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!-- c -->\n"
      "<a x='1' y=\"&lt;&amp;&gt;&quot;&apos;&#65;&#x42;\">\n  <b/><!-- in -->text<c z = \"2\" ></c>\n</a>\n",
      "t.xml");
  CHECK(r.name == "a");
  CHECK(*r.attr("x") == "1");
  CHECK(*r.attr("y") == "<&>\"'AB");
  REQUIRE(r.children.size() == 2);
  CHECK(r.children[0].name == "b");
  CHECK(r.children[1].line == 4);
  CHECK(r.children[1].col == 22);
  CHECK(*r.children[1].attr("z") == "2");
  CHECK(r.attr("nope") == nullptr);
}

TEST_CASE("nccl-xml: XML errors carry line and column", "[nccl-xml]") {
  CHECK(xml_error("<a>\n  <b></c>\n</a>") == "t.xml:2:6: error: </c> does not match <b> opened at 2:3");
  CHECK(xml_error("<a x=1/>") == "t.xml:1:6: error: attribute 'x' value must be quoted");
  CHECK(xml_error("<a x='&nbsp;'/>") == "t.xml:1:7: error: unknown entity '&nbsp;'");
  CHECK(xml_error("<a x='1' x='2'/>") == "t.xml:1:10: error: duplicate attribute 'x'");
  CHECK(xml_error("<a>\n<b>\n</a>") == "t.xml:3:1: error: </a> does not match <b> opened at 2:1");
  CHECK(xml_error("<a>") == "t.xml:1:1: error: <a> is never closed");
  CHECK(xml_error("<a/><b/>") == "t.xml:1:5: error: second root element <b> (an XML document has one)");
  CHECK(xml_error("<!-- x") == "t.xml:1:1: error: unterminated comment (no '-->')");
  CHECK(xml_error("<!DOCTYPE a [<!ENTITY x \"y\">]><a/>") ==
        "t.xml:1:13: error: a DOCTYPE with an internal subset is not supported");
  CHECK(xml_error("<!DOCTYPE a SYSTEM \"a.dtd\"") == "t.xml:1:1: error: unterminated DOCTYPE");
  CHECK(xml_error("<!DOCTYPE a SYSTEM \"a.dtd\"><a/>") == "no error");
  CHECK(xml_error("<a x='<'/>") == "t.xml:1:7: error: '<' in an attribute value (write &lt;)");
  CHECK(xml_error("<a>&</a>") == "t.xml:1:4: error: '&' that does not start an entity (write &amp;)");
  CHECK(xml_error("") == "t.xml:1:1: error: no root element");
}

TEST_CASE("nccl-xml: every topology fixture imports with the expected counts", "[nccl-xml]") {
  const std::vector<Expect> all = {
      // file, GPUs, NICs, switches, NVLink, pairs, NUMA, cores/NUMA, threads
      {"aws/g5.48xl-topo.xml", 0, 0, 0, NvlinkKind::kNone, 0, 2, 1, 1},
      {"aws/p4d-24xl-topo.xml", 8, 4, 4, NvlinkKind::kNone, 0, 2, 24, 2},
      {"aws/p4de-24xl-topo.xml", 8, 4, 4, NvlinkKind::kNone, 0, 2, 24, 2},
      {"aws/p5.48xl-topo.v2026.xml", 8, 32, 8, NvlinkKind::kNone, 0, 1, 48, 1},
      {"aws/p5.48xl-topo.xml", 0, 0, 8, NvlinkKind::kNone, 0, 2, 1, 1},
      {"azure/ncv4-topo.xml", 4, 1, 0, NvlinkKind::kNone, 0, 4, 24, 1},
      {"azure/ndv2-topo.xml", 8, 1, 0, NvlinkKind::kNone, 0, 2, 20, 1},
      {"azure/ndv4-topo.xml", 8, 8, 4, NvlinkKind::kNone, 0, 4, 24, 1},
      {"azure/ndv5-topo.xml", 8, 8, 8, NvlinkKind::kNone, 0, 2, 48, 1},
  };
  for (const auto& e : all) {
    INFO(e.file);
    Diagnostics w;
    const NodeTemplate t = import_nccl_topo_xml(fixture(e.file), w);
    CHECK(t.gpus.size() == e.gpus);
    CHECK(t.nics.size() == e.nics);
    CHECK(t.pcie_switches.size() == e.switches);
    CHECK(t.nvlink.kind == e.nvlink);
    CHECK(t.nvlink.pairs.size() == e.nvlink_pairs);
    CHECK(t.numa_domains() == e.numa);
    CHECK(t.cores_per_numa == e.cores_per_numa);
    CHECK(t.threads_per_core == e.threads);
    CHECK_FALSE(w.has_errors());
    for (const auto& s : t.pcie_switches) CHECK(s.levels == 1);
  }
}

TEST_CASE("nccl-xml: AWS p4d fake switches group two A100s and one EFA", "[nccl-xml]") {
  Diagnostics w;
  const NodeTemplate t = import_nccl_topo_xml(fixture("aws/p4d-24xl-topo.xml"), w);
  REQUIRE(t.gpus.size() == 8);
  CHECK(t.name == "p4d-24xl-topo");
  CHECK(t.gpus[0].model == "NVIDIA A100-SXM4-40GB");
  CHECK(t.gpus[0].gres_type == "a100");
  CHECK(t.gpus[0].memory_bytes == (int64_t{40} << 30));
  CHECK(t.gpus[0].bus_id == "0000:10:1c.0");
  for (int g = 0; g < 8; ++g) {
    CHECK(t.gpus[g].pcie_switch == g / 2);
    CHECK(t.gpus[g].numa == g / 4);
  }
  for (int n = 0; n < 4; ++n) CHECK(t.nics[n].pcie_switch == n);
  CHECK(t.pcie_switches[2].name == "ffff:ff:03.0");
  CHECK(t.pcie_switches[2].numa == 1);
  CHECK(t.pcie_switches[2].gen == 3);
  CHECK(t.pcie_switches[2].parent == -1);
  CHECK(any_message(w, "NIC without a <nic><net> element: named by its bus id, speed unknown (4 times"));
  CHECK(t.nics[0].name == "0000:10:1b.0");
  // Affinity "000000ff,ffff0000,00ffffff": NUMA 0 is OS CPUs 0-23 and 48-71.
  REQUIRE(t.cpu_os_ids.size() == 96);
  CHECK(t.cpu_os_ids[1] == 48);
  CHECK(t.cpu_os_ids[24 * 2] == 24);
  Diagnostics w2;
  const NodeTemplate e = import_nccl_topo_xml(fixture("aws/p4de-24xl-topo.xml"), w2);
  CHECK(e.gpus[7].model == "NVIDIA A100-SXM4-80GB");
  CHECK(e.gpus[7].gres_type == "a100_80gb");
}

TEST_CASE("nccl-xml: AWS p5 full topology: one H100 and four EFA per switch", "[nccl-xml]") {
  Diagnostics w;
  const NodeTemplate t = import_nccl_topo_xml(fixture("aws/p5.48xl-topo.v2026.xml"), w);
  REQUIRE(t.gpus.size() == 8);
  CHECK(t.gpus[3].model == "NVIDIA H100");
  CHECK(t.gpus[3].gres_type == "h100");
  CHECK(t.gpus[3].bus_id == "0000:80:00.0");
  REQUIRE(t.nics.size() == 32);
  CHECK(t.nics[0].name == "rdmap79s0");
  CHECK(t.nics[31].name == "rdmap201s0");
  for (const auto& n : t.nics) CHECK(n.bandwidth_bps == Approx(100e9));
  for (int n = 0; n < 32; ++n) CHECK(t.nics[n].pcie_switch == t.gpus[n / 4].pcie_switch);
  CHECK(t.pcie_switches[0].gen == 4);
  CHECK(t.pcie_switches[0].width == 16);
}

TEST_CASE("nccl-xml: quirks: old p5 typo and g5 bus ids and VM link widths and the graph file", "[nccl-xml]") {
  Diagnostics w;
  const NodeTemplate p5 = import_nccl_topo_xml(fixture("aws/p5.48xl-topo.xml"), w);
  CHECK(p5.gpus.empty());
  CHECK(any_message(w, "malformed link_speed '32 GT/s PCIe/s'; read as 32 GT/s (32 times"));
  CHECK(p5.pcie_switches.size() == 8);
  CHECK(p5.pcie_switches[4].numa == 1);
  CHECK(any_message(w, "32 PCI device(s) without class"));
  CHECK(any_message(w, "the topology lists no GPUs"));

  Diagnostics wg;
  const NodeTemplate g5 = import_nccl_topo_xml(fixture("aws/g5.48xl-topo.xml"), wg);
  CHECK(any_message(wg, "9 PCI device(s) without class"));

  Diagnostics wn;
  const NodeTemplate nc = import_nccl_topo_xml(fixture("azure/ncv4-topo.xml"), wn);
  CHECK(any_message(wn, "link_width=\"0\""));
  CHECK(any_message(wn, "NVLink from a GPU to itself; ignored (4 times"));
  CHECK(nc.gpus[2].model == "NVIDIA A100 80GB PCIe");
  CHECK(nc.gpus[2].numa == 2);
  CHECK(nc.gpus[2].pcie_switch == -1);
  REQUIRE(nc.nics.size() == 1);
  CHECK(nc.nics[0].name == "eth0");
  CHECK(nc.nics[0].bandwidth_bps == Approx(100e9));
  CHECK(nc.nics[0].numa == 0);

  Diagnostics wd;
  const NodeTemplate nd = import_nccl_topo_xml(fixture("azure/ndv4-topo.xml"), wd);
  CHECK(nd.gpus[2].bus_id == "0001:00:00.0");
  CHECK(nd.gpus[2].numa == 1);
  CHECK(any_message(wd, "GPU model unknown"));
  CHECK(nd.gpus[0].gres_type == "gpu");
  Diagnostics w5;
  const NodeTemplate n5 = import_nccl_topo_xml(fixture("azure/ndv5-topo.xml"), w5);
  CHECK(n5.pcie_switches[0].gen == 5);
  CHECK(n5.nics[7].pcie_switch == n5.gpus[7].pcie_switch);

  Diagnostics wgr;
  try {
    (void)import_nccl_topo_xml(fixture("azure/ncv4-graph.xml"), wgr);
    FAIL("graph file accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("this is an NCCL graph file (NCCL_GRAPH_FILE), not a topology") !=
          std::string::npos);
    CHECK(std::string(e.what()).find("ncv4-graph.xml:1:1:") != std::string::npos);
  }
}

TEST_CASE("nccl-xml: NVLink from an NCCL dump (NVSwitch and GPU pairs)", "[nccl-xml]") {
  // DGX A100 style: each GPU has 6 x 2 links to NVSwitches (12 per GPU).
  std::string sw = "<system version=\"1\">\n <cpu numaid=\"0\" affinity=\"0000ffff\">\n";
  for (int g = 0; g < 4; ++g) {
    sw += "  <pci busid=\"0000:0" + std::to_string(g) + ":00.0\" class=\"0x030200\" link_speed=\"16.0 GT/s PCIe\" "
          "link_width=\"16\">\n   <gpu dev=\"" + std::to_string(3 - g) + "\" sm=\"80\" rank=\"0\" gdr=\"1\">\n";
    for (int s = 0; s < 6; ++s)
      sw += "    <nvlink target=\"0000:c" + std::to_string(s) + ":00.0\" count=\"2\" tclass=\"0x068000\"/>\n";
    sw += "   </gpu>\n  </pci>\n";
  }
  sw += " </cpu>\n</system>\n";
  Diagnostics w;
  const NodeTemplate t = import_nccl_topo_xml(temp_file("dgx.xml", sw), w);
  REQUIRE(t.gpus.size() == 4);
  CHECK(t.nvlink.kind == NvlinkKind::kNvswitch);
  CHECK(t.nvlink.links_per_gpu == 12);
  CHECK(t.nvlink.link_bandwidth_bps == Approx(200e9));
  CHECK(t.gpus[0].bus_id == "0000:03:00.0");  // ordered by dev
  CHECK(t.gpus[0].model == "NVIDIA A100");

  // DGX-1 style: GPU-GPU links with counts 1 and 2, seen from both ends.
  const std::string pairs =
      "<system version=\"1\"><cpu numaid=\"0\" affinity=\"ff\">"
      "<pci busid=\"0000:10:00.0\" class=\"0x030200\"><gpu dev=\"0\" sm=\"70\">"
      "<nvlink target=\"0000:11:00.0\" count=\"2\" tclass=\"0x030200\"/>"
      "<nvlink target=\"0000:12:00.0\" count=\"1\" tclass=\"0x030200\"/></gpu></pci>"
      "<pci busid=\"0000:11:00.0\" class=\"0x030200\"><gpu dev=\"1\" sm=\"70\">"
      "<nvlink target=\"0000:10:00.0\" count=\"2\" tclass=\"0x030200\"/></gpu></pci>"
      "<pci busid=\"0000:12:00.0\" class=\"0x030200\"><gpu dev=\"2\" sm=\"70\">"
      "<nvlink target=\"0000:10:00.0\" count=\"1\" tclass=\"0x030200\"/>"
      "<nvlink target=\"0000:99:00.0\" count=\"1\" tclass=\"0x030200\"/></gpu></pci>"
      "</cpu></system>";
  Diagnostics wp;
  const NodeTemplate p = import_nccl_topo_xml(temp_file("dgx1.xml", pairs), wp);
  CHECK(p.nvlink.kind == NvlinkKind::kPairs);
  REQUIRE(p.nvlink.pairs.size() == 2);
  CHECK(p.nvlink.pairs[0].a == 0);
  CHECK(p.nvlink.pairs[0].b == 1);
  CHECK(p.nvlink.pairs[0].links == 2);
  CHECK(p.nvlink.pairs[1].b == 2);
  CHECK(p.nvlink.pairs[1].links == 1);
  CHECK(p.gpus[0].gres_type == "v100");
  CHECK(any_message(wp, "NVLink target 0000:99:00.0 is not a GPU of this topology"));
  CHECK(p.cores_per_numa == 8);
}

TEST_CASE("nccl-xml: non-topology roots and XML errors in files", "[nccl-xml]") {
  Diagnostics w;
  auto msg = [&](const std::string& name, const std::string& text) {
    try {
      (void)import_nccl_topo_xml(temp_file(name, text), w);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(msg("root.xml", "<topology version=\"2.0\"/>").find(
            "1:1: error: expected an NCCL topology (<system version=\"1\">), found <topology>") != std::string::npos);
  CHECK(msg("empty.xml", "<system version=\"1\"/>").find("no <cpu> element") != std::string::npos);
  CHECK(msg("bad.xml", "<system>\n<cpu numaid=\"0\">\n</system>").find("bad.xml:3:1: error: </system> does not match") !=
        std::string::npos);
}
