// NCCL topology XML (NCCL_TOPO_DUMP_FILE) and the XML reader under it.
#include "sim/cluster/import_nccl_xml.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = gcsim::fuzz::bytes(data, size);
  gcsim::fuzz::run_reader([&] { (void)gcsim::parse_xml(text, "nccl.xml"); });
  const std::string path = gcsim::fuzz::scratch_file("nccl.xml", text);
  gcsim::fuzz::run_reader([&] {
    gcsim::Diagnostics w;
    (void)gcsim::import_nccl_topo_xml(path, w);
  });
  return 0;
}
