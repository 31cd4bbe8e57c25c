// SWF reader (Parallel Workloads Archive, with Alea's extension).
#include "sim/workload/trace_readers.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = gcsim::fuzz::bytes(data, size);
  gcsim::fuzz::run_reader([&] {
    gcsim::Diagnostics d;
    (void)gcsim::parse_swf(text, "in.swf", d);
  });
  return 0;
}
