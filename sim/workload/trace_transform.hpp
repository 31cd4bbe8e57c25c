// Window and load scaling on any trace, for capacity what-ifs: keep the jobs
// submitted in [from, to), move t=0 to the window's start, and compress (X > 1) or
// stretch (X < 1) the arrival process by X while every job keeps its size, duration
// and recorded wait.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/core/diagnostics.hpp"
#include "sim/workload/job.hpp"

namespace gcsim {

struct TraceWindow {
  std::optional<SimTime> from;  // relative to the trace's t=0
  std::optional<SimTime> to;
  double scale_arrivals = 1.0;  // arrival rate x this; submit times / this
  [[nodiscard]] bool identity() const { return !from && !to && scale_arrivals == 1.0; }
};

/// `--from`/`--to` values: seconds with an optional s/m/h/d suffix ("3600", "7d"),
/// Slurm's `[D-]HH:MM:SS`, or an ISO-8601 date/time (needs the trace's unix_start,
/// so it is resolved later by resolve_window_point). Throws InputError at `loc`.
struct WindowPoint {
  std::optional<SimTime> relative;
  std::optional<int64_t> epoch;
};
[[nodiscard]] WindowPoint parse_window_point(const std::string& text, const SourceLoc& loc);
[[nodiscard]] SimTime resolve_window_point(const WindowPoint& p, const Trace& t, const SourceLoc& loc);

/// Applies the window; what it did goes to t.assumptions (and so to the manifest).
/// Job ids are kept (sacct then names the same jobs as the full trace).
void apply_window(Trace& t, const TraceWindow& w);

/// Jobs in submit order, ties in their present order. Sorts indices and moves each job
/// once (a Job is about 1 KB; std::stable_sort on them moved each ~log n times).
void stable_sort_by_submit(std::vector<Job>& jobs);

}  // namespace gcsim
