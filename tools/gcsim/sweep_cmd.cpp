// `gcsim sweep`: a grid of variants (the cartesian product of --grid axes), run on a
// thread pool, or written out as a Slurm job array (--emit-slurm) whose tasks each run
// one point (--point K) and whose results --merge gathers. Local runs gather their
// points through the same merge, so a local sweep and a merged array give the same
// bytes.
//
//   DIR/plan.tsv             point name and settings, one line per grid point
//   DIR/points/NAME/         the point's run directory, plus point.csv (its rows)
//   DIR/sweep.csv            point,AXIS...,metric,value: every point's rows in order
//   DIR/sweep.html, plot_*.svg  the metrics against the first axis, a line per
//                            combination of the others
//   DIR/target.txt           with --target: the cheapest point that meets it
#include <CLI/CLI.hpp>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <tuple>

#include "sim/core/input_file.hpp"
#include "sim/io/json_writer.hpp"
#include "sim/io/svg_chart.hpp"
#include "sim/workload/slurm_time.hpp"
#include "tools/gcsim/cli_checks.hpp"
#include "tools/gcsim/cli_common.hpp"
#include "tools/gcsim/interrupt.hpp"
#include "tools/gcsim/run_core.hpp"
#include "tools/gcsim/variant.hpp"

namespace gcsim {

namespace {

namespace fs = std::filesystem;
const SourceLoc kCli{"<command line>", 0, 0};

struct SweepArgs {
  CLI::App* cmd = nullptr;
  RunSpec base;
  std::vector<std::string> set, grid;
  std::string grid_file, out = "runs/sweep", emit_slurm, merge, target;
  int threads = 0;
  int point = -1;
  bool no_progress = false;
};

SweepArgs& args() {
  static SweepArgs a;
  return a;
}

struct Axis {
  std::string key;                  // variant key: nodes, nodes+, binding, bf_window, ...
  std::vector<std::string> values;
  std::vector<SourceLoc> locs;      // where each value was written
};

struct Point {
  std::string name;
  std::vector<std::string> values;  // one per axis
  Variant variant;
};

// The metrics of a point, in the order sweep.csv lists them.
std::vector<std::pair<std::string, std::string>> point_metrics(const VariantMetrics& v) {
  auto f = [](double x, int d) {
    char b[48];
    std::snprintf(b, sizeof b, "%.*f", d, x);
    return std::string(b);
  };
  const Summary& s = v.summary;
  return {{"nodes", std::to_string(v.nodes)},
          {"gpus", std::to_string(s.total_gpus)},
          {"jobs", std::to_string(s.jobs)},
          {"finished", std::to_string(s.finished)},
          {"rejected", std::to_string(s.rejected)},
          {"throughput_jobs_per_h", f(v.throughput_per_h, 4)},
          {"gpu_util", f(s.gpu_utilization, 6)},
          {"cpu_util", f(s.cpu_utilization, 6)},
          {"wait_mean_s", f(s.wait_s.mean, 3)},
          {"wait_median_s", f(s.wait_s.median, 3)},
          {"wait_p95_s", f(s.wait_s.p95, 3)},
          {"bsld_mean", f(s.bounded_slowdown_mean, 4)},
          {"inflation_mean", f(v.inflation_mean, 4)},
          {"inflation_p95", f(v.inflation_p95, 4)},
          {"gpu_jobs_not_numa_local", std::to_string(v.not_numa_local)}};
}

std::vector<Axis> read_axes(const SweepArgs& a, Diagnostics& d) {
  std::vector<Axis> axes;
  for (const auto& g : a.grid) {
    const auto eq = g.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 >= g.size()) {
      d.error(kCli, "--grid '" + g + "': expected KEY=V1,V2,...");
      continue;
    }
    Axis ax{g.substr(0, eq), {}, {}};
    for (auto v : split(std::string_view(g).substr(eq + 1), ',')) ax.values.emplace_back(trim(v));
    axes.push_back(std::move(ax));
  }
  if (!a.grid_file.empty()) {
    // grid: {KEY: [V1, V2, ...], ...} in the file's order.
    const std::string text = read_input_file(a.grid_file);
    try {
      const YAML::Node root = YAML::Load(text);
      const YAML::Node grid = root["grid"];
      if (!grid || !grid.IsMap()) {
        d.error(SourceLoc{a.grid_file, 1, 1}, "expected a 'grid:' mapping of KEY: [values]");
      } else {
        for (const auto& kv : grid) {
          const auto m = kv.first.Mark();
          Axis ax{kv.first.as<std::string>(), {}, {}};
          if (!kv.second.IsSequence() || kv.second.size() == 0) {
            d.error(SourceLoc{a.grid_file, m.line + 1, m.column + 1}, "'" + ax.key + "': expected a list of values");
            continue;
          }
          for (const auto& v : kv.second) {
            const auto vm = v.Mark();
            ax.values.push_back(v.as<std::string>());
            ax.locs.push_back(SourceLoc{a.grid_file, vm.line + 1, vm.column + 1});
          }
          axes.push_back(std::move(ax));
        }
      }
    } catch (const YAML::Exception& e) {
      d.error(SourceLoc{a.grid_file, e.mark.line + 1, e.mark.column + 1}, e.msg);
    }
  }
  std::set<std::string> seen;
  for (const auto& ax : axes) {
    if (!seen.insert(ax.key).second) d.error(kCli, "grid axis '" + ax.key + "' is given twice");
    for (const auto& v : ax.values)
      if (v.empty()) d.error(kCli, "grid axis '" + ax.key + "' has an empty value");
  }
  if (axes.empty() && !d.has_errors()) d.error(kCli, "sweep needs at least one --grid KEY=V1,V2 or --grid-file");
  return axes;
}

// The cartesian product, the last axis varying fastest.
std::vector<Point> make_points(const std::vector<Axis>& axes) {
  size_t n = 1;
  for (const auto& ax : axes) n *= ax.values.size();
  const int width = static_cast<int>(std::to_string(n > 0 ? n - 1 : 0).size());
  std::vector<Point> pts;
  for (size_t i = 0; i < n; ++i) {
    Point p;
    char b[32];
    std::snprintf(b, sizeof b, "p%0*zu", width, i);
    p.name = b;
    p.variant.name = p.name;
    size_t rest = i;
    p.values.resize(axes.size());
    for (size_t k = axes.size(); k-- > 0;) {
      p.values[k] = axes[k].values[rest % axes[k].values.size()];
      rest /= axes[k].values.size();
    }
    for (size_t k = 0; k < axes.size(); ++k) {
      p.variant.settings.emplace_back(axes[k].key, p.values[k]);
      const size_t j = std::find(axes[k].values.begin(), axes[k].values.end(), p.values[k]) - axes[k].values.begin();
      p.variant.setting_locs.push_back(j < axes[k].locs.size() ? axes[k].locs[j] : kCli);
    }
    pts.push_back(std::move(p));
  }
  return pts;
}

std::string plan_text(const std::vector<Axis>& axes, const std::vector<Point>& pts) {
  std::string o = "point";
  for (const auto& ax : axes) o += "\t" + ax.key;
  o += "\n";
  for (const auto& p : pts) {
    o += p.name;
    for (const auto& v : p.values) o += "\t" + v;
    o += "\n";
  }
  return o;
}

struct Plan {
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> rows;  // name, values...
};

Plan read_plan(const std::string& dir) {
  const std::string path = dir + "/plan.tsv";
  if (!fs::exists(path)) throw InputError(SourceLoc{path, 0, 0}, "no plan.tsv: not a sweep directory");
  Plan p;
  int ln = 0;
  const std::string text = read_input_file(path);  // the lines are views into it
  for (auto line : split_lines(text)) {
    ++ln;
    if (line.empty()) continue;
    std::vector<std::string> cells;
    for (auto c : split(line, '\t')) cells.emplace_back(c);
    if (ln == 1) {
      if (cells.empty() || cells[0] != "point") throw InputError(SourceLoc{path, 1, 1}, "expected a 'point' header");
      p.keys.assign(cells.begin() + 1, cells.end());
      continue;
    }
    if (cells.size() != p.keys.size() + 1)
      throw InputError(SourceLoc{path, ln, 1}, "expected " + std::to_string(p.keys.size() + 1) + " tab-separated cells");
    p.rows.push_back(cells);
  }
  return p;
}

// A point's rows of sweep.csv: name, axis values, metric, value.
std::string point_csv(const std::vector<std::string>& plan_row, const VariantMetrics& v) {
  std::string prefix;
  for (const auto& c : plan_row) prefix += csv_field(c) + ",";
  std::string o;
  for (const auto& [m, val] : point_metrics(v)) o += prefix + m + "," + val + "\n";
  return o;
}

// ------------------------------------------------------------------ targets

struct Target {
  std::string text, metric;
  bool less = true, inclusive = true;
  double value = 0;
};

Target parse_target(const std::string& t) {
  Target g;
  g.text = t;
  size_t op = t.find_first_of("<>");
  if (op == std::string::npos || op == 0)
    throw InputError(kCli, "--target '" + t + "': expected METRIC<=VALUE (or <, >=, >), e.g. p95_wait<=1h");
  std::string name(trim(std::string_view(t).substr(0, op)));
  g.less = t[op] == '<';
  size_t vstart = op + 1;
  if (vstart < t.size() && t[vstart] == '=') {
    g.inclusive = true;
    ++vstart;
  } else {
    g.inclusive = false;
  }
  std::string val(trim(std::string_view(t).substr(vstart)));
  static const std::map<std::string, std::string> kAlias = {
      {"p95_wait", "wait_p95_s"},     {"wait_p95", "wait_p95_s"},     {"mean_wait", "wait_mean_s"},
      {"wait_mean", "wait_mean_s"},   {"median_wait", "wait_median_s"}, {"wait_median", "wait_median_s"},
      {"gpu_util", "gpu_util"},       {"cpu_util", "cpu_util"},       {"throughput", "throughput_jobs_per_h"},
      {"slowdown", "bsld_mean"},      {"bsld", "bsld_mean"},          {"inflation", "inflation_mean"},
      {"rejected", "rejected"}};
  if (auto it = kAlias.find(name); it != kAlias.end()) name = it->second;
  bool known = false;
  for (const auto& [m, unused] : point_metrics(VariantMetrics{})) known |= m == name;
  if (!known) throw InputError(kCli, "--target '" + t + "': unknown metric '" + name + "'");
  g.metric = name;
  // Durations for the wait metrics (90s, 30min, 1h, 2d, or seconds); percentages for shares.
  double scale = 1;
  std::string num = val;
  auto strip = [&](const std::string& suf, double s) {
    if (num.size() > suf.size() && num.compare(num.size() - suf.size(), suf.size(), suf) == 0) {
      num = num.substr(0, num.size() - suf.size());
      scale = s;
      return true;
    }
    return false;
  };
  if (name.rfind("wait", 0) == 0) {
    strip("min", 60) || strip("s", 1) || strip("m", 60) || strip("h", 3600) || strip("d", 86400);
  } else {
    strip("%", 0.01);
  }
  const auto x = parse_non_negative_number(num);
  if (!x) throw InputError(kCli, "--target '" + t + "': '" + val + "' is not a number (with a unit: 90s, 30min, 1h, 2d, 80%)");
  g.value = *x * scale;
  return g;
}

bool meets(const Target& t, double v) {
  if (t.less) return t.inclusive ? v <= t.value + 1e-9 : v < t.value;
  return t.inclusive ? v >= t.value - 1e-9 : v > t.value;
}

// ------------------------------------------------------------------ merge

struct SweepRow {
  std::vector<std::string> plan_row;
  std::map<std::string, double> metric;
};

std::vector<SweepRow> parse_points(const Plan& plan, const std::string& dir, std::string& csv) {
  std::vector<SweepRow> rows;
  std::vector<std::string> missing;
  for (const auto& r : plan.rows) {
    const std::string path = dir + "/points/" + r[0] + "/point.csv";
    if (!fs::exists(path)) {
      missing.push_back(r[0]);
      continue;
    }
    const std::string text = read_input_file(path);
    csv += text;
    SweepRow sr;
    sr.plan_row = r;
    int ln = 0;
    for (auto line : split_lines(text)) {
      ++ln;
      if (line.empty()) continue;
      const auto cells = split(line, ',');
      if (cells.size() < 2) throw InputError(SourceLoc{path, ln, 1}, "expected ...,metric,value");
      const auto v = parse_non_negative_number(cells.back());
      if (!v) throw InputError(SourceLoc{path, ln, 1}, "the value is not a number");
      sr.metric[std::string(cells[cells.size() - 2])] = *v;
    }
    rows.push_back(std::move(sr));
  }
  if (!missing.empty()) {
    std::string list;
    for (size_t i = 0; i < missing.size() && i < 20; ++i) list += (i ? ", " : "") + missing[i];
    if (missing.size() > 20) list += ", ...";
    throw InputError(SourceLoc{dir + "/points", 0, 0},
                     std::to_string(missing.size()) + " of " + std::to_string(plan.rows.size()) +
                         " points have no point.csv (not run, or failed): " + list);
  }
  return rows;
}

bool numeric_axis(const Plan& plan, size_t k) {
  for (const auto& r : plan.rows)
    if (!parse_non_negative_number(r[k + 1])) return false;
  return true;
}

// One chart per metric: x = the first axis, a line (numeric x) or bar group per
// combination of the other axes.
std::string sweep_plot(const Plan& plan, const std::vector<SweepRow>& rows, const std::string& metric,
                       const std::string& title, double scale, const std::string& unit) {
  const bool numeric = numeric_axis(plan, 0);
  std::vector<std::string> series_names, xs;
  std::map<std::string, std::map<std::string, double>> by;  // series -> x -> value
  for (const auto& r : rows) {
    std::string s;
    for (size_t k = 1; k < plan.keys.size(); ++k) s += (s.empty() ? "" : ",") + plan.keys[k] + "=" + r.plan_row[k + 1];
    if (s.empty()) s = metric;
    if (std::find(series_names.begin(), series_names.end(), s) == series_names.end()) series_names.push_back(s);
    const std::string& x = r.plan_row[1];
    if (std::find(xs.begin(), xs.end(), x) == xs.end()) xs.push_back(x);
    by[s][x] = r.metric.at(metric) * scale;
  }
  const std::string y = title + (unit.empty() ? "" : " (" + unit + ")");
  if (numeric) {
    LineChart c{title + " against " + plan.keys[0], plan.keys[0], y, false, false, 0, -1, {}};
    for (const auto& s : series_names) {
      ChartSeries cs{s, {}, {}};
      for (const auto& [x, v] : by[s]) cs.points.emplace_back(*parse_non_negative_number(x), v);
      std::sort(cs.points.begin(), cs.points.end());
      c.series.push_back(cs);
    }
    return svg_line_chart(c);
  }
  BarChart c{title + " by " + plan.keys[0], plan.keys[0], y, xs, {}};
  for (const auto& s : series_names) {
    ChartSeries cs{s, {}, {}};
    for (const auto& x : xs) cs.values.push_back(by[s].count(x) ? by[s][x] : 0);
    c.series.push_back(cs);
  }
  return svg_bar_chart(c);
}

// `shown` is the directory named in messages (the final one, where `dir` is staging).
int merge_dir(const std::string& dir, const std::string& target_text, const std::string& shown) {
  const Plan plan = read_plan(dir);
  std::string header = "point";
  for (const auto& k : plan.keys) header += "," + csv_field(k);
  std::string csv = header + ",metric,value\n";
  const std::vector<SweepRow> rows = parse_points(plan, dir, csv);
  write_file_atomic(dir, "sweep.csv", csv);

  static const std::vector<std::tuple<std::string, std::string, double, std::string>> kPlots = {
      {"wait_p95_s", "p95 wait", 1 / 3600.0, "hours"},
      {"wait_mean_s", "mean wait", 1 / 3600.0, "hours"},
      {"gpu_util", "GPU utilization", 100, "%"},
      {"inflation_mean", "runtime inflation", 1, ""}};
  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>gcsim sweep</title>\n"
                     "<style>body{font-family:sans-serif;max-width:1000px;margin:24px auto;padding:0 16px}</style>\n"
                     "</head>\n<body>\n<h1>gcsim sweep</h1>\n<p>" +
                     std::to_string(rows.size()) + " grid points over " + xml_escape(header.substr(6)) +
                     "; every number is in sweep.csv.</p>\n";
  for (const auto& [metric, title, scale, unit] : kPlots) {
    const std::string svg = sweep_plot(plan, rows, metric, title, scale, unit);
    write_file_atomic(dir, "plot_" + metric + ".svg", svg);
    html += "<figure class=\"chart\" id=\"fig-" + metric + "\">\n" + svg + "</figure>\n";
  }
  // A point stopped by a signal has a manifest with `"completed": false`; the sweep's
  // own manifest, written last, says whether every point ran to the end.
  std::vector<std::string> incomplete;
  for (const auto& r : plan.rows) {
    std::error_code ec;
    const std::string m = dir + "/points/" + r[0] + "/manifest.json";
    if (!fs::is_regular_file(m, ec) || read_input_file(m).find("\"completed\": true") == std::string::npos)
      incomplete.push_back(r[0]);
  }
  if (!incomplete.empty())
    html += "<p><strong>Incomplete:</strong> " + std::to_string(incomplete.size()) +
            " points were stopped before the end of the trace; their numbers cover only what was simulated.</p>\n";
  html += "</body>\n</html>\n";
  write_file_atomic(dir, "sweep.html", html);
  JsonWriter w;
  w.begin_object();
  w.key("gcsim_version").value(gcsim_version());
  w.key("git_sha").value(gcsim_git_sha());
  w.key("points").value(static_cast<int64_t>(plan.rows.size()));
  w.key("points_completed").value(static_cast<int64_t>(plan.rows.size() - incomplete.size()));
  w.key("incomplete_points").begin_array();
  for (const auto& n : incomplete) w.value(n);
  w.end_array();
  w.key("completed").value(incomplete.empty());
  w.end_object();
  write_file_atomic(dir, "manifest.json", w.str());

  std::printf("gcsim sweep: %zu points -> %s/sweep.csv, %s/sweep.html\n", rows.size(), shown.c_str(), shown.c_str());
  if (!target_text.empty()) {
    const Target t = parse_target(target_text);
    // Cheapest: fewest GPUs, then fewest nodes, then grid order.
    const SweepRow* best = nullptr;
    for (const auto& r : rows) {
      if (!meets(t, r.metric.at(t.metric))) continue;
      auto cost = [](const SweepRow& x) { return std::pair(x.metric.at("gpus"), x.metric.at("nodes")); };
      if (!best || cost(r) < cost(*best)) best = &r;
    }
    std::string answer;
    if (best) {
      std::string settings;
      for (size_t k = 0; k < plan.keys.size(); ++k)
        settings += (k ? "," : "") + plan.keys[k] + "=" + best->plan_row[k + 1];
      char b[256];
      std::snprintf(b, sizeof b, "%s: %.0f nodes, %.0f GPUs, %s = %g", best->plan_row[0].c_str(),
                    best->metric.at("nodes"), best->metric.at("gpus"), t.metric.c_str(), best->metric.at(t.metric));
      answer = "target " + t.text + ": cheapest point " + b + " (" + settings + ")\n";
    } else {
      answer = "target " + t.text + ": no grid point meets it\n";
    }
    write_file_atomic(dir, "target.txt", answer);
    std::fputs(("  " + answer).c_str(), stdout);
    if (!best) return 1;
  }
  return 0;
}

// ------------------------------------------------------------------ job array

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./=:,+%@") ==
                        std::string::npos)
    return s;
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

