// The models' YAML inputs: workload profiles, host/NUMA parameters and calibration,
// the trace generator's model, the NCCL tuning file. The first byte picks the reader.
#include "models/collective/nccl_tuning.hpp"
#include "models/host/host_model.hpp"
#include "models/runtime/step_runtime.hpp"
#include "models/workload/generator.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text = gcsim::fuzz::bytes(data + 1, size - 1);
  gcsim::fuzz::run_reader([&] {
    switch (data[0] % 5) {
      case 0: (void)gcsim::parse_profiles(text, "profiles.yaml"); break;
      case 1: (void)gcsim::parse_host_params(text, "host.yaml"); break;
      case 2: (void)gcsim::parse_host_calibration(gcsim::HostParams{}, text, "probe.yaml"); break;
      case 3: (void)gcsim::parse_generator_yaml(text, "gen.yaml"); break;
      default: (void)gcsim::parse_nccl_tuning(text, "tuning.yaml"); break;
    }
  });
  return 0;
}
