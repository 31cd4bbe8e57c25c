#include "sim/metrics/trace_stats.hpp"

#include <algorithm>
#include <cstdio>
#include <set>
#include <utility>
#include <vector>

#include "sim/core/input_file.hpp"
#include "sim/metrics/summary.hpp"
#include "sim/workload/trace_writers.hpp"

namespace gcsim {

namespace {

SampleStats summarise(std::vector<double> v) {
  SampleStats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.n = static_cast<int64_t>(v.size());
  s.mean = sum / static_cast<double>(v.size());
  s.p25 = quantile_sorted(v, 0.25);
  s.p50 = quantile_sorted(v, 0.50);
  s.p75 = quantile_sorted(v, 0.75);
  s.p90 = quantile_sorted(v, 0.90);
  s.p99 = quantile_sorted(v, 0.99);
  s.max = v.back();
  return s;
}

std::optional<double> ratio(double work, int64_t capacity, double seconds) {
  if (capacity <= 0 || seconds <= 0) return std::nullopt;
  return work / (static_cast<double>(capacity) * seconds);
}

// Fixed-point text, the one number format of every output (no locale, no exponent).
std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string percent(int64_t part, int64_t whole) {
  return whole > 0 ? fixed(100.0 * static_cast<double>(part) / static_cast<double>(whole), 1) + "%" : "-";
}

}  // namespace

int gpu_bucket(int64_t gpus) {
  static constexpr int64_t kUpper[kGpuBuckets - 1] = {0, 1, 2, 4, 8, 16, 32, 64};
  for (int b = 0; b < kGpuBuckets - 1; ++b)
    if (gpus <= kUpper[b]) return b;
  return kGpuBuckets - 1;
}

const char* gpu_bucket_label(int bucket) {
  static constexpr const char* kLabels[kGpuBuckets] = {"0", "1", "2", "3-4", "5-8", "9-16", "17-32", "33-64", ">64"};
  return kLabels[std::clamp(bucket, 0, kGpuBuckets - 1)];
}

int duration_bin(double seconds) {
  // Compared against exact decade edges rather than log10, so 10 s lands in 10-100 s.
  double edge = 1;
  for (int b = 0; b < kDurationBins - 1; ++b, edge *= 10)
    if (seconds < edge) return b;
  return kDurationBins - 1;
}

const char* duration_bin_label(int bin) {
  static constexpr const char* kLabels[kDurationBins] = {"<1s",     "1-10s",   "10-100s", "100s-17m", "17m-2.8h",
                                                         "2.8-28h", "28h-12d", "12-116d", ">=116d"};
  return kLabels[std::clamp(bin, 0, kDurationBins - 1)];
}

const char* trace_state_label(RecordedState s) {
  // trace_writers names the four final states; a state the trace did not record is
  // written as an empty field there, but needs a name in a table.
  const char* name = recorded_state_name(s);
  return *name ? name : "UNKNOWN";
}

TraceStats compute_trace_stats(const Trace& t, const Cluster* cluster) {
  TraceStats s;
  s.path = t.path;
  s.format = t.format;
  s.jobs = static_cast<int64_t>(t.jobs.size());
  std::vector<double> durations, runs, waits, cpus, gpu_hours;
  std::set<std::string> users, accounts;
  int64_t gpu_sum = 0;
  SimTime first_submit = SimTime::infinite(), last_submit, last_end;
  for (const Job& j : t.jobs) {
    const int64_t g = job_gpus(j);
    const int64_t c = job_cpus(j);
    const double dur = j.duration.to_seconds();
    ++s.gpu_buckets[gpu_bucket(g)];
    ++s.gpu_counts[g];
    const int64_t held = j.recorded_gpus > 0 ? j.recorded_gpus : g;
    ++s.recorded_gpu_buckets[gpu_bucket(held)];
    if (j.recorded_gpus > 0 && g > j.recorded_gpus) ++s.request_exceeds_recorded;
    if (g > 0) {
      ++s.gpu_jobs;
      gpu_sum += g;
      if (j.req.gpu_fraction < 1.0) ++s.fractional_gpu_jobs;
      gpu_hours.push_back(static_cast<double>(g) * dur / 3600.0);
    } else {
      ++s.cpu_only_jobs;
    }
    durations.push_back(dur);
    cpus.push_back(static_cast<double>(c));
    ++s.duration_bins[duration_bin(dur)];
    if (j.recorded_start) {
      runs.push_back(dur);
      waits.push_back((*j.recorded_start - j.submit).to_seconds());
    }
    ++s.states[static_cast<int>(j.recorded_state)];
    if (!j.user.empty()) users.insert(j.user);
    if (!j.account.empty()) accounts.insert(j.account);
    s.gpu_seconds += static_cast<double>(g) * dur;
    s.cpu_seconds += static_cast<double>(c) * dur;
    first_submit = std::min(first_submit, j.submit);
    last_submit = std::max(last_submit, j.submit);
    last_end = std::max(last_end, j.recorded_start.value_or(j.submit) + j.duration);
  }
  if (s.jobs == 0) return s;
  s.first_submit_s = first_submit.to_seconds();
  s.last_submit_s = last_submit.to_seconds();
  s.last_end_s = last_end.to_seconds();
  if (s.gpu_jobs > 0) s.gpus_per_gpu_job_mean = static_cast<double>(gpu_sum) / static_cast<double>(s.gpu_jobs);
  s.duration_s = summarise(std::move(durations));
  s.run_started_s = summarise(std::move(runs));
  s.wait_s = summarise(std::move(waits));
  s.cpus_per_job = summarise(std::move(cpus));
  s.gpu_hours = summarise(std::move(gpu_hours));
  s.users = static_cast<int64_t>(users.size());
  s.accounts = static_cast<int64_t>(accounts.size());
  if (cluster) {
    s.has_cluster = true;
    s.cluster_nodes = static_cast<int64_t>(cluster->nodes.size());
    s.cluster_gpus = cluster->total_gpus();
    // Slurm CPUs (threads when hyperthreaded): the unit job_cpus counts in.
    s.cluster_cpus = cluster->total_cpus();
    const double window = s.last_submit_s - s.first_submit_s;
    const double to_end = s.last_end_s - s.first_submit_s;
    s.gpu_offered_load = ratio(s.gpu_seconds, s.cluster_gpus, window);
    s.cpu_offered_load = ratio(s.cpu_seconds, s.cluster_cpus, window);
    s.gpu_utilization_to_last_end = ratio(s.gpu_seconds, s.cluster_gpus, to_end);
    s.cpu_utilization_to_last_end = ratio(s.cpu_seconds, s.cluster_cpus, to_end);
  }
  return s;
}

// ---------------------------------------------------------------- text

namespace {

std::string sample_line(const SampleStats& q, int decimals) {
  if (q.n == 0) return "n=0";
  return "n=" + std::to_string(q.n) + " p25=" + fixed(q.p25, decimals) + " p50=" + fixed(q.p50, decimals) +
         " p75=" + fixed(q.p75, decimals) + " p90=" + fixed(q.p90, decimals) + " p99=" + fixed(q.p99, decimals) +
         " mean=" + fixed(q.mean, decimals) + " max=" + fixed(q.max, decimals);
}

std::string bucket_line(const std::array<int64_t, kGpuBuckets>& b, int64_t jobs) {
  std::string o;
  for (int k = 0; k < kGpuBuckets; ++k) {
    if (b[k] == 0) continue;
    if (!o.empty()) o += ", ";
    o += std::string(gpu_bucket_label(k)) + ":" + percent(b[k], jobs) + " (" + std::to_string(b[k]) + ")";
  }
  return o.empty() ? "-" : o;
}

std::string optional_fixed(const std::optional<double>& v, int decimals) { return v ? fixed(*v, decimals) : "-"; }

}  // namespace

std::string trace_stats_text(const TraceStats& s) {
  std::string o;
  auto row = [&](const char* name, const std::string& value) {
    std::string n = name;
    n.resize(std::max<size_t>(n.size() + 1, 20), ' ');
    o += n + value + "\n";
  };
  row("trace", s.path + " (" + s.format + ")");
  row("jobs", std::to_string(s.jobs) + " (GPU " + std::to_string(s.gpu_jobs) + ", CPU-only " +
                  std::to_string(s.cpu_only_jobs) + ")");
  row("span s", "first submit " + fixed(s.first_submit_s, 0) + ", last submit " + fixed(s.last_submit_s, 0) +
                    ", last end " + fixed(s.last_end_s, 0));
  row("GPUs/job", bucket_line(s.gpu_buckets, s.jobs));
  std::string exact;
  for (const auto& [g, n] : s.gpu_counts)
    exact += (exact.empty() ? "" : " ") + std::to_string(g) + ":" + std::to_string(n);
  row("GPU counts", exact.empty() ? "-" : exact);
  row("GPUs/GPU job mean", fixed(s.gpus_per_gpu_job_mean, 3));
  if (s.request_exceeds_recorded > 0) {
    row("GPUs/job recorded", bucket_line(s.recorded_gpu_buckets, s.jobs));
    row("request > recorded",
        std::to_string(s.request_exceeds_recorded) + (s.request_exceeds_recorded == 1 ? " job" : " jobs"));
  }
  row("fractional GPU", percent(s.fractional_gpu_jobs, s.gpu_jobs) + " of GPU jobs (" +
                            std::to_string(s.fractional_gpu_jobs) + ")");
  row("duration s", sample_line(s.duration_s, 0));
  row("run (started) s", sample_line(s.run_started_s, 0));
  row("wait s", sample_line(s.wait_s, 0));
  row("CPUs/job", sample_line(s.cpus_per_job, 1));
  row("GPU-hours/GPU job", sample_line(s.gpu_hours, 2));
  std::string states;
  for (int k = 0; k < kRecordedStates; ++k) {
    if (s.states[k] == 0) continue;
    states += (states.empty() ? "" : ", ") + std::string(trace_state_label(static_cast<RecordedState>(k))) + " " +
              std::to_string(s.states[k]) + " (" + percent(s.states[k], s.jobs) + ")";
  }
  row("states", states.empty() ? "-" : states);
  row("users", std::to_string(s.users));
  row("accounts", std::to_string(s.accounts));
  if (s.has_cluster) {
    row("cluster", std::to_string(s.cluster_nodes) + " nodes, " + std::to_string(s.cluster_gpus) + " GPUs, " +
                       std::to_string(s.cluster_cpus) + " CPUs");
    row("offered load", "GPU " + optional_fixed(s.gpu_offered_load, 3) + ", CPU " +
                            optional_fixed(s.cpu_offered_load, 3) + " (work / capacity x submit window)");
    row("util to last end", "GPU " + optional_fixed(s.gpu_utilization_to_last_end, 3) + ", CPU " +
                                optional_fixed(s.cpu_utilization_to_last_end, 3) +
                                " (work / capacity x (last end - first submit))");
  }
  return o;
}

// ---------------------------------------------------------------- JSON

namespace {

// sim_metrics cannot link sim_io's JsonWriter (sim_io depends on sim_metrics), so the
// few shapes needed here are written by hand: objects of pre-rendered values.
std::string json_string(const std::string& v) {
  std::string o = "\"";
  for (char c : v) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      o += buf;
    } else {
      o += c;
    }
  }
  return o + "\"";
}

