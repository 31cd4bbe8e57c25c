// Every `nvidia-smi topo -m` fixture goes through the whole pipeline: parsed, turned
// into a node template, the topology graph built, and the matrix printed back from
// the graph. GPU/NIC cells and the affinity columns must come back as they were.
#include <catch2/catch.hpp>

#include <filesystem>

#include "sim/cluster/import_hwloc.hpp"
#include "sim/cluster/import_nvidia_smi.hpp"
#include "sim/cluster/topo_views.hpp"
#include "sim/cluster/topology.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;
namespace fs = std::filesystem;

TEST_CASE("gcsim topo prints every nvidia-smi fixture back", "[topology][nvidia-smi]") {
  std::vector<fs::path> files;
  for (const char* dir : {"tests/data/nvidia-smi", "tests/data/nvidia-smi/nccl-topo"})
    for (const auto& e : fs::directory_iterator(gcsim::test::src(dir)))
      if (e.path().extension() == ".txt") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() == 15);
  for (const auto& f : files) {
    DYNAMIC_SECTION(f.filename().string()) {
      const NvidiaSmiMatrix in = read_nvidia_smi_topo(f.string());
      Diagnostics w;
      const NodeTemplate t = node_from_nvidia_smi(in, NvidiaSmiOptions{}, w);
      const NvidiaSmiMatrix out = parse_nvidia_smi_topo(format_nvidia_smi_topo(t), "printed");
      REQUIRE(out.gpus.size() == in.gpus.size());
      REQUIRE(out.nics.size() == in.nics.size());
      const size_t n = in.gpus.size() + in.nics.size();
      for (size_t i = 0; i < n; ++i)
        for (size_t j = 0; j < n; ++j) {
          INFO("row " << i << " column " << j);
          CHECK(out.cells[i][j] == in.cells[i][j]);
        }
      // "N/A" affinities (VMs and redacted hosts) carry no CPU set: gcsim must still
      // put the GPU on some NUMA domain, so only the known ones are compared.
      size_t compared = 0;
      for (size_t g = 0; g < in.gpus.size(); ++g) {
        if (!in.cpu_affinity.empty() && in.cpu_affinity[g] != "N/A") {
          CHECK(out.cpu_affinity[g] == in.cpu_affinity[g]);
          ++compared;
        }
        if (!in.numa_affinity.empty() && in.numa_affinity[g] != "N/A") CHECK(out.numa_affinity[g] == in.numa_affinity[g]);
      }
      if (f.filename() == "dgx-a100.txt") CHECK(compared == 8);
    }
  }
}

TEST_CASE("hwloc imports feed the topology graph", "[topology][hwloc]") {
  Diagnostics w;
  const NodeTemplate t = import_hwloc_xml(gcsim::test::src("tests/data/hwloc/hwloc-tests/xml/nvidiaDGX2.xml"), w);
  const NodeTopology topo = build_node_topology(t);
  REQUIRE(topo.gpu_count() == 16);
  // DGX-2: every GPU pair talks over the NVSwitch fabric.
  CHECK(topo.path(DeviceRef::gpu(0), DeviceRef::gpu(15)).cls == PathClass::kNvlink);
}