// argv without the options that say what to do with the grid (they differ per task).
std::vector<std::string> task_argv(const std::vector<std::string>& argv) {
  static const std::set<std::string> kDrop = {"--emit-slurm", "--out", "--threads", "--target", "--merge", "--point"};
  std::vector<std::string> out;
  for (size_t i = 2; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    const auto eq = a.find('=');
    const std::string name = a.substr(0, eq);
    if (kDrop.count(name)) {
      if (eq == std::string::npos) ++i;  // its value follows
      continue;
    }
    if (a == "--no-progress") continue;
    out.push_back(a);
  }
  return out;
}

std::string absolute(const std::string& p) { return fs::absolute(p).lexically_normal().string(); }

int emit_slurm(const SweepArgs& a, const std::vector<std::string>& argv, const std::vector<Axis>& axes,
               const std::vector<Point>& pts) {
  const std::string dir = absolute(a.emit_slurm);
  ensure_directory(dir);
  ensure_directory(dir + "/logs");
  write_file_atomic(dir, "plan.tsv", plan_text(axes, pts));
  std::error_code ec;
  const std::string exe = fs::read_symlink("/proc/self/exe", ec).string();
  std::string cmd = shell_quote(ec ? std::string("gcsim") : exe) + " sweep";
  for (const auto& x : task_argv(argv)) cmd += " " + shell_quote(x);
  cmd += " --no-progress --out " + shell_quote(dir) + " --point \"$SLURM_ARRAY_TASK_ID\"";
  std::string s = "#!/bin/bash\n";
  s += "# gcsim sweep as a Slurm job array: one task per grid point of plan.tsv.\n";
  s += "#   sbatch " + dir + "/sweep.sbatch        then, when every task has ended:\n";
  s += "#   " + shell_quote(ec ? std::string("gcsim") : exe) + " sweep --merge " + shell_quote(dir) +
       (a.target.empty() ? "" : " --target " + shell_quote(a.target)) + "\n";
  s += "#SBATCH --job-name=gcsim-sweep\n";
  s += "#SBATCH --array=0-" + std::to_string(pts.size() - 1) + "\n";
  s += "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n";
  s += "#SBATCH --output=" + dir + "/logs/%A_%a.out\n";
  s += "#SBATCH --chdir=" + absolute(".") + "\n";
  s += "set -euo pipefail\n";
  s += "exec " + cmd + "\n";
  write_file_atomic(dir, "sweep.sbatch", s);
  fs::permissions(dir + "/sweep.sbatch", fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add);
  std::printf("gcsim sweep: %zu points as a job array -> %s/sweep.sbatch\n  sbatch %s/sweep.sbatch\n  gcsim sweep --merge %s\n",
              pts.size(), dir.c_str(), dir.c_str(), dir.c_str());
  return 0;
}

