// The YAML cluster description (schema in configs/README.md).
#include "sim/cluster/cluster_yaml.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = gcsim::fuzz::bytes(data, size);
  gcsim::fuzz::run_reader([&] { (void)gcsim::parse_cluster_yaml(text, "in.yaml"); });
  return 0;
}
