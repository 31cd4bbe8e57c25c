// `gcsim calibrate nccl --topo F -o OUT LOG...`: reads nccl-tests logs of one machine, fits the
// NCCL cost model's per-link-class latency and bandwidth-efficiency terms to them, prints the
// residuals and writes a tuning file that `gcsim nccl --tuning` and `run --nccl-tuning` load.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "models/collective/nccl_calibrate.hpp"
#include "models/collective/nccl_model.hpp"
#include "models/collective/nccl_tuning.hpp"
#include "sim/core/input_file.hpp"
#include "sim/io/run_outputs.hpp"
#include "tools/gcsim/cli_common.hpp"

namespace gcsim {

namespace {

namespace fs = std::filesystem;

struct CalibrateArgs {
  CLI::App* cmd = nullptr;
  CLI::App* nccl = nullptr;
  std::vector<std::string> logs;
  std::string topo, gpu_model, tuning, collective, transport = "ib", cpu_vendor, output;
  int nodes = 1;
  double nic_gbps = 0;
};

CalibrateArgs& args() {
  static CalibrateArgs a;
  return a;
}

int cmd_calibrate_nccl(const CalibrateArgs& a) {
  const SourceLoc cli{"<command line>", 0, 0};
  std::optional<Collective> coll;
  if (!a.collective.empty()) {
    coll = parse_collective(a.collective);
    if (!coll) throw InputError(cli, "unknown --collective '" + a.collective + "'");
  }
  std::vector<NcclTestsLog> logs;
  for (const auto& p : a.logs) logs.push_back(load_nccl_tests_log(p, coll));
  ClusterArgs ca;
  ca.nodes = a.nodes;
  // The logs name their GPUs; an nvidia-smi matrix does not.
  ca.gpu_model = !a.gpu_model.empty() ? a.gpu_model : logs.front().devices.front();
  ca.nic_gbps = a.nic_gbps;
  const Cluster cluster = load_cluster(a.topo, ca);
  CommOptions base;
  base.net_transport = a.transport;
  base.cpu_vendor = a.cpu_vendor;
  std::vector<NcclCalibrationRun> runs;
  for (const auto& log : logs) runs.push_back({&log, nccl_tests_comm(cluster, log, base)});

  const std::string tpath = a.tuning.empty() ? shipped_config("nccl/default.yaml") : a.tuning;
  const NcclTuning tuning = load_nccl_tuning(tpath);
  const NcclCalibration cal = fit_nccl_calibration(tuning, runs);
  std::cout << format_nccl_calibration(cal);

  std::string note = "source: CALIBRATED by `gcsim calibrate nccl` on " + fs::path(a.topo).filename().string() + " from";
  for (const auto& p : a.logs) note += " " + fs::path(p).filename().string();
  char buf[128];
  std::snprintf(buf, sizeof buf, " (%zu rows; RMS relative time error %.1f%% -> %.1f%%)", cal.rows.size(),
                100 * cal.rms_before, 100 * cal.rms_after);
  note += buf;
  const std::string yaml = nccl_calibration_yaml(read_input_file(tpath), tpath, cal, note);
  const fs::path out(a.output);
  write_file_atomic(out.has_parent_path() ? out.parent_path().string() : ".", out.filename().string(), yaml);
  std::cout << "wrote " << a.output << "\n";
  return 0;
}

}  // namespace

void add_calibrate_commands(CLI::App& app) {
  CalibrateArgs& a = args();
  a = CalibrateArgs{};
  a.cmd = app.add_subcommand("calibrate", "fit cost-model terms to measurements");
  a.cmd->require_subcommand(1);
  a.nccl = a.cmd->add_subcommand("nccl", "fit the NCCL model's per-link-class latency and bandwidth efficiency "
                                         "to nccl-tests logs of one machine; write a tuning file");
  a.nccl->add_option("logs", a.logs, "nccl-tests output logs (several collectives or sizes)")->required();
  a.nccl->add_option("--topo", a.topo, "the machine: anything --cluster takes, incl. a pasted nvidia-smi topo -m")->required();
  a.nccl->add_option("-o,--output", a.output, "tuning YAML to write")->required();
  a.nccl->add_option("--gpu-model", a.gpu_model, "GPU model (default: the device name the first log prints)");
  a.nccl->add_option("--collective", a.collective, "collective of every log, where the logs do not say");
  a.nccl->add_option("--nodes", a.nodes, "copies of an imported single-node description")->capture_default_str();
  a.nccl->add_option("--nic-gbps", a.nic_gbps, "NIC line rate an nvidia-smi matrix does not give");
  a.nccl->add_option("--transport", a.transport, "network transport: ib, socket, tcpxo")->capture_default_str();
  a.nccl->add_option("--cpu-vendor", a.cpu_vendor, "intel or amd (default: the tuning's)");
  a.nccl->add_option("--tuning", a.tuning, "base NCCL tuning YAML (default configs/nccl/default.yaml)");
}

int run_calibrate_command() {
  const CalibrateArgs& a = args();
  if (a.nccl && *a.nccl) return cmd_calibrate_nccl(a);
  return -1;
}

}  // namespace gcsim
