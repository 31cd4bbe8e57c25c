// Imported machine descriptions as YAML node templates, and path classes that the
// topology graph derives from real hwloc fixtures.
#include <catch2/catch.hpp>

#include "sim/cluster/cluster_yaml.hpp"
#include "sim/cluster/import_hwloc.hpp"
#include "sim/cluster/topo_views.hpp"
#include "sim/cluster/topology.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;
using gcsim::test::src;

TEST_CASE("YAML node templates can import hwloc XML and nvidia-smi matrices", "[cluster][import]") {
  const Cluster c = load_cluster_yaml(src("tests/data/sched/imported-templates.yaml"));
  REQUIRE(c.templates.size() == 2);
  REQUIRE(c.nodes.size() == 6);
  const NodeTemplate& xe = c.templates[0];
  CHECK(xe.gpus.size() == 4);
  CHECK(xe.gpus[0].gres_type == "h100");
  const NodeTemplate& dgx = c.templates[1];
  CHECK(dgx.total_sockets() == 2);
  CHECK(dgx.numa_domains() == 8);
  CHECK(dgx.memory_mb == 2 * 1024 * 1024);
  // GPU0 of a DGX A100 is on NUMA 3, cores 48-63 (the real nvidia-smi affinity).
  const NodeTopology topo = build_node_topology(dgx);
  CHECK(topo.gpu_numa(0) == 3);
  CHECK(topo.gpu_local_cores(0).front() == 48);
  CHECK(topo.gpu_local_cores(0).back() == 63);
  CHECK(topo.path(DeviceRef::gpu(0), DeviceRef::gpu(7)).label() == "NV12");
  CHECK(topo.path(DeviceRef::gpu(0), DeviceRef::nic(0)).label() == "PXB");
  CHECK(topo.path(DeviceRef::gpu(0), DeviceRef::nic(2)).label() == "SYS");
}

TEST_CASE("path classes of GPU pairs in real hwloc topologies", "[topology][hwloc]") {
  Diagnostics w;
  SECTION("AWS g4dn.metal: eight T4 on root ports, two per host bridge, two sockets") {
    const NodeTopology t = build_node_topology(import_hwloc_xml(src("tests/data/hwloc/mpibind/g4dnmetal.xml"), w));
    REQUIRE(t.gpu_count() == 8);
    CHECK(t.path(DeviceRef::gpu(0), DeviceRef::gpu(1)).label() == "PHB");
    CHECK(t.path(DeviceRef::gpu(0), DeviceRef::gpu(2)).label() == "NODE");
    CHECK(t.path(DeviceRef::gpu(0), DeviceRef::gpu(4)).label() == "SYS");
    CHECK(t.path(DeviceRef::gpu(6), DeviceRef::gpu(7)).label() == "PHB");
  }
  SECTION("LLNL cts1 Pascal: two P100 behind one PCIe switch") {
    const NodeTopology t = build_node_topology(import_hwloc_xml(src("tests/data/hwloc/mpibind/cts1-pascal.xml"), w));
    REQUIRE(t.gpu_count() == 2);
    CHECK(t.path(DeviceRef::gpu(0), DeviceRef::gpu(1)).label() == "PIX");
  }
  SECTION("DGX-2: sixteen V100 on the NVSwitch fabric") {
    const NodeTopology t =
        build_node_topology(import_hwloc_xml(src("tests/data/hwloc/hwloc-tests/xml/nvidiaDGX2.xml"), w));
    REQUIRE(t.gpu_count() == 16);
    for (int g = 1; g < 16; ++g) CHECK(t.path(DeviceRef::gpu(0), DeviceRef::gpu(g)).label() == "NV6");
  }
}
