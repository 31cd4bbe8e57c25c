#include "sim/io/compare_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>

#include "sim/core/input_file.hpp"
#include "sim/io/svg_chart.hpp"

namespace gcsim {

namespace {

constexpr int kBins = 200;       // time-series bins
constexpr int kCdfPoints = 200;  // points per CDF line

std::string fixed(double v, int d) {
  char b[48];
  std::snprintf(b, sizeof b, "%.*f", d, v);
  return b;
}
std::string pct(double share) { return fixed(100 * share, 1) + "%"; }
std::string signed_duration(double s) { return (s < 0 ? "-" : "+") + human_duration(std::abs(s)); }

// A table cell: what the CSV holds and what the page shows.
struct Cell {
  std::string raw, shown;
};
Cell num(double v, int raw_decimals, std::string shown) { return {fixed(v, raw_decimals), std::move(shown)}; }
Cell word(const std::string& s) { return {s, s}; }
Cell count(int64_t n) { return {std::to_string(n), std::to_string(n)}; }
Cell dur(double s) { return {fixed(s, 3), human_duration(s)}; }

struct Table {
  std::vector<std::string> csv_header, header;
  std::vector<std::vector<Cell>> rows;
};

std::string to_csv(const Table& t) {
  std::string o;
  for (size_t i = 0; i < t.csv_header.size(); ++i) o += (i ? "," : "") + csv_field(t.csv_header[i]);
  o += "\n";
  for (const auto& r : t.rows) {
    for (size_t i = 0; i < r.size(); ++i) o += (i ? "," : "") + csv_field(r[i].raw);
    o += "\n";
  }
  return o;
}

std::string to_html(const Table& t) {
  std::string o = "<table>\n<thead><tr>";
  for (const auto& h : t.header) o += "<th>" + xml_escape(h) + "</th>";
  o += "</tr></thead>\n<tbody>\n";
  for (const auto& r : t.rows) {
    o += "<tr>";
    for (size_t i = 0; i < r.size(); ++i) o += (i == 0 ? "<th scope=\"row\">" : "<td>") + xml_escape(r[i].shown) + (i == 0 ? "</th>" : "</td>");
    o += "</tr>\n";
  }
  return o + "</tbody>\n</table>\n";
}

std::string md_cell(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '|' ? std::string("\\|") : std::string(1, c);
  return o;
}

std::string to_md(const Table& t) {
  std::string o = "|";
  for (const auto& h : t.header) o += " " + md_cell(h) + " |";
  o += "\n|";
  for (size_t i = 0; i < t.header.size(); ++i) o += i == 0 ? "---|" : "---:|";
  o += "\n";
  for (const auto& r : t.rows) {
    o += "|";
    for (const auto& c : r) o += " " + md_cell(c.shown) + " |";
    o += "\n";
  }
  return o;
}

// The page's headline; headline.csv (headline_csv) carries more columns.
Table headline(const std::vector<VariantMetrics>& vs) {
  Table t;
  t.header = {"Variant", "Settings", "Jobs run", "Rejected", "Throughput (jobs/h)", "GPU util", "Wait mean",
              "Wait median", "Wait p95", "Bounded slowdown", "Runtime inflation mean", "Inflation p95",
              "GPU jobs not NUMA-local"};
  for (const auto& v : vs) {
    const Summary& s = v.summary;
    t.rows.push_back({word(v.name), word(v.settings.empty() ? "(as given)" : v.settings), count(s.finished),
                      count(s.rejected), num(v.throughput_per_h, 4, fixed(v.throughput_per_h, 2)),
                      num(s.gpu_utilization, 6, pct(s.gpu_utilization)), dur(s.wait_s.mean), dur(s.wait_s.median),
                      dur(s.wait_s.p95), num(s.bounded_slowdown_mean, 4, fixed(s.bounded_slowdown_mean, 2)),
                      num(v.inflation_mean, 4, fixed(v.inflation_mean, 3)),
                      num(v.inflation_p95, 4, fixed(v.inflation_p95, 3)),
                      {std::to_string(v.not_numa_local),
                       std::to_string(v.not_numa_local) + " of " + std::to_string(v.gpu_jobs)}});
  }
  return t;
}

// headline.csv carries every figure, the page the ones a reader compares.
std::string headline_csv(const std::vector<VariantMetrics>& vs) {
  Table t;
  t.csv_header = {"variant", "settings", "jobs", "finished", "timed_out", "rejected", "unfinished",
                  "makespan_s", "throughput_jobs_per_h", "gpu_util", "cpu_util", "wait_mean_s", "wait_median_s",
                  "wait_p95_s", "bsld_mean", "inflation_mean", "inflation_p95", "gpu_jobs", "gpu_jobs_not_numa_local"};
  for (const auto& v : vs) {
    const Summary& s = v.summary;
    t.rows.push_back({word(v.name), word(v.settings), count(s.jobs), count(s.finished), count(s.timed_out),
                      count(s.rejected), count(s.unfinished), dur(s.makespan_s),
                      num(v.throughput_per_h, 4, ""), num(s.gpu_utilization, 6, ""), num(s.cpu_utilization, 6, ""),
                      dur(s.wait_s.mean), dur(s.wait_s.median), dur(s.wait_s.p95),
                      num(s.bounded_slowdown_mean, 4, ""), num(v.inflation_mean, 4, ""), num(v.inflation_p95, 4, ""),
                      count(v.gpu_jobs), count(v.not_numa_local)});
  }
  return to_csv(t);
}

bool is_duration_metric(const std::string& m) { return m.rfind("wait", 0) == 0; }

std::string metric_title(const std::string& m) {
  if (m == "wait_mean_s") return "wait mean";
  if (m == "wait_p95_s") return "wait p95";
  if (m == "bsld_mean") return "bounded slowdown mean";
  if (m == "inflation_mean") return "runtime inflation mean";
  return m;
}

// The CSV has both interval ends and the pairing; the page one interval column.
Table differences_table(const std::vector<Difference>& ds, bool for_csv) {
  Table t;
  t.csv_header = {"variant", "metric", "baseline", "value", "diff", "ci95_lo", "ci95_hi", "paired"};
  t.header = {"Variant", "Metric", "Baseline", "Variant value", "Difference", "95% interval"};
  for (const auto& d : ds) {
    const bool dm = is_duration_metric(d.metric);
    auto show = [&](double v) { return dm ? human_duration(v) : fixed(v, 3); };
    auto show_signed = [&](double v) { return dm ? signed_duration(v) : (v < 0 ? "" : "+") + fixed(v, 3); };
    std::vector<Cell> row = {word(d.variant), {d.metric, metric_title(d.metric)}, num(d.baseline, 4, show(d.baseline)),
                             num(d.value, 4, show(d.value)), num(d.diff, 4, show_signed(d.diff))};
    if (for_csv) {
      row.push_back(num(d.lo, 4, ""));
      row.push_back(num(d.hi, 4, ""));
      row.push_back(word(d.paired ? "yes" : "no"));
    } else {
      row.push_back(word("[" + show_signed(d.lo) + ", " + show_signed(d.hi) + "]"));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table group_table(const std::vector<VariantMetrics>& vs, bool by_gpus) {
  Table t;
  t.csv_header = {"variant", by_gpus ? "gpus" : "partition", "jobs", "wait_mean_s", "wait_p95_s", "bsld_mean",
                  "inflation_mean"};
  t.header = {"Variant", by_gpus ? "GPUs" : "Partition", "Jobs", "Wait mean", "Wait p95", "Bounded slowdown",
              "Runtime inflation"};
  for (const auto& v : vs)
    for (const auto& g : by_gpus ? by_gpu_count(v) : by_partition(v)) {
      std::string group = g.group;
      if (by_gpus) group = group.substr(0, group.size() - 4);  // "3-4 GPU" -> "3-4"
      t.rows.push_back({word(v.name), {group, g.group}, count(g.jobs), dur(g.wait_mean),
                        dur(g.wait_p95), num(g.bsld_mean, 4, fixed(g.bsld_mean, 2)),
                        num(g.inflation_mean, 4, fixed(g.inflation_mean, 3))});
    }
  return t;
}

std::string figure(const std::string& id, const std::string& svg, const std::string& caption) {
  return "<figure class=\"chart\" id=\"" + id + "\">\n" + svg + "<figcaption>" + xml_escape(caption) +
         "</figcaption>\n</figure>\n";
}

std::vector<std::string> inflation_bins() {
  return {"<0.999", "~1", "1-1.05", "1.05-1.1", "1.1-1.25", "1.25-1.5", "1.5-2", ">=2"};
}
size_t inflation_bin(double x) {
  if (x < 0.999) return 0;
  if (x < 1.001) return 1;
  if (x < 1.05) return 2;
  if (x < 1.10) return 3;
  if (x < 1.25) return 4;
  if (x < 1.5) return 5;
  if (x < 2) return 6;
  return 7;
}

// Plain sentences a reader checks against the tables.
std::vector<std::string> findings(const CompareReportInput& in) {
  std::vector<std::string> out;
  if (in.variants.size() < 2) return out;
  const auto& base = in.variants[0];
  for (size_t k = 1; k < in.variants.size(); ++k) {
    const auto& v = in.variants[k];
    const Difference* wait = nullptr;
    for (const auto& d : in.differences)
      if (d.variant == v.name && d.metric == "wait_mean_s") wait = &d;
    std::string s = v.name + " against " + base.name + ": runtime inflation mean " + fixed(v.inflation_mean, 3) +
                    " vs " + fixed(base.inflation_mean, 3) + "; mean wait " + human_duration(v.summary.wait_s.mean) +
                    " vs " + human_duration(base.summary.wait_s.mean);
    if (wait && in.resamples > 0) {
      const bool clear = wait->lo > 0 || wait->hi < 0;
      s += " (" + signed_duration(wait->diff) + ", 95% interval " + signed_duration(wait->lo) + " to " +
           signed_duration(wait->hi) + (clear ? ")" : "; the interval includes no change)");
    }
    s += "; GPU utilization " + pct(v.summary.gpu_utilization) + " vs " + pct(base.summary.gpu_utilization) + "; " +
         std::to_string(v.not_numa_local) + " of " + std::to_string(v.gpu_jobs) + " GPU jobs not NUMA-local (" +
         std::to_string(base.not_numa_local) + " of " + std::to_string(base.gpu_jobs) + ").";
    out.push_back(s);
  }
  return out;
}

const char* kStyle = R"(body{font-family:sans-serif;max-width:1100px;margin:24px auto;padding:0 16px;color:#222;line-height:1.4}
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;margin:8px 0;font-size:0.9em}th,td{border:1px solid #ccc;padding:3px 8px}
td{text-align:right;white-space:nowrap}thead th{background:#f2f2f2}tbody th{text-align:left;font-weight:normal}
figure{margin:16px 0}figcaption{font-size:0.85em;color:#555;max-width:760px}.meta{color:#444}
dt{font-weight:bold;margin-top:6px}code{background:#f5f5f5;padding:0 3px})";

}  // namespace

const std::vector<std::string>& compare_report_charts() {
  static const std::vector<std::string> ids = {"fig-wait-cdf",  "fig-slowdown-cdf", "fig-inflation-hist",
                                               "fig-queue",     "fig-gpu-util",     "fig-wait-by-gpus",
                                               "fig-wait-by-partition"};
  return ids;
}

std::vector<std::pair<std::string, std::string>> format_compare_report(const CompareReportInput& in) {
  const auto& vs = in.variants;
  // Charts.
  LineChart wait_cdf{"Wait time CDF", "wait (seconds, log scale; zero waits at the left edge)", "share of jobs",
                     true, true, 0, 1, {}};
  LineChart bsld_cdf{"Bounded slowdown CDF", "bounded slowdown (log scale)", "share of jobs", true, true, 0, 1, {}};
  BarChart infl{"Runtime inflation against the reference placement", "simulated / trace run time",
                "share of jobs (%)", inflation_bins(), {}};
  double t0 = std::numeric_limits<double>::infinity(), t1 = 0;
  for (const auto& v : vs)
    for (const auto& r : v.jobs) {
      if (r.rejected) continue;
      t0 = std::min(t0, r.submit);
      t1 = std::max(t1, r.started ? r.end : r.submit);
    }
  if (!std::isfinite(t0)) t0 = 0;
  LineChart queue{"Queue length over time", "time since trace start (days)", "pending jobs", false, false, 0, -1, {}};
  LineChart util{"GPU utilization over time", "time since trace start (days)", "GPUs allocated (%)", false, false,
                 0, 100, {}};
  std::string ts_csv = "variant,bin,t_start_s,t_end_s,queue_mean,gpu_util\n";
  for (const auto& v : vs) {
    std::vector<double> w, b;
    std::vector<size_t> hist(inflation_bins().size(), 0);
    size_t with_inflation = 0;
    for (const auto& r : v.jobs) {
      if (!r.started) continue;
      w.push_back(r.wait);
      b.push_back(r.bsld);
      if (r.inflation >= 0) {
        ++hist[inflation_bin(r.inflation)];
        ++with_inflation;
      }
    }
    wait_cdf.series.push_back({v.name, ecdf(w, kCdfPoints), {}});
    bsld_cdf.series.push_back({v.name, ecdf(b, kCdfPoints), {}});
    ChartSeries h{v.name, {}, {}};
    for (size_t c : hist)
      h.values.push_back(with_inflation ? 100.0 * static_cast<double>(c) / static_cast<double>(with_inflation) : 0);
    infl.series.push_back(h);
    const TimeSeries ts = time_series(v, t0, t1, kBins);
    ChartSeries q{v.name, {}, {}}, u{v.name, {}, {}};
    const double bw = (t1 - t0) / kBins;
    for (int i = 0; i < kBins; ++i) {
      const double mid = (t0 + (i + 0.5) * bw) / 86400.0;
      q.points.emplace_back(mid, ts.queue[i]);
      u.points.emplace_back(mid, 100 * ts.gpu_util[i]);
      ts_csv += csv_field(v.name) + "," + std::to_string(i) + "," + fixed(t0 + i * bw, 3) + "," +
                fixed(t0 + (i + 1) * bw, 3) + "," + fixed(ts.queue[i], 4) + "," + fixed(ts.gpu_util[i], 6) + "\n";
    }
    queue.series.push_back(q);
    util.series.push_back(u);
  }
  // Mean wait by GPU count and by partition, one bar per variant.
  auto group_chart = [&](bool gpus) {
    BarChart c{gpus ? "Mean wait by GPUs per job" : "Mean wait by partition", gpus ? "GPUs per job" : "partition",
               "mean wait (hours)", {}, {}};
    std::vector<std::string> cats;
    std::vector<std::map<std::string, double>> per(vs.size());
    for (size_t k = 0; k < vs.size(); ++k)
      for (const auto& g : gpus ? by_gpu_count(vs[k]) : by_partition(vs[k])) {
        if (std::find(cats.begin(), cats.end(), g.group) == cats.end()) cats.push_back(g.group);
        per[k][g.group] = g.wait_mean / 3600.0;
      }
    if (gpus) {  // bucket order, whatever variant saw a bucket first
      const std::vector<std::string> order = {"0 GPU", "1 GPU", "2 GPU", "3-4 GPU", "5-8 GPU", "9-16 GPU",
                                              "17-64 GPU", ">64 GPU"};
      std::vector<std::string> sorted;
      for (const auto& o : order)
        if (std::find(cats.begin(), cats.end(), o) != cats.end()) sorted.push_back(o);
      cats = sorted;
    } else {
      std::sort(cats.begin(), cats.end());
    }
    for (const auto& cat : cats) c.categories.push_back(gpus ? cat.substr(0, cat.size() - 4) : cat);
    for (size_t k = 0; k < vs.size(); ++k) {
      ChartSeries s{vs[k].name, {}, {}};
      for (const auto& cat : cats) s.values.push_back(per[k].count(cat) ? per[k][cat] : 0);
      c.series.push_back(s);
    }
    return c;
  };

  const Table head = headline(vs);
  const Table diffs = differences_table(in.differences, true);
  const Table diffs_shown = differences_table(in.differences, false);
  const Table gpus = group_table(vs, true), parts = group_table(vs, false);
  const auto found = findings(in);
  const std::string base = vs.empty() ? "" : vs[0].name;
  const std::string ci_note =
      in.resamples > 0
          ? "Differences are variant minus " + base + ", with 95% percentile intervals from " +
                std::to_string(in.resamples) +
                " bootstrap resamples of the jobs (paired: the same jobs drawn for both runs when they ran the same "
                "trace; seed " + std::to_string(in.seed) + ")."
          : "Differences are variant minus " + base + "; no bootstrap intervals were asked for (--bootstrap 0).";
  const std::vector<std::pair<std::string, std::string>> defs = {
      {"Throughput", "jobs that ran, per hour of makespan (first submit to last end)."},
      {"GPU util", "allocated GPU-seconds / (GPUs x makespan)."},
      {"Wait", "start - submit, over the jobs that ran."},
      {"Bounded slowdown", "max(1, (wait + run) / max(run, 10 s))."},
      {"Runtime inflation",
       "simulated run time / the trace's run time, which the step model takes as the run time at the reference "
       "placement (numa-bound on an empty cluster unless --reference says otherwise); 1.000 without "
       "--runtime-model step. Jobs killed at their time limit are left out."},
      {"GPU jobs not NUMA-local", "jobs holding GPUs with some task's cores or memory off its GPUs' NUMA domains."}};
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>gcsim compare: " +
      xml_escape(in.cluster) + "</title>\n<style>\n" + kStyle + "\n</style>\n</head>\n<body>\n<h1>gcsim compare</h1>\n";
  html += "<p class=\"meta\">Cluster: " + xml_escape(in.cluster) + "<br>\nTrace: " + xml_escape(in.trace) +
          "<br>\nVariants: " + std::to_string(vs.size()) + ", each in its own run directory beside this page (" +
          "<code>NAME/jobs.sacct</code>, <code>NAME/summary.json</code>).</p>\n";
  html += "<h2>Headline</h2>\n" + to_html(head);
  if (!found.empty()) {
    html += "<ul>\n";
    for (const auto& f : found) html += "<li>" + xml_escape(f) + "</li>\n";
    html += "</ul>\n";
  }
  if (!in.differences.empty())
    html += "<h2>Differences against " + xml_escape(base) + "</h2>\n<p>" + xml_escape(ci_note) + "</p>\n" +
            to_html(diffs_shown);
  html += "<h2>Distributions</h2>\n";
  html += figure("fig-wait-cdf", svg_line_chart(wait_cdf), "Share of jobs that waited at most x seconds.");
  html += figure("fig-slowdown-cdf", svg_line_chart(bsld_cdf), "Share of jobs with bounded slowdown at most x.");
  html += figure("fig-inflation-hist", svg_bar_chart(infl),
                 "Simulated run time over the trace's run time at the reference placement; ~1 means within 0.1%.");
  html += "<h2>Over time</h2>\n";
  html += figure("fig-queue", svg_line_chart(queue), "Pending jobs, averaged over " + std::to_string(kBins) +
                                                          " equal bins of the run.");
  html += figure("fig-gpu-util", svg_line_chart(util), "Share of the cluster's GPUs allocated, averaged per bin.");
  html += "<h2>Breakdowns</h2>\n";
  html += figure("fig-wait-by-gpus", svg_bar_chart(group_chart(true)), "Mean wait of the jobs of each size.");
  html += to_html(gpus);
  html += figure("fig-wait-by-partition", svg_bar_chart(group_chart(false)), "Mean wait of each partition's jobs.");
  html += to_html(parts);
  html += "<h2>Definitions</h2>\n<dl>\n";
  for (const auto& [term, text] : defs) html += "<dt>" + xml_escape(term) + "</dt><dd>" + xml_escape(text) + "</dd>\n";
  html += "</dl>\n<p class=\"meta\">The same numbers: report.md, headline.csv, differences.csv, by_gpus.csv, "
          "by_partition.csv, timeseries.csv.</p>\n</body>\n</html>\n";

  std::string md = "# gcsim compare\n\n- Cluster: " + in.cluster + "\n- Trace: " + in.trace + "\n- Variants: " +
                   std::to_string(vs.size()) + " (run directories beside this file)\n\n## Headline\n\n" +
                   to_md(head) + "\n";
  for (const auto& f : found) md += "- " + f + "\n";
  if (!in.differences.empty()) md += "\n## Differences against " + base + "\n\n" + ci_note + "\n\n" + to_md(diffs_shown);
  md += "\n## By GPUs per job\n\n" + to_md(gpus) + "\n## By partition\n\n" + to_md(parts) + "\n## Definitions\n\n";
  for (const auto& [term, text] : defs) md += "- **" + term + "**: " + text + "\n";

  return {{"report.html", html},
          {"report.md", md},
          {"headline.csv", headline_csv(vs)},
          {"differences.csv", to_csv(diffs)},
          {"by_gpus.csv", to_csv(gpus)},
          {"by_partition.csv", to_csv(parts)},
          {"timeseries.csv", ts_csv}};
}

}  // namespace gcsim
