// The sbatch option parser and its POSIX-shell splitting.
#include "sim/workload/sbatch_options.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = gcsim::fuzz::bytes(data, size);
  std::vector<std::string> words;
  std::string err;
  if (!gcsim::shell_split(text, words, &err) && err.empty()) std::abort();
  gcsim::JobRequest req;
  gcsim::Diagnostics d;
  const bool ok = gcsim::parse_sbatch_options(text, gcsim::SourceLoc{"in.csv", 2, 10}, req, d);
  if (ok == d.has_errors()) std::abort();  // the return value must agree with the diagnostics
  if (!ok) gcsim::fuzz::check_located(d);
  (void)gcsim::parse_slurm_mem_mb(text);
  (void)gcsim::parse_gres_spec(text, true);
  return 0;
}
