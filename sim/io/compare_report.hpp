// The files `gcsim compare` writes beside its variants' run directories: report.html
// (one self-contained page: tables and inline SVG charts, no script, no network),
// report.md and CSV tables with the same numbers. Deterministic: no wall-clock times
// or paths of the machine in them, so the same runs give the same bytes.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/metrics/compare.hpp"

namespace gcsim {

struct CompareReportInput {
  std::string cluster;  // e.g. "configs/dgx-a100-pod.yaml: dgx-a100-pod, 32 nodes, 4096 CPUs, 256 GPUs"
  std::string trace;    // e.g. "traces/philly-d07-d21.csv: 373 jobs"
  std::vector<VariantMetrics> variants;
  std::vector<Difference> differences;
  int resamples = 0;
  uint64_t seed = 0;
};

/// The chart ids of report.html, in page order (each a <figure class="chart" id="fig-...">).
[[nodiscard]] const std::vector<std::string>& compare_report_charts();

/// (file name, contents) for report.html, report.md, headline.csv, differences.csv,
/// by_gpus.csv, by_partition.csv and timeseries.csv.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> format_compare_report(const CompareReportInput& in);

}  // namespace gcsim
