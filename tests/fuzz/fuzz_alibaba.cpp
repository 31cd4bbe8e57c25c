// Alibaba GPU traces: v2023 pods and node lists, PAI v2020 machine spec with its header.
#include "sim/cluster/inventory_alibaba.hpp"
#include "sim/workload/alibaba_reader.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text = gcsim::fuzz::bytes(data + 1, size - 1);
  gcsim::fuzz::run_reader([&] {
    gcsim::Diagnostics d;
    switch (data[0] % 3) {
      case 0: (void)gcsim::parse_alibaba_v2023_pods(text, "pods.csv", d); break;
      case 1: (void)gcsim::parse_alibaba_v2023_nodes(text, "nodes.csv", d); break;
      default: {
        const auto parts = gcsim::fuzz::split_files(text, 2);
        const auto cols = gcsim::parse_pai_v2020_header(std::string(parts[0]), "spec.header");
        (void)gcsim::parse_pai_v2020_machines(std::string(parts.back()), cols, "spec.csv", d);
      }
    }
  });
  return 0;
}
