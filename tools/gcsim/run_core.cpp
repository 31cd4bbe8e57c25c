#include "tools/gcsim/cli_checks.hpp"
#include "tools/gcsim/run_core.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "models/sched/registry.hpp"
#include "sim/core/input_file.hpp"
#include "sim/io/json_writer.hpp"
#include "sim/workload/slurm_time.hpp"
#include "sim/workload/trace_readers.hpp"

namespace gcsim {

namespace {

const SourceLoc kCli{"<command line>", 0, 0};

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

Cluster read_cluster(const RunSpec& s, const Trace& trace, bool& inferred) {
  inferred = s.cluster.empty();
  if (inferred) return infer_cluster(trace, s.nodes, s.cores_per_node);
  ClusterArgs ca;
  ca.nodes = s.nodes > 0 ? s.nodes : 1;
  ca.gpu_model = s.gpu_model;
  return load_cluster(s.cluster, ca);
}

// The name after `last` in its numbering: dgx032 -> dgx033, node9 -> node10.
std::string next_name(const std::string& last, int step) {
  size_t d = last.size();
  while (d > 0 && std::isdigit(static_cast<unsigned char>(last[d - 1]))) --d;
  const std::string stem = last.substr(0, d), digits = last.substr(d);
  const long long n = digits.empty() ? 0 : std::stoll(digits);
  std::string num = std::to_string(n + step);
  if (num.size() < digits.size()) num.insert(0, digits.size() - num.size(), '0');
  return stem + (digits.empty() ? "-" : "") + num;
}

}  // namespace

std::string fmt_duration(double s) { return human_duration(s); }

void ProgressBar::update(size_t done, size_t total) {
  if (!enabled_ || total == 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (done < total && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const int width = 40;
  const double f = static_cast<double>(done) / static_cast<double>(total);
  const int fill = static_cast<int>(f * width);
  std::string bar(fill, '#');
  bar.append(width - fill, '.');
  std::fprintf(stderr, "\r[%s] %5.1f%% %zu/%zu %s", bar.c_str(), 100.0 * f, done, total, unit_.c_str());
  if (done >= total) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

void apply_cluster_changes(Cluster& c, const RunSpec& spec) {
  if (spec.nic_bps) {
    if (*spec.nic_bps <= 0) throw InputError(kCli, "nic: the line rate must be positive");
    for (auto& t : c.templates)
      for (auto& n : t.nics) n.bandwidth_bps = *spec.nic_bps;
  }
  if (!spec.node_count && spec.node_delta == 0) return;
  const int have = static_cast<int>(c.nodes.size());
  const int want = spec.node_count.value_or(have) + spec.node_delta;
  if (want < 1) throw InputError(kCli, "a cluster of " + std::to_string(want) + " nodes: it needs at least one");
  if (have == 0) throw InputError(kCli, "the cluster has no node to copy");
  if (want < have) {
    c.nodes.resize(want);
    for (auto& p : c.partitions) std::erase_if(p.nodes, [&](int i) { return i >= want; });
    for (auto& sw : c.network.switches) std::erase_if(sw.nodes, [&](int i) { return i >= want; });
  } else {
    const Node last = c.nodes.back();
    int leaf = -1;
    for (size_t s = 0; s < c.network.switches.size(); ++s)
      if (std::count(c.network.switches[s].nodes.begin(), c.network.switches[s].nodes.end(), have - 1))
        leaf = static_cast<int>(s);
    for (int i = have; i < want; ++i) {
      Node n = last;
      n.name = next_name(last.name, i - have + 1);
      if (c.find_node(n.name) >= 0)
        throw InputError(kCli, "growing to " + std::to_string(want) + " nodes: the added node name '" + n.name + "' is taken");
      c.nodes.push_back(n);
      for (int p : n.partitions) c.partitions[p].nodes.push_back(i);
      if (leaf >= 0) c.network.switches[leaf].nodes.push_back(i);
    }
  }
  c.index();
}

void add_run_spec_options(CLI::App* c, RunSpec& s, std::vector<std::string>& set, bool trace_required) {
  c->add_option("--cluster", s.cluster, "cluster description (.yaml); omitted for SWF: inferred from the header");
  auto* trace = c->add_option("--trace", s.trace, "job trace: SWF (.swf[.gz]), sbatch-trace CSV, sacct, GPU traces");
  if (trace_required) trace->required();
  c->add_option("--policy", s.policy, "scheduling policy (see 'gcsim policies')")->capture_default_str();
  c->add_option("--binding", s.binding, "placement inside nodes")
      ->check(CLI::IsMember(placement_mode_names()))
      ->capture_default_str();
  c->add_option("--seed", s.seed, "master seed of the named random streams")
      ->check(whole_number_at_least(0))
      ->capture_default_str();
  c->add_option("--nodes", s.nodes,
                "nodes of an imported single-node --cluster (hwloc/NCCL XML, nvidia-smi), or to infer for SWF")
      ->check(whole_number_at_least(1));
  c->add_option("--gpu-model", s.gpu_model, "GPU model an nvidia-smi matrix does not name");
  c->add_option("--cores-per-node", s.cores_per_node, "with an SWF trace and no --cluster: cores per node")
      ->check(whole_number_at_least(1));
  c->add_option("--start", s.start,
                "wall-clock time of the trace's t=0 for sacct timestamps (default: the trace's own, else 1970)");
  c->add_option("--accounts", s.accounts,
                "slurm policy: associations and shares, as 'sacctmgr dump CLUSTER file=F' writes them");
  c->add_option("--set", set,
                "slurm policy: override a SchedulerParameters option or timer phase (KEY=VALUE, repeatable)");

  add_window_options(c, s.window);
  c->add_option("--runtime-model", s.runtime_model,
                "none: jobs run their recorded durations; step: placement and link contention change runtime")
      ->check(CLI::IsMember({"none", "step"}))
      ->capture_default_str();
  c->add_option("--profiles", s.profiles, "step model: workload profiles and rules (YAML); default by GPU count");
  c->add_option("--reference", s.reference, "step model: placement the trace durations were measured at")
      ->check(CLI::IsMember({"ideal", "as-recorded"}))
      ->capture_default_str();
  c->add_flag("--no-contention", s.no_contention, "step model: jobs never slow each other on shared links");
  c->add_option("--nccl-tuning", s.nccl_tuning, "step model: NCCL tuning YAML (default configs/nccl/default.yaml)");
  c->add_option("--host-params", s.host_params, "step model: host/NUMA parameters (default configs/host/default.yaml)");
  c->add_option("--host-calibration", s.host_calibration,
                "step model: measured host figures over the parameters, as `gcsim real probe` writes them (repeatable)");
  c->add_flag("--reverse-ties", s.reverse_ties,
              "determinism check: process simultaneous equal events in reverse insertion order (outputs must not change)");
}

void apply_set_options(RunSpec& spec, const std::vector<std::string>& set) {
  for (const auto& kv : set) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError(kCli, "--set '" + kv + "': expected KEY=VALUE");
    spec.overrides[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
}

SharedInputs read_shared_inputs(const RunSpec& spec) {
  SharedInputs s;
  Diagnostics warnings;
  s.trace = read_trace(spec.trace, warnings);
  for (const auto& d : warnings.all()) std::cerr << d.str() << "\n";
  bool inferred = false;
  s.cluster = read_cluster(spec, *s.trace, inferred);
  s.cluster_path = spec.cluster;
  return s;
}

std::unique_ptr<PreparedRun> prepare_run(const RunSpec& a, const std::vector<std::string>& argv,
                                         const SharedInputs* shared) {
  auto p = std::make_unique<PreparedRun>();
  p->spec = a;
  Diagnostics& warnings = p->warnings;
  const auto& known = policy_list();
  if (std::none_of(known.begin(), known.end(), [&](const PolicyInfo& x) { return x.name == a.policy; }))
    throw InputError(kCli, "unknown policy '" + a.policy + "' (see 'gcsim policies')");
  const auto mode = parse_placement_mode(a.binding);
  if (!mode) throw InputError(kCli, "unknown binding '" + a.binding + "'");
  // Read and validate every input before any run directory is touched.
  // Not `c ? *shared : read_trace()`: that conditional is a prvalue copied from either
  // operand, which copied the 312k-job Curie trace once more.
  if (shared && shared->trace) {
    p->trace = *shared->trace;
  } else {
    p->trace = read_trace(a.trace, warnings);
  }
  apply_window_args(p->trace, a.window);
  if (p->trace.jobs.empty()) throw InputError(SourceLoc{a.trace, 0, 0}, "no jobs left in the --from/--to window");
  if (!a.start.empty()) {
    const auto t = slurm_time::parse_iso(a.start);
    if (!t) throw InputError(kCli, "invalid --start '" + a.start + "': expected YYYY-MM-DDTHH:MM:SS");
    p->trace.unix_start = *t;
  }
  if (shared && shared->cluster && shared->cluster_path == a.cluster) {
    p->cluster = *shared->cluster;
    p->inferred = a.cluster.empty();
  } else {
    p->cluster = read_cluster(a, p->trace, p->inferred);
  }
  apply_cluster_changes(p->cluster, a);
  SlurmPolicyInputs pin;
  pin.cluster = &p->cluster;
  pin.accounts_path = a.accounts;
  pin.overrides = a.overrides;
  p->policy = make_policy(a.policy, pin, warnings);

  ManifestInfo& m = p->manifest;
  m.argv = argv;
  if (!a.cluster.empty()) m.inputs.push_back({"cluster", a.cluster, file_sha256(a.cluster)});
  m.inputs.push_back({"trace", a.trace, file_sha256(a.trace)});
  if (!a.accounts.empty()) m.inputs.push_back({"accounts", a.accounts, file_sha256(a.accounts)});
  m.seed = a.seed;
  m.policy = p->policy->name();
  m.policy_params = p->policy->parameters();
  p->allocator = std::make_unique<PlacementAllocator>(*mode);
  p->allocator->keep_cpu_job_bindings(false);  // nothing in a run reads them (sacct prints per-node cores)
  m.allocator = p->allocator->name();
  // Placement-dependent runtime (models/runtime).
  if (a.runtime_model != "step" && !a.host_calibration.empty())
    throw InputError(kCli, "--host-calibration is read by the step runtime model: add --runtime-model step");
  if (a.runtime_model != "step" && !a.profiles.empty())
    throw InputError(kCli, "--profiles is read by the step runtime model: add --runtime-model step");
  if (a.runtime_model == "step") {
    const std::string tpath = a.nccl_tuning.empty() ? shipped_config("nccl/default.yaml") : a.nccl_tuning;
    const std::string hpath = a.host_params.empty() ? shipped_config("host/default.yaml") : a.host_params;
    p->tuning = load_nccl_tuning(tpath);
    p->host = load_host_params(hpath);
    m.inputs.push_back({"nccl-tuning", tpath, file_sha256(tpath)});
    m.inputs.push_back({"host-params", hpath, file_sha256(hpath)});
    for (const auto& cpath : a.host_calibration) {
      p->host = apply_host_calibration(std::move(*p->host), cpath);
      m.inputs.push_back({"host-calibration", cpath, file_sha256(cpath)});
    }
    if (!a.profiles.empty()) {
      p->profiles = load_profiles(a.profiles);
      m.inputs.push_back({"profiles", a.profiles, file_sha256(a.profiles)});
    }
    StepRuntimeOptions ro;
    ro.reference = a.reference == "as-recorded" ? ReferencePlacement::kAsRecorded : ReferencePlacement::kIdeal;
    ro.contention = !a.no_contention;
    p->runtime = std::make_unique<StepRuntimeModel>(p->cluster, *p->tuning, *p->host, p->profiles, ro);
    m.assumptions.push_back("runtime: step model (compute, NCCL collective, host/NUMA, " +
                            std::string(ro.contention ? "max-min link contention" : "no contention") +
                            "); trace durations are runtimes at the " + a.reference + " placement");
  } else if (a.runtime_model != "none") {
    throw InputError(kCli, "unknown runtime model '" + a.runtime_model + "' (none or step)");
  }
  m.assumptions.insert(m.assumptions.begin(), p->trace.assumptions.begin(), p->trace.assumptions.end());
  if (p->inferred) m.assumptions.push_back("cluster " + p->cluster.source);
  if (a.node_count || a.node_delta)
    m.assumptions.push_back("cluster changed: " + std::to_string(p->cluster.nodes.size()) + " nodes");
  if (a.nic_bps) m.assumptions.push_back("cluster changed: every NIC at " + std::to_string(*a.nic_bps / 1e9) + " Gb/s");
  return p;
}

RunOutput execute_run(PreparedRun& p, const std::string& out, const std::function<void(size_t, size_t)>& progress,
                      const std::atomic<bool>* stop) {
  const auto t0 = std::chrono::steady_clock::now();
  ManifestInfo& m = p.manifest;
  ensure_directory(out);
  m.completed = false;
  write_file_atomic(out, "manifest.json", format_manifest_json(m));

  SimulationOptions opt;
  opt.progress = progress;
  opt.runtime = p.runtime.get();
  opt.stop = stop;
  opt.reverse_ties = p.spec.reverse_ties;
  opt.keep_task_bindings = false;  // the outputs read per-node cores and the NUMA flag only
  Simulation sim(p.cluster, p.trace, *p.policy, *p.allocator, opt);
  RunOutput r;
  r.result = sim.run();
  r.outcomes = sim.take_outcomes();
  r.summary = summarize(p.cluster, p.trace, r.outcomes);
  const Trace& trace = p.trace;

  write_file_atomic(out, "jobs.sacct", [&](std::ostream& os) { write_sacct(os, p.cluster, trace, r.outcomes); });
  write_file_atomic(out, "summary.json", format_summary_json(r.summary));
  {
    std::string rej;
    for (size_t j = 0; j < r.outcomes.size(); ++j)
      if (r.outcomes[j].status == JobStatus::kRejected)
        rej += std::to_string(trace.jobs[j].id.value) + "|" + trace.jobs[j].name + "|" + r.outcomes[j].reject_reason +
               "\n";
    // Always written, so a rerun into the same directory never leaves a stale list.
    write_file_atomic(out, "rejected.txt", "JobID|JobName|Reason\n" + rej);
  }
  // Replay report: how far simulated starts are from the recorded ones.
  auto& dev = r.start_deviation_s;
  for (size_t j = 0; j < trace.jobs.size(); ++j)
    if (trace.jobs[j].recorded_start && r.outcomes[j].status == JobStatus::kDone)
      dev.push_back(std::abs((r.outcomes[j].start - *trace.jobs[j].recorded_start).to_seconds()));
  std::sort(dev.begin(), dev.end());
  if (!dev.empty()) {
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
    write_file_atomic(out, "replay.json", w.str());
  }
  if (p.runtime) {
    // Simulated over recorded run time of the jobs that finished their work.
    for (size_t j = 0; j < trace.jobs.size(); ++j) {
      const auto& o = r.outcomes[j];
      if (o.status != JobStatus::kDone || o.timed_out || trace.jobs[j].duration <= SimTime()) continue;
      r.runtime_ratio.push_back((o.end - o.start).to_seconds() / trace.jobs[j].duration.to_seconds());
    }
    std::sort(r.runtime_ratio.begin(), r.runtime_ratio.end());
    r.unmodelled_comm_jobs = p.runtime->unmodelled_comm_jobs();
  }
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.result = r.result;
  m.completed = r.result.completed;
  m.wall_seconds = r.wall_seconds;
  m.peak_rss_kib = peak_rss_kib();
  write_file_atomic(out, "manifest.json", format_manifest_json(m));
  return r;
}

void print_run_summary(const PreparedRun& p, const RunOutput& r, const std::string& out) {
  const Summary& s = r.summary;
  std::printf("gcsim %s: policy %s on %s (%zu nodes, %lld CPUs, %lld GPUs)\n", gcsim_version().c_str(),
              p.manifest.policy.c_str(), p.cluster.name.c_str(), p.cluster.nodes.size(),
              static_cast<long long>(s.total_cpus), static_cast<long long>(s.total_gpus));
  std::printf("  trace     %s: %lld jobs (%lld finished, %lld timed out, %lld rejected, %lld backfilled)\n",
              p.spec.trace.c_str(), static_cast<long long>(s.jobs), static_cast<long long>(s.finished),
              static_cast<long long>(s.timed_out), static_cast<long long>(s.rejected),
              static_cast<long long>(s.backfilled));
  std::printf("  makespan  %s\n", fmt_duration(s.makespan_s).c_str());
  std::printf("  wait      mean %s, median %s, p95 %s, max %s\n", fmt_duration(s.wait_s.mean).c_str(),
              fmt_duration(s.wait_s.median).c_str(), fmt_duration(s.wait_s.p95).c_str(),
              fmt_duration(s.wait_s.max).c_str());
  std::printf("  slowdown  bounded (10 s) mean %.2f\n", s.bounded_slowdown_mean);
  std::printf("  util      CPU %.1f%%, GPU %.1f%%\n", 100 * s.cpu_utilization, 100 * s.gpu_utilization);
  const auto& dev = r.start_deviation_s;
  if (!dev.empty()) {
    const double within = static_cast<double>(std::count_if(dev.begin(), dev.end(), [](double d) { return d <= 60; })) /
                          static_cast<double>(dev.size());
    std::printf("  replay    |sim - recorded start|: median %s, p95 %s; %.1f%% within 60 s (%zu jobs)\n",
                fmt_duration(quantile_sorted(dev, 0.5)).c_str(), fmt_duration(quantile_sorted(dev, 0.95)).c_str(),
                100 * within, dev.size());
  }
  if (p.runtime) {
    const auto& ratio = r.runtime_ratio;
    if (!ratio.empty()) {
      double sum = 0;
      for (double x : ratio) sum += x;
      std::printf("  runtime   step model: simulated / recorded run time mean %.3f, median %.3f, max %.3f (%zu jobs)\n",
                  sum / static_cast<double>(ratio.size()), quantile_sorted(ratio, 0.5), ratio.back(), ratio.size());
    }
    if (r.unmodelled_comm_jobs > 0)
      std::printf("  runtime   %lld multi-GPU jobs span nodes without NICs: their communication is not modelled\n",
                  static_cast<long long>(r.unmodelled_comm_jobs));
  }
  std::printf("  run       %.2f s wall, %.0f jobs/s, peak RSS %.1f MiB -> %s/\n", r.wall_seconds,
              r.wall_seconds > 0 ? static_cast<double>(s.jobs) / r.wall_seconds : 0.0,
              static_cast<double>(p.manifest.peak_rss_kib) / 1024.0, out.c_str());
}

}  // namespace gcsim
