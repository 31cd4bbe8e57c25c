// The trace tools from the command line: `gcsim trace stats` writes its three files,
// `gcsim trace gen` is byte-identical for one seed and reads back as a trace, and its
// saved model regenerates the same jobs.
#include <catch2/catch.hpp>

#include <filesystem>

#include "sim/workload/trace_readers.hpp"
#include "tests/unit/test_paths.hpp"
#include "tools/gcsim/app.hpp"

using namespace gcsim;
using gcsim::test::slurp;
using gcsim::test::src;
namespace fs = std::filesystem;

TEST_CASE("gcsim trace stats writes text, JSON and SVG", "[trace-cli][cli]") {
  const fs::path dir = fs::temp_directory_path() / "gcsim-trace-stats-cli";
  fs::remove_all(dir);
  REQUIRE(run_cli({"gcsim", "trace", "stats", src("tests/data/traces/philly/philly_sampled_jobs_4206.json.gz"),
                   "--cluster", src("tests/data/traces/philly/cluster_machine_list.csv"), "--out", dir.string()}) == 0);
  REQUIRE(slurp((dir / "trace_stats.txt").string()).find("jobs                4206 (GPU 4206, CPU-only 0)") !=
          std::string::npos);
  REQUIRE(slurp((dir / "trace_stats.json").string()).find("\"jobs\": 4206") != std::string::npos);
  REQUIRE(slurp((dir / "trace_stats.svg").string()).rfind("<svg", 0) == 0);
  // A window on the way in: only September's jobs (the sample starts on 2017-09-18).
  REQUIRE(run_cli({"gcsim", "trace", "stats", src("tests/data/traces/philly/philly_sampled_jobs_4206.json.gz"),
                   "--to", "2017-10-01", "--out", dir.string()}) == 0);
  const std::string txt = slurp((dir / "trace_stats.txt").string());
  REQUIRE(txt.find("jobs                4206") == std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("gcsim trace gen: same seed, same bytes; the saved model regenerates them", "[trace-cli][cli]") {
  const fs::path dir = fs::temp_directory_path() / "gcsim-trace-gen-cli";
  fs::remove_all(dir);
  const std::string fit = src("tests/data/traces/philly/philly_sampled_jobs_4206.json.gz");
  const std::string a = (dir / "a.csv").string(), b = (dir / "b.csv").string(), c = (dir / "c.csv").string();
  const std::string model = (dir / "model.yaml").string();
  REQUIRE(run_cli({"gcsim", "trace", "gen", "--fit", fit, "--jobs", "500", "--seed", "7", "-o", a, "--save-model",
                   model}) == 0);
  REQUIRE(run_cli({"gcsim", "trace", "gen", "--fit", fit, "--jobs", "500", "--seed", "7", "-o", b}) == 0);
  REQUIRE(slurp(a) == slurp(b));
  // The provenance header names the source and the seed.
  REQUIRE(slurp(a).find("seed 7") != std::string::npos);
  REQUIRE(run_cli({"gcsim", "trace", "gen", "--model", model, "--jobs", "500", "--seed", "7", "-o", c}) == 0);
  // Same jobs from the saved model (only the provenance lines may differ).
  auto body = [](const std::string& t) { return t.substr(t.find("\nname,")); };
  REQUIRE(body(slurp(c)) == body(slurp(a)));
  Diagnostics d;
  REQUIRE(read_trace(a, d).jobs.size() == 500);
  REQUIRE(run_cli({"gcsim", "trace", "gen", "--fit", fit, "--jobs", "500", "--seed", "8", "-o", b}) == 0);
  REQUIRE(slurp(a) != slurp(b));
  // Neither --fit nor --model: bad usage, nothing written.
  REQUIRE(run_cli({"gcsim", "trace", "gen", "--jobs", "5", "-o", (dir / "none.csv").string()}) == 2);
  REQUIRE_FALSE(fs::exists(dir / "none.csv"));
  fs::remove_all(dir);
}
