// Microsoft Philly: cluster_job_log JSON (and the strict JSON reader) and machine lists.
#include "sim/cluster/cluster.hpp"
#include "sim/cluster/inventories.hpp"
#include "sim/core/json.hpp"
#include "sim/workload/gpu_trace_readers.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text = gcsim::fuzz::bytes(data + 1, size - 1);
  gcsim::fuzz::run_reader([&] {
    gcsim::Diagnostics d;
    if (data[0] & 1) {
      (void)gcsim::parse_json(text, "log.json");
      (void)gcsim::parse_philly_json(text, "cluster_job_log", d);
    } else {
      (void)gcsim::parse_philly_machines(text, "cluster_machine_list", gcsim::NodeTemplate{}, d);
    }
  });
  return 0;
}