using Fields = std::vector<std::pair<std::string, std::string>>;

std::string json_object(const Fields& f, const std::string& indent) {
  if (f.empty()) return "{}";
  std::string o = "{";
  for (size_t i = 0; i < f.size(); ++i)
    o += (i ? ",\n" : "\n") + indent + "  " + json_string(f[i].first) + ": " + f[i].second;
  return o + "\n" + indent + "}";
}

// Small objects stay on one line so the file reads as a table.
std::string json_inline(const Fields& f) {
  std::string o = "{";
  for (size_t i = 0; i < f.size(); ++i) o += (i ? ", " : "") + json_string(f[i].first) + ": " + f[i].second;
  return o + "}";
}

std::string json_int(int64_t v) { return std::to_string(v); }
std::string json_num(double v, int decimals) { return fixed(v, decimals); }
std::string json_opt(const std::optional<double>& v) { return v ? fixed(*v, 6) : "null"; }

std::string json_sample(const SampleStats& q, int decimals) {
  return json_inline({{"n", json_int(q.n)},
                      {"mean", json_num(q.mean, decimals)},
                      {"p25", json_num(q.p25, decimals)},
                      {"p50", json_num(q.p50, decimals)},
                      {"p75", json_num(q.p75, decimals)},
                      {"p90", json_num(q.p90, decimals)},
                      {"p99", json_num(q.p99, decimals)},
                      {"max", json_num(q.max, decimals)}});
}

