// slurm.conf with its gres.conf and topology.conf: the input is the three files joined
// by lines that are exactly `%%` (missing parts are absent files).
#include "sim/cluster/import_slurm_conf.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = gcsim::fuzz::bytes(data, size);
  const auto parts = gcsim::fuzz::split_files(text, 3);
  namespace fs = std::filesystem;
  const fs::path dir = gcsim::fuzz::scratch_dir();
  fs::remove(dir / "gres.conf");
  fs::remove(dir / "topology.conf");
  const std::string conf = gcsim::fuzz::scratch_file("slurm.conf", parts[0]);
  if (parts.size() > 1) (void)gcsim::fuzz::scratch_file("gres.conf", parts[1]);
  if (parts.size() > 2) (void)gcsim::fuzz::scratch_file("topology.conf", parts[2]);
  gcsim::fuzz::run_reader([&] {
    gcsim::Diagnostics w;
    (void)gcsim::load_slurm_conf(conf, w);
  });
  return 0;
}
