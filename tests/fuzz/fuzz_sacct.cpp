// sacct --parsable2 reader (fields by header name, Slurm time formats, TRES strings).
#include "sim/workload/trace_readers.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = gcsim::fuzz::bytes(data, size);
  gcsim::fuzz::run_reader([&] {
    gcsim::Diagnostics d;
    gcsim::Trace t = gcsim::parse_sacct_trace(text, "in.sacct", d);
    if (t.jobs.size() < 10000) gcsim::expand_job_arrays(t);
  });
  return 0;
}
