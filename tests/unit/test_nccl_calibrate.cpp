// `gcsim calibrate nccl` (models/collective/nccl_calibrate): the nccl-tests log reader on the
// fixtures of tests/data/nccl/logs (rows of calibration.csv in nccl-tests' layout) and on
// malformed text, the per-link-class fit on synthetic rows (exact recovery) and on the real
// rows (lower error than the default tuning), and the CLI round trip through `gcsim nccl --tuning`.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "models/collective/nccl_calibrate.hpp"
#include "models/collective/nccl_model.hpp"
#include "models/collective/nccl_tuning.hpp"
#include "sim/cluster/cluster_yaml.hpp"
#include "sim/cluster/import_nvidia_smi.hpp"
#include "sim/core/diagnostics.hpp"
#include "sim/core/input_file.hpp"
#include "tests/unit/test_paths.hpp"
#include "tools/gcsim/app.hpp"
#include "tools/gcsim/cli_common.hpp"

using namespace gcsim;
using gcsim::test::slurp;
using gcsim::test::src;
namespace fs = std::filesystem;

namespace {

const NcclTuning& base_tuning() {
  static const NcclTuning t = load_nccl_tuning(default_nccl_tuning_path(GCSIM_SOURCE_DIR));
  return t;
}

std::string log_path(const std::string& name) { return src("tests/data/nccl/logs/" + name); }
std::string topo_path(const std::string& name) { return src("tests/data/nccl/topo/" + name + ".txt"); }

const std::string kThanos = "hgx-a100-80gb-thanos";
const std::string kAutodl = "autodl-2x-rtx2080ti-pix";

// The machine as test_nccl_model.cpp builds it: the PCIe switches the importer derives run at
// the GPU product's generation (tuning gpu_models.pcie_gen), which `--topo` does not apply.
Cluster machine(const std::string& topo, const NcclTestsLog& log) {
  const std::string path = topo_path(topo);
  NvidiaSmiOptions o;
  o.name = topo;
  o.gpu_model = log.devices.front();
  o.pcie_gen = base_tuning().gpu_model(o.gpu_model).pcie_gen;
  Diagnostics warnings;
  NodeTemplate t = node_from_nvidia_smi(parse_nvidia_smi_topo(read_input_file(path), path), o, warnings);
  return make_homogeneous_cluster(topo, t, 1, path);
}

// Runs the CLI with stdout captured.
int run_captured(const std::vector<std::string>& argv, std::string* out) {
  std::ostringstream os;
  auto* old = std::cout.rdbuf(os.rdbuf());
  const int rc = run_cli(argv);
  std::cout.rdbuf(old);
  *out = os.str();
  return rc;
}

}  // namespace

TEST_CASE("nccl-calibrate: the fixture logs parse", "[nccl-calibrate]") {
  SECTION("V-01, one process x 8 GPUs, collective from the header line") {
    const NcclTestsLog l = load_nccl_tests_log(log_path("V-01-thanos-all_reduce-g8.log"));
    CHECK(l.collective == Collective::kAllReduce);
    CHECK(l.threads == 1);
    CHECK(l.gpus_per_thread == 8);
    CHECK(l.ranks() == 8);
    CHECK(l.devices[7] == "NVIDIA A100-SXM4-80GB");
    REQUIRE(l.rows.size() == 30);
    CHECK(l.rows.front().size == 8);
    CHECK(l.rows.front().count == 2);
    CHECK(l.rows.front().time_us == Approx(40.12));
    CHECK(l.rows.back().size == 4294967296LL);
    CHECK(l.rows.back().busbw == Approx(232.44));
    CHECK(l.rows.back().wrong == 0);
    CHECK_FALSE(l.rows.back().has_in_place);
  }
  SECTION("V-01, mpirun -np 8: collective from the command line, NCCL INFO lines between rows") {
    const NcclTestsLog l = load_nccl_tests_log(log_path("V-01-thanos-all_reduce-np8.log"));
    CHECK(l.collective == Collective::kAllReduce);
    CHECK(l.gpus_per_thread == 1);
    CHECK(l.ranks() == 8);
    REQUIRE(l.rows.size() == 30);
    CHECK(l.rows[0].time_us == Approx(20.26));
    CHECK(l.rows[1].size == 16);
    CHECK(l.rows.back().size == 4294967296LL);
    CHECK(l.rows.back().busbw == Approx(232.81));
  }
  SECTION("V-10 AllReduce and AllGather (N/A in #wrong)") {
    const NcclTestsLog ar = load_nccl_tests_log(log_path("V-10-autodl-all_reduce-g2.log"));
    CHECK(ar.collective == Collective::kAllReduce);
    CHECK(ar.ranks() == 2);
    CHECK(ar.devices[0] == "NVIDIA GeForce RTX 2080 Ti");
    REQUIRE(ar.rows.size() == 28);
    CHECK(ar.rows.back().size == 1073741824LL);
    CHECK(ar.rows.back().busbw == Approx(4.00));
    const NcclTestsLog ag = load_nccl_tests_log(log_path("V-10-autodl-all_gather-g2.log"));
    CHECK(ag.collective == Collective::kAllGather);
    REQUIRE(ag.rows.size() == 26);
    CHECK(ag.rows.front().size == 32);
    CHECK(ag.rows.front().count == 4);  // 32 B / 4 / 2 ranks
    CHECK_FALSE(ag.rows.front().wrong.has_value());
    CHECK(ag.rows.back().busbw == Approx(3.79));
  }
  SECTION("the caller's collective wins") {
    const NcclTestsLog l = load_nccl_tests_log(log_path("V-10-autodl-all_gather-g2.log"), Collective::kBroadcast);
    CHECK(l.collective == Collective::kBroadcast);
  }
}