std::string json_buckets(const std::array<int64_t, kGpuBuckets>& b) {
  Fields f;
  for (int k = 0; k < kGpuBuckets; ++k) f.emplace_back(gpu_bucket_label(k), json_int(b[k]));
  return json_inline(f);
}

}  // namespace

std::string trace_stats_json(const TraceStats& s) {
  Fields counts, bins, states;
  for (const auto& [g, n] : s.gpu_counts) counts.emplace_back(std::to_string(g), json_int(n));
  for (int k = 0; k < kDurationBins; ++k) bins.emplace_back(duration_bin_label(k), json_int(s.duration_bins[k]));
  for (int k = 0; k < kRecordedStates; ++k)
    states.emplace_back(trace_state_label(static_cast<RecordedState>(k)), json_int(s.states[k]));
  std::string cluster = "null";
  if (s.has_cluster)
    cluster = json_object({{"nodes", json_int(s.cluster_nodes)},
                           {"gpus", json_int(s.cluster_gpus)},
                           {"cpus", json_int(s.cluster_cpus)},
                           {"gpu_seconds", json_num(s.gpu_seconds, 3)},
                           {"cpu_seconds", json_num(s.cpu_seconds, 3)},
                           {"gpu_offered_load", json_opt(s.gpu_offered_load)},
                           {"cpu_offered_load", json_opt(s.cpu_offered_load)},
                           {"gpu_utilization_to_last_end", json_opt(s.gpu_utilization_to_last_end)},
                           {"cpu_utilization_to_last_end", json_opt(s.cpu_utilization_to_last_end)}},
                          "  ");
  return json_object({{"path", json_string(s.path)},
                      {"format", json_string(s.format)},
                      {"jobs", json_int(s.jobs)},
                      {"gpu_jobs", json_int(s.gpu_jobs)},
                      {"cpu_only_jobs", json_int(s.cpu_only_jobs)},
                      {"span_s", json_inline({{"first_submit", json_num(s.first_submit_s, 6)},
                                              {"last_submit", json_num(s.last_submit_s, 6)},
                                              {"last_end", json_num(s.last_end_s, 6)}})},
                      {"gpu_buckets", json_buckets(s.gpu_buckets)},
                      {"gpu_counts", json_inline(counts)},
                      {"gpus_per_gpu_job_mean", json_num(s.gpus_per_gpu_job_mean, 6)},
                      {"recorded_gpu_buckets", json_buckets(s.recorded_gpu_buckets)},
                      {"request_exceeds_recorded", json_int(s.request_exceeds_recorded)},
                      {"fractional_gpu_jobs", json_int(s.fractional_gpu_jobs)},
                      {"duration_s", json_sample(s.duration_s, 3)},
                      {"run_started_s", json_sample(s.run_started_s, 3)},
                      {"wait_s", json_sample(s.wait_s, 3)},
                      {"cpus_per_job", json_sample(s.cpus_per_job, 3)},
                      {"gpu_hours", json_sample(s.gpu_hours, 6)},
                      {"duration_bins", json_inline(bins)},
                      {"states", json_inline(states)},
                      {"users", json_int(s.users)},
                      {"accounts", json_int(s.accounts)},
                      {"cluster", cluster}},
                     "") +
         "\n";
}

