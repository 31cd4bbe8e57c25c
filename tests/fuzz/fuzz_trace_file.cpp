// A trace file as `gcsim run --trace` opens it: gzip detection and inflation, then the
// reader chosen from the (decompressed) name and content.
#include "sim/workload/trace_readers.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const char* const kNames[] = {"t.swf.gz", "t.csv.gz", "t.sacct", "t.json", "t.swf", "t.csv"};
  const std::string path =
      gcsim::fuzz::scratch_file(kNames[data[0] % 6], std::string_view(reinterpret_cast<const char*>(data + 1), size - 1));
  gcsim::fuzz::run_reader([&] {
    gcsim::Diagnostics d;
    (void)gcsim::read_trace(path, d);
  });
  return 0;
}