int cmd_sweep(SweepArgs& a, const std::vector<std::string>& argv) {
  if (!a.merge.empty()) {
    if (!a.grid.empty() || !a.grid_file.empty() || !a.emit_slurm.empty() || a.point >= 0)
      throw InputError(kCli, "--merge DIR reads DIR's plan: give it without --grid, --grid-file, --emit-slurm or --point");
    return merge_dir(a.merge, a.target, a.merge);
  }
  if (a.base.trace.empty()) throw InputError(kCli, "sweep needs --trace (or --merge DIR)");
  if (a.threads < 0) throw InputError(kCli, "--threads must be 0 (automatic) or more");
  if (!a.target.empty()) (void)parse_target(a.target);  // refuse a bad target before running anything
  apply_set_options(a.base, a.set);
  Diagnostics d;
  const std::vector<Axis> axes = read_axes(a, d);
  d.throw_if_errors();
  std::vector<Point> pts = make_points(axes);
  if (pts.size() > 1'000'000) throw InputError(kCli, "the grid has more than a million points");
  std::vector<RunSpec> specs;
  {
    // A bad value fails every point that has it: report it once, where it was written.
    Diagnostics each;
    for (const auto& p : pts) specs.push_back(apply_variant(a.base, p.variant, each, kCli));
    std::set<std::tuple<std::string, int, int, std::string>> seen_errors;
    for (const Diagnostic& x : each.all()) {
      const auto colon = x.message.find("': ");
      const std::string why = colon == std::string::npos ? x.message : x.message.substr(colon + 3);
      if (seen_errors.emplace(x.loc.file, x.loc.line, x.loc.col, why).second) d.error(x.loc, "grid " + why);
    }
  }
  d.throw_if_errors();
  if (a.point >= static_cast<int>(pts.size()))
    throw InputError(kCli, "--point " + std::to_string(a.point) + ": the grid has " + std::to_string(pts.size()) +
                               " points (0-" + std::to_string(pts.size() - 1) + ")");
  if (!a.emit_slurm.empty()) {
    // Check the inputs once here, so a bad file fails now and not in every array task.
    const SharedInputs shared = read_shared_inputs(a.base);
    (void)prepare_run(specs[0], argv, &shared);
    return emit_slurm(a, argv, axes, pts);
  }
  const SharedInputs shared = read_shared_inputs(a.base);
  // Point 0 (or the one asked for) is prepared before anything is written: bad inputs
  // fail before the sweep directory is touched.
  const size_t first = a.point >= 0 ? static_cast<size_t>(a.point) : 0;
  std::unique_ptr<PreparedRun> first_run = prepare_run(specs[first], argv, &shared);
  // The whole sweep directory is published at once; an array task publishes its point's.
  const std::string staged_for = a.point >= 0 ? a.out + "/points/" + pts[first].name : a.out;
  StagedDir staged(staged_for);
  const std::string& out = staged.path();
  if (a.point < 0) write_file_atomic(out, "plan.tsv", plan_text(axes, pts));
  std::vector<size_t> todo;
  if (a.point >= 0) todo.push_back(first);
  else
    for (size_t i = 0; i < pts.size(); ++i) todo.push_back(i);
  const int threads = a.point >= 0 ? 1 : worker_threads(a.threads, todo.size());
  auto dir_of = [&](size_t k) { return a.point >= 0 ? out : out + "/points/" + pts[todo[k]].name; };
  VariantResults res = run_variants(
      todo.size(), threads,
      [&](size_t k) {
        if (todo[k] == first && first_run) return std::move(first_run);
        return prepare_run(specs[todo[k]], argv, &shared);
      },
      dir_of, [&](size_t k) { return pts[todo[k]].name; }, [&](size_t k) { return pts[todo[k]].variant.settings_text(); },
      !a.no_progress, "grid points");
  int failed = 0;
  for (size_t k = 0; k < todo.size(); ++k) {
    if (!res.errors[k].empty()) {
      std::cerr << "gcsim: error: point " << pts[todo[k]].name << " (" << pts[todo[k]].variant.settings_text()
                << "): " << res.errors[k] << "\n";
      ++failed;
      continue;
    }
    std::vector<std::string> row{pts[todo[k]].name};
    row.insert(row.end(), pts[todo[k]].values.begin(), pts[todo[k]].values.end());
    write_file_atomic(dir_of(k), "point.csv", point_csv(row, *res.metrics[k]));
  }
  if (failed) return 1;
  if (a.point >= 0) {
    staged.publish();
    report_interrupt(staged_for);
    std::printf("gcsim sweep: point %s (%s) -> %s/\n", pts[first].name.c_str(),
                pts[first].variant.settings_text().c_str(), staged_for.c_str());
    return exit_status_after_interrupt(res.all_completed ? 0 : 1);
  }
  const int rc = merge_dir(out, a.target, a.out);
  staged.publish();
  report_interrupt(a.out);
  return exit_status_after_interrupt(res.all_completed ? rc : 1);
}

}  // namespace