// ---------------------------------------------------------------- SVG

namespace {

constexpr int kWidth = 760;
constexpr int kPanelHeight = 300;
constexpr int kLeft = 70, kRight = 20, kTop = 40, kPlotHeight = 180;

std::string svg_text(double x, double y, const std::string& text, const char* anchor, int size,
                     const std::string& extra = "") {
  return "<text x=\"" + fixed(x, 1) + "\" y=\"" + fixed(y, 1) + "\" text-anchor=\"" + anchor + "\" font-size=\"" +
         std::to_string(size) + "\"" + extra + ">" + xml_escape(text) + "</text>\n";
}

// One bar chart in a horizontal band starting at `y0`: labelled bars, counts above
// them, a y axis in jobs and an x-axis title.
std::string bar_panel(int y0, const std::string& title, const std::string& x_title,
                      const std::vector<std::pair<std::string, int64_t>>& bars) {
  int64_t top = 1;
  for (const auto& b : bars) top = std::max(top, b.second);
  const double plot_w = kWidth - kLeft - kRight;
  const double slot = plot_w / static_cast<double>(std::max<size_t>(1, bars.size()));
  const double base = y0 + kTop + kPlotHeight;
  std::string o = "<g>\n";
  o += svg_text(kWidth / 2.0, y0 + 20, title, "middle", 14, " font-weight=\"bold\"");
  o += "<line x1=\"" + std::to_string(kLeft) + "\" y1=\"" + fixed(base, 1) + "\" x2=\"" +
       std::to_string(kWidth - kRight) + "\" y2=\"" + fixed(base, 1) + "\" stroke=\"black\"/>\n";
  o += "<line x1=\"" + std::to_string(kLeft) + "\" y1=\"" + std::to_string(y0 + kTop) + "\" x2=\"" +
       std::to_string(kLeft) + "\" y2=\"" + fixed(base, 1) + "\" stroke=\"black\"/>\n";
  o += svg_text(kLeft - 6, y0 + kTop + 4, std::to_string(top), "end", 10);
  o += svg_text(kLeft - 6, base + 4, "0", "end", 10);
  o += svg_text(18, y0 + kTop + kPlotHeight / 2.0, "jobs", "middle", 12,
                " transform=\"rotate(-90 18 " + fixed(y0 + kTop + kPlotHeight / 2.0, 1) + ")\"");
  for (size_t i = 0; i < bars.size(); ++i) {
    const double h = kPlotHeight * static_cast<double>(bars[i].second) / static_cast<double>(top);
    const double x = kLeft + slot * static_cast<double>(i) + slot * 0.1;
    const double w = slot * 0.8;
    o += "<rect x=\"" + fixed(x, 1) + "\" y=\"" + fixed(base - h, 1) + "\" width=\"" + fixed(w, 1) +
         "\" height=\"" + fixed(h, 1) + "\" fill=\"#4c72b0\"><title>" + xml_escape(bars[i].first) + ": " +
         std::to_string(bars[i].second) + "</title></rect>\n";
    o += svg_text(x + w / 2, base - h - 4, std::to_string(bars[i].second), "middle", 10);
    o += svg_text(x + w / 2, base + 16, bars[i].first, "middle", 10);
  }
  o += svg_text(kLeft + plot_w / 2, base + 40, x_title, "middle", 12);
  return o + "</g>\n";
}

}  // namespace