TEST_CASE("nccl-calibrate: in-place columns, NCCL_ALGO from the environment line", "[nccl-calibrate]") {
  const std::string text =
      "# nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
      "#  Rank  0 Group  0 Pid  1 on h device  0 [0x01] NVIDIA A100-SXM4-80GB\n"
      "#  Rank  1 Group  0 Pid  1 on h device  1 [0x02] NVIDIA A100-SXM4-80GB\n"
      "h:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Ring\n"
      "           8             2     float     sum      -1    10.00    0.00    0.00      0    9.50    0.00    0.00      0\r\n"
      "          16             4     float     sum      -1    11.00    0.00    0.00    N/A   10.50    0.00    0.00    N/A\n";
  const NcclTestsLog l = parse_nccl_tests_log(text, "x.log", Collective::kAllReduce);
  REQUIRE(l.rows.size() == 2);
  CHECK(l.rows[0].has_in_place);
  CHECK(l.rows[0].in_place_time_us == Approx(9.5));
  CHECK(l.rows[1].line == 6);
  CHECK(l.algo == NcclAlgo::kRing);
}

TEST_CASE("nccl-calibrate: malformed logs give file:line:col", "[nccl-calibrate]") {
  const std::string head =
      "# nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
      "#  Rank  0 Group  0 Pid  1 on h device  0 [0x01] NVIDIA A100-SXM4-80GB\n";
  auto err = [](const std::string& text) {
    return test::error_of([&] { (void)parse_nccl_tests_log(text, "bad.log", Collective::kAllReduce); });
  };
  CHECK(err(head + "           8             2     float     sum      -1    fast    0.00    0.00      0\n") ==
        "bad.log:3:57: error: expected a number for time, got 'fast'");
  CHECK(err(head + "           8             2     float     sum      -1    10.00    0.00      0\n") ==
        "bad.log:3:12: error: expected 9 or 13 columns (size count type redop root time algbw busbw #wrong, then "
        "the in-place time algbw busbw #wrong), got 8");
  CHECK(err(head + "           8             2     float     sum      -1    10.00    0.00    0.00     x\n") ==
        "bad.log:3:83: error: expected a non-negative integer for #wrong, got 'x'");
  CHECK(err("# nThread one nGpus 2\n") == "bad.log:1:11: error: expected a positive integer for nThread, got 'one'");
  CHECK(err(head) == "bad.log: error: no result rows (size count type redop root time algbw busbw #wrong)");
  CHECK(test::error_of([&] {
          (void)parse_nccl_tests_log(head + "  8  2  float  sum  -1  10.0  0.0  0.0  0\n", "bad.log");
        }) == "bad.log: error: cannot tell the collective: no '# Collective test starting:' line or '*_perf' command; "
              "pass --collective");
  CHECK(err("# Collective test starting: gather_perf\n" + head) ==
        "bad.log:1:29: error: unknown collective 'gather_perf'");
}

