#include "sim/workload/trace_transform.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "sim/workload/slurm_time.hpp"

namespace gcsim {

WindowPoint parse_window_point(const std::string& text, const SourceLoc& loc) {
  WindowPoint p;
  if (text.find('T') != std::string::npos || std::count(text.begin(), text.end(), '-') >= 2) {
    p.epoch = slurm_time::parse_iso(text);
    if (!p.epoch) throw InputError(loc, "invalid date '" + text + "': expected YYYY-MM-DD[THH:MM:SS]");
    return p;
  }
  if (text.find(':') != std::string::npos || text.find('-') != std::string::npos) {
    p.relative = slurm_time::parse_elapsed(text);
    if (!p.relative || p.relative->is_infinite())
      throw InputError(loc, "invalid time '" + text + "': expected seconds, Ns/Nm/Nh/Nd, [D-]HH:MM:SS or a date");
    return p;
  }
  double v = 0;
  const char* b = text.data();
  const char* e = b + text.size();
  auto [q, ec] = std::from_chars(b, e, v);
  double unit = 1;
  if (ec == std::errc() && q + 1 == e) {
    switch (*q) {
      case 's': unit = 1; break;
      case 'm': unit = 60; break;
      case 'h': unit = 3600; break;
      case 'd': unit = 86400; break;
      default: ec = std::errc::invalid_argument;
    }
  } else if (ec == std::errc() && q != e) {
    ec = std::errc::invalid_argument;
  }
  if (ec != std::errc() || !(v >= 0) || !std::isfinite(v))
    throw InputError(loc, "invalid time '" + text + "': expected seconds, Ns/Nm/Nh/Nd, [D-]HH:MM:SS or a date");
  p.relative = SimTime::from_seconds_ceil(v * unit);
  return p;
}

SimTime resolve_window_point(const WindowPoint& p, const Trace& t, const SourceLoc& loc) {
  if (p.relative) return *p.relative;
  if (!t.unix_start)
    throw InputError(loc, "a date needs a trace with an absolute start time; " + t.path +
                              " has none (give the time relative to its start instead)");
  const int64_t rel = *p.epoch - *t.unix_start;
  return rel <= 0 ? SimTime() : SimTime::seconds(rel);
}

void apply_window(Trace& t, const TraceWindow& w) {
  if (w.identity()) return;
  const SimTime from = w.from.value_or(SimTime());
  const size_t before = t.jobs.size();
  std::vector<Job> kept;
  kept.reserve(t.jobs.size());
  for (Job& j : t.jobs) {
    if (j.submit < from || (w.to && j.submit >= *w.to)) continue;
    kept.push_back(std::move(j));
  }
  t.jobs = std::move(kept);
  char buf[200];
  if (w.from || w.to) {
    std::snprintf(buf, sizeof buf, "window: kept %zu of %zu jobs submitted in [%s, %s) s; t=0 moved to the window start",
                  t.jobs.size(), before, std::to_string(from.whole_seconds()).c_str(),
                  w.to ? std::to_string(w.to->whole_seconds()).c_str() : "end");
    t.assumptions.push_back(buf);
    if (t.unix_start) *t.unix_start += from.whole_seconds();
  }
  const double x = w.scale_arrivals;
  for (Job& j : t.jobs) {
    const SimTime rel = j.submit - from;
    const SimTime scaled = x == 1.0 ? rel : SimTime::us(std::llround(static_cast<double>(rel.count_us()) / x));
    if (j.recorded_start) *j.recorded_start = *j.recorded_start - j.submit + scaled;
    j.submit = scaled;
  }
  if (x != 1.0) {
    std::snprintf(buf, sizeof buf,
                  "arrivals scaled x%g: submit times divided by %g (sizes, durations and recorded waits kept)", x, x);
    t.assumptions.push_back(buf);
  }
}

void stable_sort_by_submit(std::vector<Job>& jobs) {
  std::vector<size_t> order(jobs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return jobs[a].submit < jobs[b].submit; });
  // jobs[i] = old jobs[order[i]], applied in place cycle by cycle with one spare Job
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] == i) continue;
    Job spare = std::move(jobs[i]);
    size_t k = i;
    while (order[k] != i) {
      const size_t from = order[k];
      jobs[k] = std::move(jobs[from]);
      order[k] = k;
      k = from;
    }
    jobs[k] = std::move(spare);
    order[k] = k;
  }
}

}  // namespace gcsim