std::string trace_stats_svg(const TraceStats& s) {
  std::vector<std::pair<std::string, int64_t>> gpus, durations;
  for (int k = 0; k < kGpuBuckets; ++k) gpus.emplace_back(gpu_bucket_label(k), s.gpu_buckets[k]);
  for (int k = 0; k < kDurationBins; ++k) durations.emplace_back(duration_bin_label(k), s.duration_bins[k]);
  const int height = 2 * kPanelHeight + 30;
  std::string o = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(kWidth) + "\" height=\"" +
                  std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(kWidth) + " " +
                  std::to_string(height) + "\" font-family=\"sans-serif\">\n";
  o += "<title>" + xml_escape("trace statistics: " + s.path) + "</title>\n";
  o += "<rect x=\"0\" y=\"0\" width=\"" + std::to_string(kWidth) + "\" height=\"" + std::to_string(height) +
       "\" fill=\"white\"/>\n";
  o += bar_panel(0, "GPUs per job (" + std::to_string(s.jobs) + " jobs)", "GPUs per job (requested)", gpus);
  o += bar_panel(kPanelHeight, "Job duration (log scale, one bar per decade of seconds)",
                 "duration (log scale: <1 s, 1-10 s, ..., >=1e7 s)", durations);
  o += svg_text(kWidth / 2.0, height - 8,
                s.path + " (" + s.format + "): median duration " + fixed(s.duration_s.p50, 0) + " s", "middle", 10);
  return o + "</svg>\n";
}

}  // namespace gcsim
