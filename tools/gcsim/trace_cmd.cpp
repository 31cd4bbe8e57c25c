// `gcsim trace stats | convert | gen`: the trace tools over the readers, the
// statistics, the writers and the generator. Every output is written to a temporary
// name and renamed, so a failed command never leaves a file that looks complete.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "models/workload/generator.hpp"
#include "sim/core/input_file.hpp"
#include "sim/io/run_outputs.hpp"
#include "sim/metrics/trace_stats.hpp"
#include "sim/workload/trace_readers.hpp"
#include "sim/workload/trace_transform.hpp"
#include "sim/workload/trace_writers.hpp"
#include "tools/gcsim/cli_checks.hpp"
#include "tools/gcsim/cli_common.hpp"

namespace gcsim {

namespace {

namespace fs = std::filesystem;

struct TraceArgs {
  CLI::App* stats = nullptr;
  CLI::App* convert = nullptr;
  CLI::App* gen = nullptr;
  std::string in, out, cluster, format = "text", out_dir, to_format;
  WindowArgs win;
  // gen
  std::string fit, model, save_model;
  uint64_t seed = 1;
  int64_t jobs = 0;
  std::string span;
};

TraceArgs& args() {
  static TraceArgs a;
  return a;
}

Trace read_with_window(const std::string& path, const WindowArgs& w) {
  Diagnostics warnings;
  Trace t = read_trace(path, warnings);
  std::cerr << warnings.format();
  apply_window_args(t, w);
  if (t.jobs.empty()) throw InputError(SourceLoc{path, 0, 0}, "no jobs left in the window");
  return t;
}

// Output format from --to-format, else from the file name.
std::string output_format(const std::string& out, const std::string& given) {
  if (!given.empty()) return given;
  if (ends_with(out, ".swf")) return "swf";
  if (ends_with(out, ".csv")) return "sbatch";
  throw InputError(SourceLoc{"<command line>", 0, 0},
                   "cannot tell the output format of '" + out + "': name it .csv or .swf, or pass --to-format");
}

void write_trace_file(const std::string& out, const Trace& t, const std::string& format,
                      const std::vector<std::string>& header) {
  std::vector<std::string> lost;
  const std::string text = format == "swf" ? format_swf(t, header, lost) : format_sbatch_trace(t, header, lost);
  for (const auto& l : lost) std::cerr << "gcsim: warning: " << out << ": not representable, dropped: " << l << "\n";
  const fs::path p(out);
  const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  ensure_directory(dir);
  write_file_atomic(dir, p.filename().string(), text);
}

int cmd_stats(const TraceArgs& a) {
  const Trace t = read_with_window(a.in, a.win);
  std::optional<Cluster> cluster;
  if (!a.cluster.empty()) cluster = load_cluster(a.cluster);
  const TraceStats s = compute_trace_stats(t, cluster ? &*cluster : nullptr);
  if (!a.out_dir.empty()) {
    ensure_directory(a.out_dir);
    write_file_atomic(a.out_dir, "trace_stats.txt", trace_stats_text(s));
    write_file_atomic(a.out_dir, "trace_stats.json", trace_stats_json(s));
    write_file_atomic(a.out_dir, "trace_stats.svg", trace_stats_svg(s));
  }
  if (a.format == "json") std::cout << trace_stats_json(s);
  else if (a.format == "svg") std::cout << trace_stats_svg(s);
  else std::cout << trace_stats_text(s);
  return 0;
}

int cmd_convert(const TraceArgs& a) {
  const Trace t = read_with_window(a.in, a.win);
  const std::string format = output_format(a.out, a.to_format);
  std::vector<std::string> header = {"converted by gcsim trace convert from " + a.in + " (" + t.format + ")",
                                     "source sha256 " + file_sha256(a.in)};
  for (const auto& s : t.assumptions) header.push_back("assumed: " + s);
  write_trace_file(a.out, t, format, header);
  std::cerr << "gcsim: wrote " << t.jobs.size() << " jobs to " << a.out << " (" << format << ")\n";
  return 0;
}

int cmd_gen(const TraceArgs& a) {
  if (a.fit.empty() == a.model.empty())
    throw InputError(SourceLoc{"<command line>", 0, 0}, "give exactly one of --fit TRACE and --model YAML");
  GenModel model;
  if (!a.fit.empty()) {
    WindowArgs fit_window = a.win;
    fit_window.scale_arrivals = 1.0;  // scaling applies to the generated arrivals, not the fit
    const Trace src = read_with_window(a.fit, fit_window);
    std::vector<std::string> notes;
    model = fit_generator(src, notes);
    for (const auto& n : notes) std::cerr << "gcsim: note: " << n << "\n";
  } else {
    model = load_generator_yaml(a.model);
  }
  GenOptions opt;
  opt.seed = a.seed;
  opt.jobs = a.jobs;
  if (!a.span.empty()) {
    const SourceLoc cli{"<command line>", 0, 0};
    const WindowPoint p = parse_window_point(a.span, cli);
    if (!p.relative) throw InputError(cli, "--span takes a duration, not a date");
    opt.span = *p.relative;
  }
  if (opt.jobs <= 0 && opt.span == SimTime())
    throw InputError(SourceLoc{"<command line>", 0, 0}, "give --jobs N or --span DURATION");
  opt.scale_arrivals = a.win.scale_arrivals;
  if (!a.save_model.empty()) {
    const fs::path p(a.save_model);
    const std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
    ensure_directory(dir);
    write_file_atomic(dir, p.filename().string(), generator_yaml(model));
  }
  if (a.out.empty()) return 0;
  const Trace t = generate_trace(model, opt);
  write_trace_file(a.out, t, output_format(a.out, a.to_format), generator_provenance(model, opt));
  std::cerr << "gcsim: generated " << t.jobs.size() << " jobs into " << a.out << "\n";
  return 0;
}

}  // namespace

void add_window_options(CLI::App* c, WindowArgs& w) {
  c->add_option("--from", w.from, "keep jobs submitted from this time: seconds, 3600s/90m/12h/7d, [D-]HH:MM:SS, or a date");
  c->add_option("--to", w.to, "keep jobs submitted before this time (same forms)");
  c->add_option("--scale-arrivals", w.scale_arrivals,
                "multiply the arrival rate by X (submit times / X; sizes, durations and waits kept)")
      ->check(positive_number());
}

void apply_window_args(Trace& t, const WindowArgs& w) {
  TraceWindow win;
  const SourceLoc cli{"<command line>", 0, 0};
  if (!w.from.empty()) win.from = resolve_window_point(parse_window_point(w.from, cli), t, cli);
  if (!w.to.empty()) win.to = resolve_window_point(parse_window_point(w.to, cli), t, cli);
  if (win.from && win.to && *win.to <= *win.from)
    throw InputError(cli, "--to must be later than --from");
  win.scale_arrivals = w.scale_arrivals;
  apply_window(t, win);
}

void add_trace_commands(CLI::App& app) {
  TraceArgs& a = args();
  a = TraceArgs{};  // run_cli may be called more than once in one process (tests)
  auto* trace = app.add_subcommand("trace", "job-trace tools: statistics, format conversion, synthetic workloads");
  trace->require_subcommand(1);

  a.stats = trace->add_subcommand("stats", "jobs, span, GPU-count mix, duration/wait quantiles, states, offered load");
  a.stats->add_option("trace", a.in, "any trace gcsim reads")->required();
  a.stats->add_option("--cluster", a.cluster, "cluster to measure offered load against");
  a.stats->add_option("--format", a.format, "stdout format")->check(CLI::IsMember({"text", "json", "svg"}))->capture_default_str();
  a.stats->add_option("--out", a.out_dir, "also write trace_stats.{txt,json,svg} into this directory");
  add_window_options(a.stats, a.win);

  a.convert = trace->add_subcommand("convert", "rewrite any readable trace as an sbatch-trace CSV (.csv) or SWF (.swf)");
  a.convert->add_option("in", a.in, "input trace (any format gcsim reads)")->required();
  a.convert->add_option("out", a.out, "output file: .csv (sbatch-trace CSV) or .swf")->required();
  a.convert->add_option("--to-format", a.to_format, "output format regardless of the name")
      ->check(CLI::IsMember({"sbatch", "swf"}));
  add_window_options(a.convert, a.win);

  a.gen = trace->add_subcommand("gen", "synthetic GPU workload, fitted from a trace or described in YAML");
  a.gen->add_option("--fit", a.fit, "fit the model to this trace");
  a.gen->add_option("--model", a.model, "generator model YAML (as --save-model writes it)");
  a.gen->add_option("--save-model", a.save_model, "write the (fitted) model as YAML");
  a.gen->add_option("--jobs", a.jobs, "number of jobs to generate")->check(whole_number_at_least(1));
  a.gen->add_option("--span", a.span, "generate arrivals over this long (e.g. 14d)");
  a.gen->add_option("--seed", a.seed, "master seed of the generator's named streams")->capture_default_str();
  a.gen->add_option("-o,--out", a.out, "output trace: .csv (sbatch-trace CSV) or .swf");
  a.gen->add_option("--to-format", a.to_format, "output format regardless of the name")
      ->check(CLI::IsMember({"sbatch", "swf"}));
  add_window_options(a.gen, a.win);
}

int run_trace_command() {
  const TraceArgs& a = args();
  if (a.stats && *a.stats) return cmd_stats(a);
  if (a.convert && *a.convert) return cmd_convert(a);
  if (a.gen && *a.gen) return cmd_gen(a);
  return -1;
}

}  // namespace gcsim
