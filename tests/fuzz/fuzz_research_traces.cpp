// SenseTime Helios logs and the research workloads: Gavel, Pollux/Sia, Tiresias,
// Chronus, duration lists. The first byte picks the reader.
#include "sim/workload/gpu_trace_readers.hpp"
#include "sim/workload/research_readers.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text = gcsim::fuzz::bytes(data + 1, size - 1);
  gcsim::fuzz::run_reader([&] {
    gcsim::Diagnostics d;
    switch (data[0] % 6) {
      case 0: (void)gcsim::parse_helios_csv(text, "cluster_log.csv", d); break;
      case 1: (void)gcsim::parse_gavel_trace(text, "in.trace", d); break;
      case 2: (void)gcsim::parse_pollux_workload(text, "workload.csv", d); break;
      case 3: (void)gcsim::parse_tiresias_csv(text, "tiresias.csv", d); break;
      case 4: (void)gcsim::parse_chronus_csv(text, "chronus.csv", d); break;
      default: (void)gcsim::parse_duration_list(text, "durations.txt", d); break;
    }
  });
  return 0;
}
