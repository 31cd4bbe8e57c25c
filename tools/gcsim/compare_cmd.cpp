// `gcsim compare`: several variants of one simulation side by side, one simulator
// instance per variant on a thread pool, then one report over all of them.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "sim/io/compare_report.hpp"
#include "sim/io/json_writer.hpp"
#include "tools/gcsim/cli_checks.hpp"
#include "tools/gcsim/cli_common.hpp"
#include "tools/gcsim/interrupt.hpp"
#include "tools/gcsim/run_core.hpp"
#include "tools/gcsim/variant.hpp"

namespace gcsim {

namespace {

struct CompareArgs {
  CLI::App* cmd = nullptr;
  RunSpec base;
  std::vector<std::string> set, variants;
  std::string out = "runs/compare";
  int threads = 0;  // 0: one per variant up to the machine's cores
  int bootstrap = 1000;
  bool no_progress = false;
};

CompareArgs& args() {
  static CompareArgs a;
  return a;
}

const SourceLoc kCli{"<command line>", 0, 0};

std::string cluster_text(const RunSpec& s, const Cluster& c) {
  return (s.cluster.empty() ? std::string("(inferred)") : s.cluster) + ": " + c.name + ", " +
         std::to_string(c.nodes.size()) + " nodes, " + std::to_string(c.total_cpus()) + " CPUs, " +
         std::to_string(c.total_gpus()) + " GPUs";
}

std::string compare_manifest(const std::vector<std::string>& argv, const std::vector<Variant>& vs, uint64_t seed,
                             int threads, bool completed, double wall, int64_t rss) {
  JsonWriter w;
  w.begin_object();
  w.key("gcsim_version").value(gcsim_version());
  w.key("git_sha").value(gcsim_git_sha());
  w.key("argv").begin_array();
  for (const auto& a : argv) w.value(a);
  w.end_array();
  w.key("seed").value(static_cast<int64_t>(seed));
  w.key("threads").value(static_cast<int64_t>(threads));
  w.key("variants").begin_array();
  for (const auto& v : vs) {
    w.begin_object();
    w.key("name").value(v.name);
    w.key("settings").value(v.settings_text());
    w.key("run_dir").value(v.name);
    w.end_object();
  }
  w.end_array();
  w.key("wall_seconds").value(wall, 3);
  w.key("peak_rss_kib").value(rss);
  w.key("completed").value(completed);
  w.end_object();
  return w.str();
}

int cmd_compare(CompareArgs& a, const std::vector<std::string>& argv) {
  const auto t0 = std::chrono::steady_clock::now();
  apply_set_options(a.base, a.set);
  if (a.variants.empty()) throw InputError(kCli, "compare needs at least one --variant NAME[:key=value,...]");
  if (a.threads < 0) throw InputError(kCli, "--threads must be 0 (automatic) or more");
  if (a.bootstrap < 0) throw InputError(kCli, "--bootstrap must be 0 (no intervals) or more");
  // Every variant parsed and every input read before anything is written.
  Diagnostics d;
  std::vector<Variant> vs;
  std::vector<RunSpec> specs;
  for (const auto& text : a.variants) {
    Variant v = parse_variant(text, d, kCli);
    for (const auto& o : vs)
      if (o.name == v.name) d.error(kCli, "variant name '" + v.name + "' is given twice");
    specs.push_back(apply_variant(a.base, v, d, kCli));
    vs.push_back(std::move(v));
  }
  d.throw_if_errors();
  const SharedInputs shared = read_shared_inputs(a.base);
  std::vector<std::unique_ptr<PreparedRun>> runs;
  for (size_t i = 0; i < specs.size(); ++i) {
    try {
      runs.push_back(prepare_run(specs[i], argv, &shared));
    } catch (const InputError& e) {
      for (const auto& x : e.diagnostics().all())
        d.error(x.loc, "variant '" + vs[i].name + "': " + x.message);
    }
  }
  d.throw_if_errors();
  for (size_t i = 0; i < runs.size(); ++i)
    for (const auto& w : runs[i]->warnings.all()) std::cerr << "variant '" << vs[i].name << "': " << w.str() << "\n";

  const int threads = worker_threads(a.threads, runs.size());
  StagedDir staged(a.out);  // refuses an --out that is not a gcsim output
  const std::string& out = staged.path();
  write_file_atomic(out, "manifest.json", compare_manifest(argv, vs, a.base.seed, threads, false, 0, 0));
  // Prepared above, so every input error was reported before anything was written.
  VariantResults res = run_variants(
      runs.size(), threads, [&](size_t i) { return std::move(runs[i]); },
      [&](size_t i) { return out + "/" + vs[i].name; }, [&](size_t i) { return vs[i].name; },
      [&](size_t i) { return vs[i].settings_text(); }, !a.no_progress, "jobs (all variants)");
  for (size_t i = 0; i < vs.size(); ++i)
    if (!res.errors[i].empty()) {
      std::cerr << "gcsim: error: variant '" << vs[i].name << "': " << res.errors[i] << "\n";
      return 1;  // the staging directory goes; an earlier output stays as it was
    }
  const bool all_completed = res.all_completed;

  CompareReportInput in;
  in.cluster = cluster_text(a.base, *shared.cluster);
  in.trace = a.base.trace + ": " + std::to_string(res.metrics[0]->jobs.size()) + " jobs";
  for (auto& m : res.metrics) in.variants.push_back(std::move(*m));
  in.resamples = a.bootstrap;
  in.seed = a.base.seed;
  in.differences = differences(in.variants, a.bootstrap, a.base.seed, threads);
  for (const auto& [name, text] : format_compare_report(in)) write_file_atomic(out, name, text);

  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  write_file_atomic(out, "manifest.json",
                    compare_manifest(argv, vs, a.base.seed, threads, all_completed, wall, peak_rss_kib()));

  staged.publish();
  report_interrupt(a.out);
  std::printf("gcsim %s: compare, %zu variants on %s\n", gcsim_version().c_str(), in.variants.size(),
              in.cluster.c_str());
  std::printf("  %-16s %10s %9s %10s %10s %10s %9s %9s %14s\n", "variant", "jobs/h", "GPU util", "wait mean",
              "wait p95", "slowdown", "inflation", "infl p95", "not NUMA-local");
  for (const auto& v : in.variants)
    std::printf("  %-16s %10.2f %8.1f%% %10s %10s %10.2f %9.3f %9.3f %14s\n", v.name.c_str(), v.throughput_per_h,
                100 * v.summary.gpu_utilization, human_duration(v.summary.wait_s.mean).c_str(),
                human_duration(v.summary.wait_s.p95).c_str(), v.summary.bounded_slowdown_mean, v.inflation_mean,
                v.inflation_p95, (std::to_string(v.not_numa_local) + "/" + std::to_string(v.gpu_jobs)).c_str());
  std::printf("  %zu threads, %.2f s wall, peak RSS %.1f MiB -> %s/report.html\n", static_cast<size_t>(threads), wall,
              static_cast<double>(peak_rss_kib()) / 1024.0, a.out.c_str());
  return exit_status_after_interrupt(all_completed ? 0 : 1);
}

}  // namespace

void add_compare_commands(CLI::App& app) {
  CompareArgs& a = args();
  a = CompareArgs{};
  a.cmd = app.add_subcommand("compare", "run variants of one simulation side by side and write a report");
  add_run_spec_options(a.cmd, a.base, a.set);
  a.cmd->add_option("--variant", a.variants,
                    "NAME:key=value,... (repeatable): policy, binding, seed, runtime, profiles, cluster, reference, "
                    "contention, scale, nodes, nodes+, nodes-, nic, or a slurm SchedulerParameters key")
      ->required();
  a.cmd->add_option("--out", a.out, "directory for the report and one run directory per variant")->capture_default_str();
  a.cmd->add_option("--threads", a.threads, "worker threads (0: one per variant, at most the cores)")
      ->check(whole_number_at_least(0))
      ->capture_default_str();
  a.cmd->add_option("--bootstrap", a.bootstrap, "bootstrap resamples for the confidence intervals (0: none)")
      ->capture_default_str();
  a.cmd->add_flag("--no-progress", a.no_progress, "never draw the progress bar");
}

int run_compare_command(const std::vector<std::string>& argv) {
  CompareArgs& a = args();
  if (a.cmd && *a.cmd) return cmd_compare(a, argv);
  return -1;
}

}  // namespace gcsim
