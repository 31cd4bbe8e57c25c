#include "sim/metrics/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/core/parallel.hpp"
#include "sim/kernel/rng.hpp"
#include "sim/workload/job_request.hpp"

namespace gcsim {

namespace {

double mean_of(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

// quantile_sorted's value without sorting the whole vector (reorders `v`).
double quantile_unsorted(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
  const double a = v[lo];
  if (lo + 1 >= v.size()) return a;
  const double b = *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(lo) + 1, v.end());
  return a + (b - a) * (pos - static_cast<double>(lo));
}

GroupRow group_row(const std::string& name, const std::vector<const JobRow*>& rows) {
  GroupRow g;
  g.group = name;
  std::vector<double> w, s, inf;
  for (const JobRow* r : rows) {
    w.push_back(r->wait);
    s.push_back(r->bsld);
    if (r->inflation >= 0) inf.push_back(r->inflation);
  }
  g.jobs = static_cast<int64_t>(rows.size());
  g.wait_mean = mean_of(w);
  g.bsld_mean = mean_of(s);
  g.inflation_mean = inf.empty() ? 1 : mean_of(inf);
  g.wait_p95 = quantile_unsorted(w, 0.95);
  return g;
}

enum class Metric { kWaitMean, kWaitP95, kBsldMean, kInflationMean };
const std::vector<std::pair<Metric, const char*>> kMetrics = {{Metric::kWaitMean, "wait_mean_s"},
                                                                {Metric::kWaitP95, "wait_p95_s"},
                                                                {Metric::kBsldMean, "bsld_mean"},
                                                                {Metric::kInflationMean, "inflation_mean"}};

// The metric over the jobs `idx` of `v` (indices into v.jobs, repeats allowed).
double metric_over(const VariantMetrics& v, const std::vector<size_t>& idx, Metric m, std::vector<double>& scratch) {
  scratch.clear();
  for (size_t i : idx) {
    const JobRow& r = v.jobs[i];
    switch (m) {
      case Metric::kWaitMean:
      case Metric::kWaitP95: scratch.push_back(r.wait); break;
      case Metric::kBsldMean: scratch.push_back(r.bsld); break;
      case Metric::kInflationMean:
        if (r.inflation >= 0) scratch.push_back(r.inflation);
        break;
    }
  }
  if (m == Metric::kWaitP95) return quantile_unsorted(scratch, 0.95);
  if (m == Metric::kInflationMean && scratch.empty()) return 1;
  return mean_of(scratch);
}

std::vector<size_t> started_indices(const VariantMetrics& v) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < v.jobs.size(); ++i)
    if (v.jobs[i].started) idx.push_back(i);
  return idx;
}

// 2.5% and 97.5% of the sorted resampled statistics.
std::pair<double, double> interval(std::vector<double> stats) {
  std::sort(stats.begin(), stats.end());
  return {quantile_sorted(stats, 0.025), quantile_sorted(stats, 0.975)};
}

}  // namespace

VariantMetrics variant_metrics(const std::string& name, const std::string& settings, const Cluster& cluster,
                               const Trace& trace, const std::vector<JobOutcome>& outcomes) {
  VariantMetrics v;
  v.name = name;
  v.settings = settings;
  v.summary = summarize(cluster, trace, outcomes);
  v.nodes = static_cast<int64_t>(cluster.nodes.size());
  v.jobs.resize(trace.jobs.size());
  std::vector<double> inf;
  PackedAllocation scratch;  // a running job's allocation, packed
  for (size_t j = 0; j < trace.jobs.size(); ++j) {
    const Job& job = trace.jobs[j];
    const JobOutcome& o = outcomes[j];
    JobRow& r = v.jobs[j];
    r.submit = job.submit.to_seconds();
    r.gpus = job_gpus(job);
    r.rejected = o.status == JobStatus::kRejected;
    if (o.shape.partition >= 0 && o.shape.partition < static_cast<int>(cluster.partitions.size()))
      r.partition = cluster.partitions[o.shape.partition].name;
    else
      r.partition = job.partition;
    if (o.status != JobStatus::kDone) continue;
    r.started = true;
    r.start = o.start.to_seconds();
    r.end = o.end.to_seconds();
    const double run = r.end - r.start - o.preempted_time.to_seconds();  // preempted gaps are waiting
    r.wait = r.end - r.submit - run;
    r.bsld = std::max(1.0, (r.wait + run) / std::max(run, 10.0));
    if (!o.timed_out && job.duration > SimTime()) {
      r.inflation = run / job.duration.to_seconds();
      inf.push_back(r.inflation);
    }
    r.gpus = 0;
    o.final_packed(scratch).for_each_node([&](const PackedAllocation::NodeView& v) { r.gpus += v.gpus; });
    if (r.gpus > 0) {
      ++v.gpu_jobs;
      r.not_numa_local = !o.gpu_tasks_numa_local;
      v.not_numa_local += r.not_numa_local;
    }
  }
  const double hours = v.summary.makespan_s / 3600.0;
  v.throughput_per_h = hours > 0 ? static_cast<double>(v.summary.finished) / hours : 0;
  if (!inf.empty()) {
    v.inflation_mean = mean_of(inf);
    v.inflation_p95 = quantile_unsorted(inf, 0.95);
  }
  return v;
}

std::string gpu_bucket(int64_t g) {
  if (g <= 2) return std::to_string(g);
  if (g <= 4) return "3-4";
  if (g <= 8) return "5-8";
  if (g <= 16) return "9-16";
  if (g <= 64) return "17-64";
  return ">64";
}