void add_sweep_commands(CLI::App& app) {
  SweepArgs& a = args();
  a = SweepArgs{};
  a.cmd = app.add_subcommand("sweep", "run a grid of variants (capacity planning), locally or as a Slurm job array");
  add_run_spec_options(a.cmd, a.base, a.set, false);
  a.cmd->add_option("--grid", a.grid, "KEY=V1,V2,... (repeatable): one axis; keys as compare's --variant takes");
  a.cmd->add_option("--grid-file", a.grid_file, "YAML: grid: {KEY: [V1, V2], ...}");
  a.cmd->add_option("--out", a.out, "sweep directory")->capture_default_str();
  a.cmd->add_option("--threads", a.threads, "worker threads (0: one per point, at most the cores)")
      ->check(whole_number_at_least(0))->capture_default_str();
  a.cmd->add_option("--target", a.target, "METRIC<=VALUE, e.g. 'p95_wait<=1h': the cheapest point that meets it");
  a.cmd->add_option("--emit-slurm", a.emit_slurm, "write DIR/sweep.sbatch, a job array of one task per point, and stop");
  a.cmd->add_option("--point", a.point, "run only grid point K (what each array task runs)");
  a.cmd->add_option("--merge", a.merge, "gather DIR's points (after the array) into sweep.csv and the plots");
  a.cmd->add_flag("--no-progress", a.no_progress, "never draw the progress bar");
}

int run_sweep_command(const std::vector<std::string>& argv) {
  SweepArgs& a = args();
  if (a.cmd && *a.cmd) return cmd_sweep(a, argv);
  return -1;
}

}  // namespace gcsim
