// `nvidia-smi topo -m` matrices.
#include "sim/cluster/import_nvidia_smi.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = gcsim::fuzz::bytes(data, size);
  gcsim::fuzz::run_reader([&] { (void)gcsim::parse_nvidia_smi_topo(text, "topo.txt"); });
  return 0;
}
