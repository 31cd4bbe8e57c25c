// The invalid-input corpus: each file in tests/inputs/invalid/trace has a sibling
// `.expected` with the exact diagnostics; gcsim must print them, exit 2, and leave
// no jobs.sacct behind.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/unit/test_paths.hpp"

namespace fs = std::filesystem;
using gcsim::test::slurp;
using gcsim::test::src;

namespace {

using gcsim::test::Proc;
using gcsim::test::run_shell;

}  // namespace

TEST_CASE("invalid trace corpus: exact diagnostics, exit 2, no output", "[invalid]") {
  const fs::path dir = src("tests/inputs/invalid/trace");
  int n = 0;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() != ".expected") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& in : files) {
    DYNAMIC_SECTION(in.filename().string()) {
      const fs::path out = fs::temp_directory_path() / ("gcsim-invalid-" + in.filename().string());
      fs::remove_all(out);
      const std::string rel = "tests/inputs/invalid/trace/" + in.filename().string();
      const Proc p = run_shell("cd '" + std::string(GCSIM_SOURCE_DIR) + "' && '" + gcsim::test::gcsim_binary() +
                               "' run --no-progress --cluster configs/dgx-a100-pod.yaml --trace " + rel + " --out '" +
                               out.string() + "' 2>&1");
      CHECK(p.status == 2);
      CHECK(p.output == slurp(in.string() + ".expected"));
      CHECK_FALSE(fs::exists(out / "jobs.sacct"));
      CHECK_FALSE(fs::exists(out / "manifest.json"));
      fs::remove_all(out);
    }
    ++n;
  }
  CHECK(n >= 12);
}

TEST_CASE("usage errors exit 2", "[invalid][cli]") {
  const std::string bin = "'" + gcsim::test::gcsim_binary() + "'";
  CHECK(run_shell(bin + " run 2>&1").status == 2);  // --trace is required
  CHECK(run_shell(bin + " run --trace traces/philly-d07-d21.csv --policy nosuch 2>&1").status == 2);
  CHECK(run_shell(bin + " frobnicate 2>&1").status == 2);
  const Proc missing = run_shell(bin + " run --trace /nonexistent.swf --out /tmp/gcsim-x 2>&1");
  CHECK(missing.status == 2);
  CHECK(missing.output == "/nonexistent.swf: error: cannot open file: No such file or directory\n");
  const Proc help = run_shell(bin + " run --help");
  CHECK(help.status == 0);
  CHECK(help.output.find("--trace") != std::string::npos);
}

// tests/inputs/invalid/cli/cases.txt: one bad file per reader the CLI opens (sacct, hwloc
// XML, Philly JSON, nvidia-smi, the YAML cluster, sbatch CSV, sacctmgr dump, profiles,
// nccl-tests logs, NCCL topology XML and tuning, Alibaba, Gavel, Pollux, Tiresias, Chronus)
// and bad values for the options of run, compare, sweep, nccl, trace and real.
TEST_CASE("invalid CLI corpus: located errors, exit 2, nothing written", "[invalid][cli]") {
  const std::string dir = "tests/inputs/invalid/cli";
  std::istringstream cases(slurp(src(dir + "/cases.txt")));
  std::string line;
  int n = 0;
  while (std::getline(cases, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto bar = line.find('|');
    REQUIRE(bar != std::string::npos);
    const std::string name = line.substr(0, bar);
    std::string args = line.substr(bar + 1);
    const fs::path out = fs::temp_directory_path() / ("gcsim-invalid-cli-" + name);
    fs::remove_all(out);
    for (const auto& [key, value] : {std::pair<std::string, std::string>{"{dir}", dir + "/data"}, {"{out}", out.string()}})
      for (size_t at; (at = args.find(key)) != std::string::npos;) args.replace(at, key.size(), value);
    DYNAMIC_SECTION(name) {
      const Proc p = run_shell("cd '" + std::string(GCSIM_SOURCE_DIR) + "' && '" + gcsim::test::gcsim_binary() + "' " +
                               args + " 2>&1");
      CHECK(p.status == 2);
      CHECK(p.output == slurp(src(dir + "/" + name + ".expected")));
      CHECK(p.output.find(": error: ") != std::string::npos);
      CHECK_FALSE(fs::exists(out));
    }
    ++n;
  }
  CHECK(n >= 25);
}

TEST_CASE("jobs no node can ever run are reported and rejected, not left pending", "[invalid][cli]") {
  const fs::path out = fs::temp_directory_path() / "gcsim-invalid-never-runs";
  fs::remove_all(out);
  const std::string trace = "tests/inputs/invalid/cli/data/gres-nobody-has.csv";
  const Proc p = run_shell("cd '" + std::string(GCSIM_SOURCE_DIR) + "' && '" + gcsim::test::gcsim_binary() +
                           "' run --no-progress --policy slurm --cluster configs/dgx-a100-pod.yaml --trace " + trace +
                           " --out '" + out.string() + "' 2>&1");
  CHECK(p.status == 0);  // the run itself is fine: sbatch refuses such jobs at submission
  CHECK(p.output.find(trace + ":2: warning: job 'j1' can never run here and was rejected: GPU type 'h100' is not "
                              "configured on any node\n") != std::string::npos);
  CHECK(p.output.find(trace + ":3: warning: job 'j2' can never run here and was rejected: requested node "
                              "configuration is not available\n") != std::string::npos);
  CHECK(slurp((out / "rejected.txt").string()) ==
        "JobID|JobName|Reason\n1|j1|GPU type 'h100' is not configured on any node\n"
        "2|j2|requested node configuration is not available\n");
  CHECK(slurp((out / "manifest.json").string()).find("\"completed\": true") != std::string::npos);
  fs::remove_all(out);
}
