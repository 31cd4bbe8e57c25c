// `gcsim real topo|place|exec|bind|probe`: the placement library on this machine
// (tools/real/real_mode.hpp). sbatch options are the words CLI11 does not know; the
// command to run follows `--`.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "sim/core/input_file.hpp"
#include "sim/io/run_outputs.hpp"
#include "tools/gcsim/cli_common.hpp"
#include "tools/real/probe.hpp"
#include "sim/cluster/import_nvidia_smi.hpp"
#include "tools/real/real_mode.hpp"

extern char** environ;

namespace gcsim {

namespace {

namespace fs = std::filesystem;
const SourceLoc kCli{"<command line>", 0, 0};

struct RealArgs {
  CLI::App* real = nullptr;
  CLI::App *topo = nullptr, *place = nullptr, *exec = nullptr, *bind = nullptr, *probe = nullptr;
  std::string topology_file, format = "matrix", binding = "slurm", bind_binding = "numa-bound", cpuset;
  bool label = false, dry_run = false, quick = false;
  std::string output = "host-calibration.yaml", template_name;
  std::vector<std::string> command;  // after `--`
};

RealArgs& args() {
  static RealArgs a;
  return a;
}

void print_notes(const real::Machine& m, const Diagnostics& w, const char* cmd) {
  if (const std::string f = w.format(); !f.empty()) std::cerr << f;
  for (const auto& n : m.notes) std::cerr << "gcsim real " << cmd << ": note: " << n << "\n";
}

real::Machine machine_for(const RealArgs& a, Diagnostics& w) {
  real::Machine m = real::load_machine(a.topology_file, w);
  if (!a.cpuset.empty()) {
    auto ids = parse_cpu_list(a.cpuset);
    if (!ids) throw InputError(kCli, "--cpuset '" + a.cpuset + "' is not a CPU list such as 0-3,8");
    real::restrict_pus(m, *ids);
    m.notes.push_back("--cpuset " + a.cpuset + ": CPUs " + real::format_id_ranges(m.allowed_pus) + " usable");
  }
  return m;
}

PlacementMode mode_of(const std::string& name) {
  auto mode = parse_placement_mode(name);
  if (!mode) throw InputError(kCli, "unknown --binding '" + name + "'");
  return *mode;
}

real::Plan plan_from(const RealArgs& a, CLI::App* cmd, const real::Machine& m) {
  Diagnostics d;
  auto job = real::job_from_options(cmd->remaining(), d);
  if (!job) throw InputError(d);
  real::Plan p = real::plan_job(m, *job, mode_of(a.binding));
  if (!p.fits) throw InputError(kCli, "the request does not fit: " + p.reason + "; nothing was run");
  return p;
}

std::map<std::string, std::string> environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

int cmd_real_topo(const RealArgs& a) {
  Diagnostics w;
  const real::Machine m = machine_for(a, w);
  print_notes(m, w, "topo");
  return cmd_topo(m.cluster, "", a.format);
}

int cmd_real_place(const RealArgs& a) {
  Diagnostics w;
  const real::Machine m = machine_for(a, w);
  if (const std::string f = w.format(); !f.empty()) std::cerr << f;
  const real::Plan p = plan_from(a, a.place, m);
  std::cout << real::format_plan(m, p);
  return 0;
}

int cmd_real_exec(const RealArgs& a) {
  if (a.command.empty()) throw InputError(kCli, "no command: gcsim real exec [options] -- CMD ARGS");
  Diagnostics w;
  const real::Machine m = machine_for(a, w);
  if (!m.live) throw InputError(kCli, "exec runs on this machine; --topology-file is for place and topo");
  if (const std::string f = w.format(); !f.empty()) std::cerr << f;
  const real::Plan p = plan_from(a, a.exec, m);
  for (const auto& n : m.notes) std::cerr << "gcsim real exec: note: " << n << "\n";
  real::ExecOptions o;
  o.label = a.label;
  return real::exec_tasks(m, p, a.command, o);
}

int cmd_real_bind(const RealArgs& a) {
  if (a.command.empty() && !a.dry_run) throw InputError(kCli, "no command: gcsim real bind [options] -- CMD ARGS");
  if (!a.bind->remaining().empty())
    throw InputError(kCli, "unexpected '" + a.bind->remaining().front() +
                               "': bind takes what srun gave it; the command follows '--'");
  Diagnostics w;
  const real::Machine m = machine_for(a, w);
  if (const std::string f = w.format(); !f.empty()) std::cerr << f;
  const real::BindDecision d = real::decide_bind(m, environment(), mode_of(a.bind_binding));
  for (const auto& n : d.notes) std::cerr << "gcsim real bind: note: " << n << "\n";
  if (a.dry_run || !m.live) {
    for (const auto& [k, v] : d.exports) std::cout << k << "=" << v << "\n";
    return 0;
  }
  std::string error;
  real::exec_bound(d.task, d.exports, a.command, error);
  std::cerr << "gcsim real bind: error: " << error << "\n";
  return 127;
}

int cmd_real_probe(const RealArgs& a) {
  Diagnostics w;
  const real::Machine m = machine_for(a, w);
  print_notes(m, w, "probe");
  real::ProbeOptions o;
  o.quick = a.quick;
  o.template_name = a.template_name.empty() ? m.tmpl().name : a.template_name;
  const real::ProbeResult r = real::run_probe(m, o, std::cerr);
  std::cout << real::format_probe_table(r);
  const fs::path out(a.output);
  write_file_atomic(out.has_parent_path() ? out.parent_path().string() : ".", out.filename().string(),
                    real::probe_calibration_yaml(r));
  std::cout << "wrote " << a.output << " (node template '" << o.template_name << "')\n";
  return 0;
}

}  // namespace

void set_real_command(std::vector<std::string> cmd) { args().command = std::move(cmd); }

void add_real_commands(CLI::App& app) {
  RealArgs& a = args();
  auto cmd = std::move(a.command);
  a = RealArgs{};
  a.command = std::move(cmd);
  a.real = app.add_subcommand("real", "run the placement library on this machine (hwloc discovery, binding)");
  a.real->require_subcommand(1);
  auto topology_file = [&](CLI::App* c) {
    c->add_option("--topology-file", a.topology_file, "an hwloc XML instead of this machine");
  };
  a.topo = a.real->add_subcommand("topo", "this machine as `gcsim topo` prints a configured node");
  topology_file(a.topo);
  a.topo->add_option("--format", a.format, "matrix (nvidia-smi topo -m), gres (gres.conf) or slurm (NodeName line)")
      ->check(CLI::IsMember({"matrix", "gres", "slurm"}))
      ->capture_default_str();
  a.topo->add_option("--cpuset", a.cpuset, "only these OS CPUs (0-3,8)");

  a.place = a.real->add_subcommand("place", "print each task's CPUs, GPUs and memory domain for sbatch options");
  topology_file(a.place);
  auto placing = [&](CLI::App* c) {  // place and exec: sbatch options are the extras
    c->add_option("--binding", a.binding, "placement mode, as gcsim run --binding")
        ->check(CLI::IsMember(placement_mode_names()))
        ->capture_default_str();
    c->add_option("--cpuset", a.cpuset, "only these OS CPUs (0-3,8)");
    c->allow_extras();
  };
  placing(a.place);

  a.exec = a.real->add_subcommand("exec", "place, then run CMD bound, one child per task, as srun does");
  placing(a.exec);
  a.exec->add_flag("--label", a.label, "prefix each output line with its task number (srun --label)");

  a.bind = a.real->add_subcommand("bind", "under srun: bind this task near its GPU, export RANK/LOCAL_RANK/..., exec CMD");
  a.bind->add_option("--binding", a.bind_binding, "placement mode tried first (Slurm's order when it does not fit)")
      ->check(CLI::IsMember(placement_mode_names()))
      ->capture_default_str();
  topology_file(a.bind);
  a.bind->add_option("--cpuset", a.cpuset, "take this as the cpuset srun gave (tests, planning)");
  a.bind->add_flag("--dry-run", a.dry_run, "print what would be exported instead of running CMD");
  a.bind->allow_extras();

  a.probe = a.real->add_subcommand("probe", "measure memory bandwidth/latency per NUMA pair (and H2D/D2H with CUDA)");
  a.probe->add_flag("--quick", a.quick, "small buffers and few repetitions: seconds");
  a.probe->add_option("-o,--output", a.output, "calibration YAML to write")->capture_default_str();
  a.probe->add_option("--template", a.template_name, "node template name the figures are for (default: host name)");
  a.probe->add_option("--cpuset", a.cpuset, "only these OS CPUs (0-3,8)");
}

int run_real_command() {
  RealArgs& a = args();
  if (!a.real || !*a.real) return -1;
  if (*a.topo) return cmd_real_topo(a);
  if (*a.place) return cmd_real_place(a);
  if (*a.exec) return cmd_real_exec(a);
  if (*a.bind) return cmd_real_bind(a);
  if (*a.probe) return cmd_real_probe(a);
  return -1;
}

}  // namespace gcsim