std::vector<GroupRow> by_gpu_count(const VariantMetrics& v) {
  static const std::vector<std::string> kOrder = {"0", "1", "2", "3-4", "5-8", "9-16", "17-64", ">64"};
  std::map<std::string, std::vector<const JobRow*>> groups;
  for (const auto& r : v.jobs)
    if (r.started) groups[gpu_bucket(r.gpus)].push_back(&r);
  std::vector<GroupRow> out;
  for (const auto& b : kOrder)
    if (auto it = groups.find(b); it != groups.end()) out.push_back(group_row(b + " GPU", it->second));
  return out;
}

std::vector<GroupRow> by_partition(const VariantMetrics& v) {
  std::map<std::string, std::vector<const JobRow*>> groups;  // name order
  for (const auto& r : v.jobs)
    if (r.started) groups[r.partition].push_back(&r);
  std::vector<GroupRow> out;
  for (const auto& [name, rows] : groups) out.push_back(group_row(name, rows));
  return out;
}

TimeSeries time_series(const VariantMetrics& v, double t0, double t1, int bins) {
  TimeSeries ts;
  ts.t0 = t0;
  ts.t1 = t1;
  ts.queue.assign(bins, 0);
  ts.gpu_util.assign(bins, 0);
  if (bins <= 0 || !(t1 > t0)) return ts;
  const double w = (t1 - t0) / bins;
  // Adds `weight` x the overlap of [a, b) with each bin, as a share of the bin.
  auto spread = [&](std::vector<double>& into, double a, double b, double weight) {
    a = std::max(a, t0);
    b = std::min(b, t1);
    if (!(b > a)) return;
    int i = std::clamp(static_cast<int>((a - t0) / w), 0, bins - 1);
    const int last = std::clamp(static_cast<int>((b - t0) / w), 0, bins - 1);
    for (; i <= last; ++i) {
      const double lo = std::max(a, t0 + i * w), hi = std::min(b, t0 + (i + 1) * w);
      if (hi > lo) into[i] += weight * (hi - lo) / w;
    }
  };
  const double gpus = static_cast<double>(v.summary.total_gpus);
  for (const auto& r : v.jobs) {
    if (r.rejected) continue;
    spread(ts.queue, r.submit, r.started ? r.start : t1, 1.0);
    if (r.started && gpus > 0) spread(ts.gpu_util, r.start, r.end, static_cast<double>(r.gpus) / gpus);
  }
  return ts;
}

std::vector<std::pair<double, double>> ecdf(std::vector<double> values, int points) {
  std::vector<std::pair<double, double>> out;
  if (values.empty() || points < 2) return out;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const size_t k = std::min<size_t>(static_cast<size_t>(points), n);
  for (size_t i = 0; i < k; ++i) {
    const size_t rank = k == 1 ? n - 1 : i * (n - 1) / (k - 1);
    out.emplace_back(values[rank], static_cast<double>(rank + 1) / static_cast<double>(n));
  }
  return out;
}

namespace {

// One variant against the baseline: its rows of differences() (metric order).
std::vector<Difference> difference_rows(const VariantMetrics& base, const VariantMetrics& v, int resamples,
                                        uint64_t seed) {
  std::vector<Difference> out;
  std::vector<double> scratch;
  // One stream per variant, so adding a variant never changes another's intervals.
  RngStream rng(seed, "compare.bootstrap." + v.name);
  const bool paired = v.jobs.size() == base.jobs.size();
  std::vector<size_t> bi, vi;  // the jobs each side is measured over
  if (paired) {
    for (size_t i = 0; i < v.jobs.size(); ++i)
      if (v.jobs[i].started && base.jobs[i].started) bi.push_back(i);
    vi = bi;
  } else {
    bi = started_indices(base);
    vi = started_indices(v);
  }
  std::vector<std::vector<double>> stats(kMetrics.size());
  std::vector<size_t> rb, rv;
  for (int s = 0; s < resamples && !bi.empty() && !vi.empty(); ++s) {
    rb.resize(bi.size());
    for (auto& x : rb) x = bi[rng.below(bi.size())];
    if (paired) {
      rv = rb;
    } else {
      rv.resize(vi.size());
      for (auto& x : rv) x = vi[rng.below(vi.size())];
    }
    for (size_t m = 0; m < kMetrics.size(); ++m)
      stats[m].push_back(metric_over(v, rv, kMetrics[m].first, scratch) -
                         metric_over(base, rb, kMetrics[m].first, scratch));
  }
  for (size_t m = 0; m < kMetrics.size(); ++m) {
    Difference d;
    d.variant = v.name;
    d.metric = kMetrics[m].second;
    d.paired = paired;
    d.baseline = metric_over(base, bi, kMetrics[m].first, scratch);
    d.value = metric_over(v, vi, kMetrics[m].first, scratch);
    d.diff = d.value - d.baseline;
    d.lo = d.hi = d.diff;
    if (!stats[m].empty()) std::tie(d.lo, d.hi) = interval(stats[m]);
    out.push_back(d);
  }
  return out;
}

}  // namespace

std::vector<Difference> differences(const std::vector<VariantMetrics>& variants, int resamples, uint64_t seed,
                                    int threads) {
  std::vector<Difference> out;
  if (variants.size() < 2) return out;
  // Each variant resamples from its own named stream, so the rows are the same whatever
  // the number of workers; they are joined in variant order.
  std::vector<std::vector<Difference>> rows(variants.size() - 1);
  for_each_index(rows.size(), threads,
                 [&](size_t k) { rows[k] = difference_rows(variants[0], variants[k + 1], resamples, seed); });
  for (auto& r : rows) out.insert(out.end(), r.begin(), r.end());
  return out;
}

}  // namespace gcsim
