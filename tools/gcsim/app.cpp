#include "tools/gcsim/app.hpp"
#include "tools/gcsim/cli_common.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "models/collective/nccl_tuning.hpp"
#include "models/host/host_model.hpp"
#include "models/placement/placement.hpp"
#include "models/runtime/step_runtime.hpp"
#include "models/sched/registry.hpp"
#include "sim/cluster/cluster_yaml.hpp"
#include "sim/cluster/import_node.hpp"
#include "sim/cluster/inventories.hpp"
#include "sim/cluster/inventory_alibaba.hpp"
#include "sim/cluster/import_slurm_conf.hpp"
#include "sim/cluster/sinfo.hpp"
#include "sim/cluster/topo_views.hpp"
#include "sim/core/hostlist.hpp"
#include "sim/core/input_file.hpp"
#include "sim/io/json_writer.hpp"
#include "sim/io/run_outputs.hpp"
#include "sim/metrics/summary.hpp"
#include "sim/placement/allocator.hpp"
#include "sim/sched/simulation.hpp"
#include "sim/workload/slurm_time.hpp"
#include "sim/workload/trace_readers.hpp"

namespace gcsim {

namespace {

Cluster from_node(NodeTemplate t, const std::string& path, const ClusterArgs& ca, Diagnostics& warnings) {
  if (t.name.empty()) t.name = "imported";
  std::cerr << warnings.format();
  return make_homogeneous_cluster(t.name, std::move(t), std::max(1, ca.nodes), path);
}

}  // namespace

bool ends_with(const std::string& s, std::string_view suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

std::string shipped_config(const std::string& rel) {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto near = exe.parent_path() / ".." / "configs" / rel;
    if (std::filesystem::exists(near)) return near.lexically_normal().string();
  }
  return std::string(GCSIM_SOURCE_DIR) + "/configs/" + rel;
}

Cluster load_cluster(const std::string& path, const ClusterArgs& ca) {
  if (ends_with(path, ".yaml") || ends_with(path, ".yml")) return load_cluster_yaml(path);
  Diagnostics warnings;
  if (ends_with(path, ".conf")) {
    Cluster c = load_slurm_conf(path, warnings);
    std::cerr << warnings.format();
    return c;
  }
  {
    // Inventories that ship with GPU traces.
    const std::string text = read_input_file(path);
    const std::string head = text.substr(0, text.find('\n'));
    if (head.rfind("sn,", 0) == 0 && head.find("cpu_milli") != std::string::npos) {
      Cluster c = parse_alibaba_v2023_nodes(text, path, warnings);
      std::cerr << warnings.format();
      return c;
    }
    if (head.rfind("machineId", 0) == 0 || head.rfind(",machineId", 0) == 0) {
      Cluster c = parse_philly_machines(text, path, philly_default_node(), warnings);
      std::cerr << warnings.format();
      return c;
    }
  }
  NodeImportOptions opt;
  opt.gpu_model = ca.gpu_model;
  opt.nic_bandwidth_bps = ca.nic_gbps * 1e9;
  if (auto t = import_node_description(path, opt, warnings)) return from_node(std::move(*t), path, ca, warnings);
  throw InputError(SourceLoc{path, 0, 0},
                   "unknown cluster format (expected YAML, slurm.conf, hwloc XML, NCCL topology XML or "
                   "nvidia-smi topo -m text)");
}

namespace {

// `gcsim run --trace X.swf` without --cluster: a homogeneous CPU cluster from the header.
Cluster infer_cluster(const Trace& trace, int nodes_override, int cores_override) {
  int64_t nodes = nodes_override > 0 ? nodes_override : trace.max_nodes.value_or(0);
  int64_t procs = trace.max_procs.value_or(0);
  if (cores_override > 0 && nodes > 0) procs = nodes * cores_override;
  if (procs <= 0 && nodes <= 0)
    throw InputError(SourceLoc{trace.path, 0, 0},
                     "the trace has no MaxNodes/MaxProcs header; pass --cluster, or --nodes and --cores-per-node");
  if (nodes <= 0) nodes = procs;
  if (procs <= 0) procs = nodes;
  if (procs % nodes != 0)
    throw InputError(SourceLoc{trace.path, 0, 0},
                     "MaxProcs " + std::to_string(procs) + " is not a multiple of MaxNodes " + std::to_string(nodes) +
                         "; pass --cluster");
  const std::string name = trace.computer.empty() ? "swf-inferred" : trace.computer;
  return make_cpu_cluster(name, static_cast<int>(nodes), static_cast<int>(procs / nodes),
                          "inferred from the SWF header of " + trace.path);
}

class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : enabled_(enabled) {}
  void update(size_t done, size_t total) {
    if (!enabled_ || total == 0) return;
    const auto now = std::chrono::steady_clock::now();
    if (done < total && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    const int width = 40;
    const double f = static_cast<double>(done) / static_cast<double>(total);
    const int fill = static_cast<int>(f * width);
    std::string bar(fill, '#');
    bar.append(width - fill, '.');
    std::fprintf(stderr, "\r[%s] %5.1f%% %zu/%zu jobs", bar.c_str(), 100.0 * f, done, total);
    if (done >= total) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point last_{};
};

std::string fmt_duration(double s) {
  char buf[64];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0f s", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  else if (s < 86400 * 2) std::snprintf(buf, sizeof buf, "%.2f h", s / 3600);
  else std::snprintf(buf, sizeof buf, "%.2f d", s / 86400);
  return buf;
}

struct RunArgs {
  std::string cluster, trace, out = "runs/latest", policy = "easy", start, binding = "slurm";
  uint64_t seed = 1;
  int nodes = 0, cores_per_node = 0;
  std::string gpu_model;
  bool no_progress = false;
  std::string accounts;
  std::vector<std::string> set;
  WindowArgs window;
  std::string runtime_model = "none", profiles, reference = "ideal", nccl_tuning, host_params;
  std::vector<std::string> host_calibration;
  bool no_contention = false;
};

int cmd_run(const RunArgs& a, const std::vector<std::string>& argv) {
  const auto t0 = std::chrono::steady_clock::now();
  Diagnostics warnings;
  const auto& known = policy_list();
  if (std::none_of(known.begin(), known.end(), [&](const PolicyInfo& p) { return p.name == a.policy; })) {
    std::cerr << "gcsim: error: unknown policy '" << a.policy << "' (see 'gcsim policies')\n";
    return kExitBadInput;
  }
  // Read and validate every input before touching the run directory.
  Trace trace = read_trace(a.trace, warnings);
  apply_window_args(trace, a.window);
  if (trace.jobs.empty()) throw InputError(SourceLoc{a.trace, 0, 0}, "no jobs left in the --from/--to window");
  if (!a.start.empty()) {
    const auto t = slurm_time::parse_iso(a.start);
    if (!t) {
      std::cerr << "gcsim: error: invalid --start '" << a.start << "': expected YYYY-MM-DDTHH:MM:SS\n";
      return kExitBadInput;
    }
    trace.unix_start = *t;
  }
  Cluster cluster;
  bool inferred = false;
  if (a.cluster.empty()) {
    cluster = infer_cluster(trace, a.nodes, a.cores_per_node);
    inferred = true;
  } else {
    ClusterArgs ca;
    ca.nodes = a.nodes > 0 ? a.nodes : 1;
    ca.gpu_model = a.gpu_model;
    cluster = load_cluster(a.cluster, ca);
  }
  SlurmPolicyInputs pin;
  pin.cluster = &cluster;
  pin.accounts_path = a.accounts;
  for (const auto& kv : a.set) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "gcsim: error: --set '" << kv << "': expected KEY=VALUE\n";
      return kExitBadInput;
    }
    pin.overrides[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  auto policy = make_policy(a.policy, pin, warnings);
  for (const auto& d : warnings.all()) std::cerr << d.str() << "\n";
  if (inferred)
    std::cerr << "gcsim: note: no --cluster given; inferred " << cluster.nodes.size() << " nodes x "
              << cluster.templates[0].cores() << " cores (CPU only, memory not modelled) from "
              << (a.nodes > 0 || a.cores_per_node > 0 ? "--nodes/--cores-per-node" : "the SWF header") << "\n";

  ManifestInfo m;
  m.argv = argv;
  if (!a.cluster.empty()) m.inputs.push_back({"cluster", a.cluster, file_sha256(a.cluster)});
  m.inputs.push_back({"trace", a.trace, file_sha256(a.trace)});
  if (!a.accounts.empty()) m.inputs.push_back({"accounts", a.accounts, file_sha256(a.accounts)});
  m.seed = a.seed;
  m.policy = policy->name();
  m.policy_params = policy->parameters();
  const auto mode = parse_placement_mode(a.binding);
  if (!mode) {
    std::cerr << "gcsim: error: unknown --binding '" << a.binding << "'\n";
    return kExitBadInput;
  }
  PlacementAllocator allocator(*mode);
  m.allocator = allocator.name();
  // Placement-dependent runtime (models/runtime): every input read before the run dir is touched.
  std::optional<NcclTuning> tuning;
  std::optional<HostParams> host;
  ProfileSet profiles;
  std::unique_ptr<StepRuntimeModel> runtime;
  if (a.runtime_model != "step" && !a.host_calibration.empty())
    throw InputError(SourceLoc{"<command line>", 0, 0},
                     "--host-calibration is read by the step runtime model: add --runtime-model step");
  if (a.runtime_model == "step") {
    const std::string tpath = a.nccl_tuning.empty() ? shipped_config("nccl/default.yaml") : a.nccl_tuning;
    const std::string hpath = a.host_params.empty() ? shipped_config("host/default.yaml") : a.host_params;
    tuning = load_nccl_tuning(tpath);
    host = load_host_params(hpath);
    m.inputs.push_back({"nccl-tuning", tpath, file_sha256(tpath)});
    m.inputs.push_back({"host-params", hpath, file_sha256(hpath)});
    for (const auto& cpath : a.host_calibration) {
      host = apply_host_calibration(std::move(*host), cpath);
      m.inputs.push_back({"host-calibration", cpath, file_sha256(cpath)});
    }
    if (!a.profiles.empty()) {
      profiles = load_profiles(a.profiles);
      m.inputs.push_back({"profiles", a.profiles, file_sha256(a.profiles)});
    }
    StepRuntimeOptions ro;
    ro.reference = a.reference == "as-recorded" ? ReferencePlacement::kAsRecorded : ReferencePlacement::kIdeal;
    ro.contention = !a.no_contention;
    runtime = std::make_unique<StepRuntimeModel>(cluster, *tuning, *host, profiles, ro);
    m.assumptions.push_back("runtime: step model (compute, NCCL collective, host/NUMA, " +
                            std::string(ro.contention ? "max-min link contention" : "no contention") +
                            "); trace durations are runtimes at the " + a.reference + " placement");
  }
  m.assumptions.insert(m.assumptions.begin(), trace.assumptions.begin(), trace.assumptions.end());
  if (inferred) m.assumptions.push_back("cluster " + cluster.source);

  ensure_directory(a.out);
  m.completed = false;
  write_file_atomic(a.out, "manifest.json", format_manifest_json(m));

  ProgressBar bar(!a.no_progress && ::isatty(STDERR_FILENO));
  SimulationOptions opt;
  opt.progress = [&](size_t done, size_t total) { bar.update(done, total); };
  opt.runtime = runtime.get();
  Simulation sim(cluster, trace, *policy, allocator, opt);
  const SimulationResult res = sim.run();
  const Summary s = summarize(cluster, trace, sim.outcomes());

  write_file_atomic(a.out, "jobs.sacct", format_sacct(cluster, trace, sim.outcomes()));
  write_file_atomic(a.out, "summary.json", format_summary_json(s));
  {
    std::string rej;
    for (size_t j = 0; j < sim.outcomes().size(); ++j)
      if (sim.outcomes()[j].status == JobStatus::kRejected)
        rej += std::to_string(trace.jobs[j].id.value) + "|" + trace.jobs[j].name + "|" +
               sim.outcomes()[j].reject_reason + "\n";
    // Always written, so a rerun into the same directory never leaves a stale list.
    write_file_atomic(a.out, "rejected.txt", "JobID|JobName|Reason\n" + rej);
  }
  // Replay report: how far simulated starts are from the recorded ones.
  std::vector<double> dev;
  for (size_t j = 0; j < trace.jobs.size(); ++j)
    if (trace.jobs[j].recorded_start && sim.outcomes()[j].status == JobStatus::kDone)
      dev.push_back(std::abs((sim.outcomes()[j].start - *trace.jobs[j].recorded_start).to_seconds()));
  std::string replay_line;
  if (!dev.empty()) {
    std::sort(dev.begin(), dev.end());
    const double within = static_cast<double>(std::count_if(dev.begin(), dev.end(), [](double d) { return d <= 60; })) /
                          static_cast<double>(dev.size());
    JsonWriter w;
    w.begin_object();
    w.key("jobs_compared").value(static_cast<int64_t>(dev.size()));
    w.key("start_abs_diff_s").begin_object();
    w.key("median").value(quantile_sorted(dev, 0.5), 3);
    w.key("p95").value(quantile_sorted(dev, 0.95), 3);
    w.key("max").value(dev.back(), 3);
    w.end_object();
    w.key("share_within_60s").value(within, 6);
    w.end_object();
    write_file_atomic(a.out, "replay.json", w.str());
    char buf[200];
    std::snprintf(buf, sizeof buf, "  replay    |sim - recorded start|: median %s, p95 %s; %.1f%% within 60 s (%zu jobs)\n",
                  fmt_duration(quantile_sorted(dev, 0.5)).c_str(), fmt_duration(quantile_sorted(dev, 0.95)).c_str(),
                  100 * within, dev.size());
    replay_line = buf;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.result = res;
  m.completed = res.completed;
  m.wall_seconds = wall;
  m.peak_rss_kib = peak_rss_kib();
  write_file_atomic(a.out, "manifest.json", format_manifest_json(m));

  std::printf("gcsim %s: policy %s on %s (%zu nodes, %lld CPUs, %lld GPUs)\n", gcsim_version().c_str(),
              m.policy.c_str(), cluster.name.c_str(), cluster.nodes.size(),
              static_cast<long long>(s.total_cpus), static_cast<long long>(s.total_gpus));
  std::printf("  trace     %s: %lld jobs (%lld finished, %lld timed out, %lld rejected, %lld backfilled)\n",
              a.trace.c_str(), static_cast<long long>(s.jobs), static_cast<long long>(s.finished),
              static_cast<long long>(s.timed_out), static_cast<long long>(s.rejected),
              static_cast<long long>(s.backfilled));
  std::printf("  makespan  %s\n", fmt_duration(s.makespan_s).c_str());
  std::printf("  wait      mean %s, median %s, p95 %s, max %s\n", fmt_duration(s.wait_s.mean).c_str(),
              fmt_duration(s.wait_s.median).c_str(), fmt_duration(s.wait_s.p95).c_str(),
              fmt_duration(s.wait_s.max).c_str());
  std::printf("  slowdown  bounded (10 s) mean %.2f\n", s.bounded_slowdown_mean);
  std::printf("  util      CPU %.1f%%, GPU %.1f%%\n", 100 * s.cpu_utilization, 100 * s.gpu_utilization);
  std::fputs(replay_line.c_str(), stdout);
  if (runtime) {
    // Simulated over recorded run time of the jobs that finished their work.
    std::vector<double> ratio;
    for (size_t j = 0; j < trace.jobs.size(); ++j) {
      const auto& o = sim.outcomes()[j];
      if (o.status != JobStatus::kDone || o.timed_out || trace.jobs[j].duration <= SimTime()) continue;
      ratio.push_back((o.end - o.start).to_seconds() / trace.jobs[j].duration.to_seconds());
    }
    if (!ratio.empty()) {
      std::sort(ratio.begin(), ratio.end());
      double sum = 0;
      for (double r : ratio) sum += r;
      std::printf("  runtime   step model: simulated / recorded run time mean %.3f, median %.3f, max %.3f (%zu jobs)\n",
                  sum / static_cast<double>(ratio.size()), quantile_sorted(ratio, 0.5), ratio.back(), ratio.size());
    }
    if (runtime->unmodelled_comm_jobs() > 0)
      std::printf("  runtime   %lld multi-GPU jobs span nodes without NICs: their communication is not modelled\n",
                  static_cast<long long>(runtime->unmodelled_comm_jobs()));
  }
  std::printf("  run       %.2f s wall, %.0f jobs/s, peak RSS %.1f MiB -> %s/\n", wall,
              wall > 0 ? static_cast<double>(s.jobs) / wall : 0.0, static_cast<double>(m.peak_rss_kib) / 1024.0,
              a.out.c_str());
  return res.completed ? 0 : 1;
}

// Node names of each template, as one hostlist per template (cluster order).
std::vector<std::pair<int, std::string>> template_groups(const Cluster& c) {
  std::vector<std::pair<int, std::string>> out;
  for (size_t t = 0; t < c.templates.size(); ++t) {
    std::vector<std::string> names;
    for (const auto& n : c.nodes)
      if (n.template_index == static_cast<int>(t)) names.push_back(n.name);
    if (!names.empty()) out.emplace_back(static_cast<int>(t), hostlist::compress(names));
  }
  return out;
}

}  // namespace

int cmd_topo(const Cluster& c, const std::string& node, const std::string& format) {
  std::vector<std::pair<int, std::string>> groups;
  if (!node.empty()) {
    const int n = c.find_node(node);
    if (n < 0) {
      std::cerr << "gcsim: error: no node '" << node << "' in " << c.source << "\n";
      return kExitBadInput;
    }
    groups.emplace_back(c.nodes[n].template_index, node);
  } else {
    groups = template_groups(c);
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto& [t, names] = groups[i];
    const NodeTemplate& tmpl = c.templates[t];
    if (format == "gres") {
      std::cout << format_gres_conf(tmpl, names);
    } else if (format == "slurm") {
      std::cout << format_slurm_node(tmpl, names) << (format_slurm_node(tmpl, names).ends_with("\n") ? "" : "\n");
    } else {
      if (groups.size() > 1) std::cout << (i ? "\n" : "") << "# " << names << "\n";
      const std::string m = format_nvidia_smi_topo(tmpl);
      std::cout << (m.empty() ? std::string("(no GPUs)\n") : m);
    }
  }
  return 0;
}

int run_cli(const std::vector<std::string>& args) {
  CLI::App app{"gcsim: a discrete-event simulator of GPU clusters run by Slurm", "gcsim"};
  app.require_subcommand(1);
  app.set_version_flag("--version", gcsim_version() + " (" + gcsim_git_sha() + ")");

  RunArgs ra;
  auto* run = app.add_subcommand("run", "simulate a trace on a cluster and write a run directory");
  run->add_option("--cluster", ra.cluster, "cluster description (.yaml); omitted for SWF: inferred from the header");
  run->add_option("--trace", ra.trace, "job trace: SWF (.swf[.gz]) or sbatch-trace CSV (.csv)")->required();
  run->add_option("--out", ra.out, "run directory to write (jobs.sacct, summary.json, manifest.json)")
      ->capture_default_str();
  run->add_option("--policy", ra.policy, "scheduling policy (see 'gcsim policies')")->capture_default_str();
  run->add_option("--binding", ra.binding, "placement inside nodes")
      ->check(CLI::IsMember(placement_mode_names()))
      ->capture_default_str();
  run->add_option("--seed", ra.seed, "master seed of the named random streams")->capture_default_str();
  run->add_option("--nodes", ra.nodes,
                  "nodes of an imported single-node --cluster (hwloc/NCCL XML, nvidia-smi), or to infer for SWF");
  run->add_option("--gpu-model", ra.gpu_model, "GPU model an nvidia-smi matrix does not name");
  run->add_option("--cores-per-node", ra.cores_per_node, "with an SWF trace and no --cluster: cores per node");
  run->add_option("--start", ra.start,
                  "wall-clock time of the trace's t=0 for sacct timestamps (default: the trace's own, else 1970)");
  run->add_flag("--no-progress", ra.no_progress, "never draw the progress bar");
  run->add_option("--accounts", ra.accounts,
                  "slurm policy: associations and shares, as 'sacctmgr dump CLUSTER file=F' writes them");
  run->add_option("--set", ra.set,
                  "slurm policy: override a SchedulerParameters option or timer phase (KEY=VALUE, repeatable)");

  add_window_options(run, ra.window);
  run->add_option("--runtime-model", ra.runtime_model,
                  "none: jobs run their recorded durations; step: placement and link contention change runtime")
      ->check(CLI::IsMember({"none", "step"}))
      ->capture_default_str();
  run->add_option("--profiles", ra.profiles, "step model: workload profiles and rules (YAML); default by GPU count");
  run->add_option("--reference", ra.reference, "step model: placement the trace durations were measured at")
      ->check(CLI::IsMember({"ideal", "as-recorded"}))
      ->capture_default_str();
  run->add_flag("--no-contention", ra.no_contention, "step model: jobs never slow each other on shared links");
  run->add_option("--nccl-tuning", ra.nccl_tuning, "step model: NCCL tuning YAML (default configs/nccl/default.yaml)");
  run->add_option("--host-params", ra.host_params, "step model: host/NUMA parameters (default configs/host/default.yaml)");
  run->add_option("--host-calibration", ra.host_calibration,
                  "step model: measured host figures over the parameters, as `gcsim real probe` writes them (repeatable)");

  std::string sinfo_cluster;
  auto* sinfo = app.add_subcommand("sinfo", "print the per-node breakdown as sinfo -N -o \"%N %P %c %m %G\" does");
  sinfo->add_option("--cluster", sinfo_cluster, "cluster description (.yaml)")->required();

  std::string topo_cluster, topo_node, topo_format = "matrix";
  ClusterArgs topo_ca;
  auto* topo = app.add_subcommand("topo", "print a node's topology: the nvidia-smi topo -m matrix, gres.conf or slurm.conf lines");
  topo->add_option("--cluster", topo_cluster, "cluster description")->required();
  topo->add_option("--node", topo_node, "node name (default: one node of each template)");
  topo->add_option("--format", topo_format, "matrix (nvidia-smi topo -m), gres (gres.conf) or slurm (NodeName line)")
      ->check(CLI::IsMember({"matrix", "gres", "slurm"}))
      ->capture_default_str();
  topo->add_option("--nodes", topo_ca.nodes, "copies of an imported single-node description")->capture_default_str();
  topo->add_option("--gpu-model", topo_ca.gpu_model, "GPU model an nvidia-smi matrix does not name");
  topo->add_option("--nic-gbps", topo_ca.nic_gbps, "NIC line rate an nvidia-smi matrix does not give");

  auto* policies = app.add_subcommand("policies", "list the scheduling policies and their parameters");
  add_trace_commands(app);
  add_nccl_commands(app);
  add_calibrate_commands(app);
  add_real_commands(app);

  // `gcsim real exec|bind ... -- CMD ARGS`: the command is not for CLI11.
  std::vector<std::string> own = args;
  if (args.size() > 2 && args[1] == "real") {
    auto dd = std::find(own.begin(), own.end(), "--");
    if (dd != own.end()) {
      set_real_command(std::vector<std::string>(dd + 1, own.end()));
      own.erase(dd, own.end());
    }
  }
  std::vector<std::string> rev(own.rbegin(), own.rend() - 1);
  try {
    app.parse(rev);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitBadInput;
  }
  try {
    if (*run) return cmd_run(ra, args);
    if (const int rc = run_trace_command(); rc >= 0) return rc;
    if (const int rc = run_nccl_command(); rc >= 0) return rc;
    if (const int rc = run_calibrate_command(); rc >= 0) return rc;
    if (const int rc = run_real_command(); rc >= 0) return rc;
    if (*sinfo) {
      std::cout << format_sinfo(load_cluster(sinfo_cluster));
      return 0;
    }
    if (*topo) return cmd_topo(load_cluster(topo_cluster, topo_ca), topo_node, topo_format);
    if (*policies) {
      for (const auto& p : policy_list()) {
        std::cout << p.name << "\t" << p.summary << "\n";
        auto pol = make_policy(p.name);
        for (const auto& [k, v] : pol->parameters()) std::cout << "    " << k << " = " << v << "\n";
      }
      return 0;
    }
  } catch (const InputError& e) {
    std::cerr << e.diagnostics().format();
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "gcsim: error: " << e.what() << "\n";
    return kExitBadInput;
  }
  return 0;
}

}  // namespace gcsim