TEST_CASE("nccl-calibrate: synthetic rows recover the latency offset and efficiency", "[nccl-calibrate]") {
  // Rows generated by the model itself with known per-class terms: the fit from the default
  // tuning must give them back (the linear form is exact).
  const NcclTestsLog np8 = load_nccl_tests_log(log_path("V-01-thanos-all_reduce-np8.log"));
  const NcclTestsLog v10 = load_nccl_tests_log(log_path("V-10-autodl-all_gather-g2.log"));
  const Cluster thanos = machine(kThanos, np8);
  const Cluster autodl = machine(kAutodl, v10);
  NcclTuning truth = base_tuning();
  truth.link_calibration[static_cast<size_t>(NcclLinkClass::kNvlink)] = {7.5, 0.8};
  truth.link_calibration[static_cast<size_t>(NcclLinkClass::kShm)] = {-1.25, 1.3};
  auto synth = [&](const NcclTestsLog& real, const Cluster& c) {
    NcclTestsLog s = real;
    const NcclModel m(truth, nccl_tests_comm(c, real));
    for (auto& r : s.rows) r.time_us = nccl_cost(m, s.collective, r.size).time_us;
    return s;
  };
  const NcclTestsLog s1 = synth(np8, thanos), s2 = synth(v10, autodl);
  const NcclCalibration cal =
      fit_nccl_calibration(base_tuning(), {{&s1, nccl_tests_comm(thanos, s1)}, {&s2, nccl_tests_comm(autodl, s2)}});
  REQUIRE(cal.classes.size() == 2);
  CHECK(cal.classes[0].link_class == NcclLinkClass::kNvlink);
  CHECK(cal.classes[1].link_class == NcclLinkClass::kShm);
  const auto& nv = cal.tuning.link_calibration[static_cast<size_t>(NcclLinkClass::kNvlink)];
  const auto& shm = cal.tuning.link_calibration[static_cast<size_t>(NcclLinkClass::kShm)];
  CHECK(std::abs(nv.latency_us - 7.5) < 1e-6);
  CHECK(std::abs(nv.bw_efficiency - 0.8) < 1e-6);
  CHECK(std::abs(shm.latency_us + 1.25) < 1e-6);
  CHECK(std::abs(shm.bw_efficiency - 1.3) < 1e-6);
  CHECK(cal.rms_after < 1e-9);
  // Untouched classes keep the base terms.
  CHECK(cal.tuning.link_calibration[static_cast<size_t>(NcclLinkClass::kNet)].bw_efficiency == 1);
}

TEST_CASE("nccl-calibrate: fitting the real fixtures lowers the error", "[nccl-calibrate]") {
  std::vector<NcclTestsLog> logs = {load_nccl_tests_log(log_path("V-01-thanos-all_reduce-g8.log")),
                                    load_nccl_tests_log(log_path("V-01-thanos-all_reduce-np8.log")),
                                    load_nccl_tests_log(log_path("V-10-autodl-all_reduce-g2.log")),
                                    load_nccl_tests_log(log_path("V-10-autodl-all_gather-g2.log"))};
  const Cluster thanos = machine(kThanos, logs[0]);
  const Cluster autodl = machine(kAutodl, logs[2]);
  std::vector<NcclCalibrationRun> runs;
  for (size_t i = 0; i < logs.size(); ++i) runs.push_back({&logs[i], nccl_tests_comm(i < 2 ? thanos : autodl, logs[i])});
  const NcclCalibration cal = fit_nccl_calibration(base_tuning(), runs);
  std::cout << format_nccl_calibration(cal);
  CHECK(cal.rows.size() == 114);
  REQUIRE(cal.classes.size() == 2);
  CHECK(cal.rms_after < cal.rms_before);
  for (const auto& f : cal.classes) CHECK(f.rms_after <= f.rms_before);
  // Deterministic.
  CHECK(format_nccl_calibration(fit_nccl_calibration(base_tuning(), runs)) == format_nccl_calibration(cal));
}

