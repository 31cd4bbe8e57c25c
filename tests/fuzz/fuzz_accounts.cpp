// `sacctmgr dump CLUSTER` association files.
#include "sim/workload/accounts.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = gcsim::fuzz::bytes(data, size);
  gcsim::fuzz::run_reader([&] { (void)gcsim::parse_sacctmgr_dump(text, "accounts.cfg"); });
  return 0;
}
