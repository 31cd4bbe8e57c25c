#include "sim/metrics/summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace gcsim {

double quantile_sorted(const std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

std::string human_duration(double s) {
  char buf[64];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0f s", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  else if (s < 86400 * 2) std::snprintf(buf, sizeof buf, "%.2f h", s / 3600);
  else std::snprintf(buf, sizeof buf, "%.2f d", s / 86400);
  return buf;
}

Summary summarize(const Cluster& cluster, const Trace& trace, const std::vector<JobOutcome>& out) {
  Summary s;
  s.jobs = static_cast<int64_t>(trace.jobs.size());
  s.total_cpus = cluster.total_cpus();
  s.total_gpus = cluster.total_gpus();
  std::vector<double> waits;
  double bsld_sum = 0, cpu_s = 0, gpu_s = 0;
  SimTime first_submit = SimTime::infinite(), last_end;
  PackedAllocation scratch;  // a running job's allocation, packed
  for (size_t j = 0; j < out.size(); ++j) {
    const auto& o = out[j];
    if (o.status == JobStatus::kRejected) {
      ++s.rejected;
      continue;
    }
    first_submit = std::min(first_submit, trace.jobs[j].submit);
    if (o.status != JobStatus::kDone) {
      ++s.unfinished;
      continue;
    }
    ++s.finished;
    if (o.timed_out) ++s.timed_out;
    if (o.started_by == StartedBy::kBackfill) ++s.backfilled;
    last_end = std::max(last_end, o.end);
    // A preempted job (las) waited before its first start and between its segments.
    const double run = (o.end - o.start - o.preempted_time).to_seconds();
    const double wait = (o.end - trace.jobs[j].submit).to_seconds() - run;
    waits.push_back(wait);
    bsld_sum += std::max(1.0, (wait + run) / std::max(run, 10.0));
    int64_t cpus = 0, gpus = 0;
    o.final_packed(scratch).for_each_node([&](const PackedAllocation::NodeView& v) {
      cpus += static_cast<int64_t>(v.cores) * cluster.tmpl(v.node).threads_per_core;
      gpus += v.gpus;
    });
    cpu_s += static_cast<double>(cpus) * run;
    gpu_s += static_cast<double>(gpus) * run;
  }
  if (s.finished > 0) {
    std::sort(waits.begin(), waits.end());
    double sum = 0;
    for (double w : waits) sum += w;
    s.wait_s.mean = sum / static_cast<double>(waits.size());
    s.wait_s.median = quantile_sorted(waits, 0.5);
    s.wait_s.p95 = quantile_sorted(waits, 0.95);
    s.wait_s.max = waits.back();
    s.bounded_slowdown_mean = bsld_sum / static_cast<double>(s.finished);
    s.makespan_s = (last_end - first_submit).to_seconds();
    if (s.makespan_s > 0 && s.total_cpus > 0) s.cpu_utilization = cpu_s / (static_cast<double>(s.total_cpus) * s.makespan_s);
    if (s.makespan_s > 0 && s.total_gpus > 0) s.gpu_utilization = gpu_s / (static_cast<double>(s.total_gpus) * s.makespan_s);
  }
  return s;
}

}  // namespace gcsim
