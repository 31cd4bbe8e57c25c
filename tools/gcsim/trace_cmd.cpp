// `gcsim trace stats | convert | gen`: the trace tools over the readers, the
// statistics, the writers and the generator. Every output is written to a temporary
// name and renamed, so a failed command never leaves a file that looks complete.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "sim/core/input_file.hpp"
#include "sim/io/run_outputs.hpp"
#include "sim/workload/trace_readers.hpp"
#include "sim/workload/trace_transform.hpp"
#include "sim/workload/trace_writers.hpp"
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

}  // namespace

void add_window_options(CLI::App* c, WindowArgs& w) {
  c->add_option("--from", w.from, "keep jobs submitted from this time: seconds, 3600s/90m/12h/7d, [D-]HH:MM:SS, or a date");
  c->add_option("--to", w.to, "keep jobs submitted before this time (same forms)");
  c->add_option("--scale-arrivals", w.scale_arrivals,
                "multiply the arrival rate by X (submit times / X; sizes, durations and waits kept)")
      ->check(CLI::PositiveNumber);
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

  a.convert = trace->add_subcommand("convert", "rewrite any readable trace as an sbatch-trace CSV (.csv) or SWF (.swf)");
  a.convert->add_option("in", a.in, "input trace (any format gcsim reads)")->required();
  a.convert->add_option("out", a.out, "output file: .csv (sbatch-trace CSV) or .swf")->required();
  a.convert->add_option("--to-format", a.to_format, "output format regardless of the name")
      ->check(CLI::IsMember({"sbatch", "swf"}));
  add_window_options(a.convert, a.win);

}

int run_trace_command() {
  const TraceArgs& a = args();
  if (a.convert && *a.convert) return cmd_convert(a);
  return -1;
}

}  // namespace gcsim
