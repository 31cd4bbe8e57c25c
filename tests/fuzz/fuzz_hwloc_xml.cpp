// hwloc XML topologies (lstopo --of xml), through hwloc's own XML loader.
#include "sim/cluster/import_hwloc.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = gcsim::fuzz::scratch_file("in.xml", std::string_view(reinterpret_cast<const char*>(data), size));
  gcsim::fuzz::run_reader([&] {
    gcsim::Diagnostics w;
    (void)gcsim::import_hwloc_xml_detailed(path, w);
  });
  return 0;
}
