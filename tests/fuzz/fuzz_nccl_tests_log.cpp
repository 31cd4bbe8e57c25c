// nccl-tests stdout logs (the calibration input).
#include "models/collective/nccl_calibrate.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = gcsim::fuzz::bytes(data, size);
  gcsim::fuzz::run_reader([&] { (void)gcsim::parse_nccl_tests_log(text, "all_reduce.log"); });
  return 0;
}