TEST_CASE("nccl-calibrate: the CLI writes a tuning that --tuning loads", "[nccl-calibrate][cli]") {
  const fs::path dir = fs::temp_directory_path() / "gcsim-calibrate-nccl-cli";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string out = (dir / "thanos.yaml").string();
  std::string report;
  REQUIRE(run_captured({"gcsim", "calibrate", "nccl", "--topo", topo_path(kThanos), "-o", out,
                        log_path("V-01-thanos-all_reduce-g8.log"), log_path("V-01-thanos-all_reduce-np8.log")},
                       &report) == 0);
  CHECK(report.find("RMS relative time error over 60 rows:") != std::string::npos);
  const NcclTuning t = load_nccl_tuning(out);
  const auto& nv = t.link_calibration[static_cast<size_t>(NcclLinkClass::kNvlink)];
  CHECK((nv.latency_us != 0 || nv.bw_efficiency != 1));
  CHECK(t.link_calibration[static_cast<size_t>(NcclLinkClass::kPcie)].bw_efficiency == 1);
  CHECK(slurp(out).find("CALIBRATED by `gcsim calibrate nccl` on hgx-a100-80gb-thanos.txt") != std::string::npos);
  // Calibrating again from the written file replaces its links block (one block, same terms).
  const std::string again = (dir / "again.yaml").string();
  REQUIRE(run_captured({"gcsim", "calibrate", "nccl", "--topo", topo_path(kThanos), "--tuning", out, "-o", again,
                        log_path("V-01-thanos-all_reduce-g8.log"), log_path("V-01-thanos-all_reduce-np8.log")},
                       &report) == 0);
  const std::string a2 = slurp(again);
  CHECK(a2.find("  links:") == a2.rfind("  links:"));
  const NcclTuning t2 = load_nccl_tuning(again);  // kept: a reference into the temporary dangled (ASan)
  const auto& nv2 = t2.link_calibration[static_cast<size_t>(NcclLinkClass::kNvlink)];
  CHECK(nv2.latency_us == Approx(nv.latency_us).margin(1e-6));
  CHECK(nv2.bw_efficiency == Approx(nv.bw_efficiency).epsilon(1e-6));

  // `gcsim nccl --tuning F` predicts with the fitted terms.
  const std::vector<std::string> nccl = {"gcsim", "nccl", "all_reduce", "--topo", topo_path(kThanos), "--gpu-model",
                                         "NVIDIA A100-SXM4-80GB", "-g", "8", "-b", "1G", "-e", "1G"};
  std::string def, fitted;
  REQUIRE(run_captured(nccl, &def) == 0);
  auto with = nccl;
  with.push_back("--tuning");
  with.push_back(out);
  REQUIRE(run_captured(with, &fitted) == 0);
  CHECK(def != fitted);
  ClusterArgs ca;
  ca.gpu_model = "NVIDIA A100-SXM4-80GB";
  const Cluster c = load_cluster(topo_path(kThanos), ca);
  CommSpec spec;
  spec.cluster = &c;
  for (int g = 0; g < 8; ++g) spec.gpus.push_back({0, g});
  spec.options.gpus_per_process = 8;
  const NcclModel m(t, spec);
  char buf[32];
  const double us = nccl_cost(m, Collective::kAllReduce, int64_t{1} << 30).time_us;
  std::snprintf(buf, sizeof buf, us >= 10000 ? " %.0f " : " %.1f ", us);  // nccl-tests' time column
  CHECK(fitted.find(buf) != std::string::npos);

  // A fit that cannot be made (one row) leaves no file.
  const std::string one = (dir / "one.log").string();
  {
    std::ofstream f(one);
    f << "# Collective test starting: all_reduce_perf\n"
         "# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n";
    for (int g = 0; g < 8; ++g) f << "#  Rank  " << g << " Group  0 Pid  1 on h device  " << g << " [0x01] NVIDIA A100-SXM4-80GB\n";
    f << "           8             2     float     sum      -1    40.12    0.00    0.00      0\n";
  }
  const std::string none = (dir / "none.yaml").string();
  REQUIRE(run_captured({"gcsim", "calibrate", "nccl", "--topo", topo_path(kThanos), "-o", none, one}, &report) == 2);
  CHECK_FALSE(fs::exists(none));
  fs::remove_all(dir);
}
