// Variants for `gcsim compare` and `gcsim sweep`: "NAME:key=value,key=value" changes a
// copy of the base RunSpec. Keys:
//   policy=NAME  binding=MODE  seed=N  runtime=none|step  profiles=FILE  cluster=FILE
//   reference=ideal|as-recorded  contention=on|off  scale=X (arrival rate x X)
//   nodes=N  nodes+=N  nodes-=N  nic=RATE (every NIC, e.g. 400Gbps)
//   any other key: a slurm policy SchedulerParameters/priority option (bf_window=2880),
//   accepted only when the variant's policy is slurm.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/metrics/compare.hpp"
#include "tools/gcsim/run_core.hpp"

namespace gcsim {

struct Variant {
  std::string name;
  std::vector<std::pair<std::string, std::string>> settings;  // as given, in order
  std::vector<SourceLoc> setting_locs;  // where each setting was written; empty: the `where` given
  [[nodiscard]] std::string settings_text() const;            // "binding=unbound,scale=1.5"
};

/// Parses "NAME:k=v,..." (a bare "NAME" is the base run). Errors go to `d` at `where`.
[[nodiscard]] Variant parse_variant(const std::string& text, Diagnostics& d, const SourceLoc& where);

/// The base spec with the variant's settings applied; errors go to `d`.
[[nodiscard]] RunSpec apply_variant(const RunSpec& base, const Variant& v, Diagnostics& d, const SourceLoc& where);

/// Runs variants 0..n-1 on `threads` workers (each takes the next index): `prepare(i)`
/// builds variant i's PreparedRun (called on the worker, so big sweeps do not hold every
/// copy of the trace at once), execute_run writes `dir_of(i)`, and the metrics come back
/// in index order. A variant that throws stops nothing else; its error is in `errors[i]`.
struct VariantResults {
  std::vector<std::optional<VariantMetrics>> metrics;
  std::vector<std::string> errors;
  bool all_completed = true;
};
[[nodiscard]] VariantResults run_variants(size_t n, int threads,
                                          const std::function<std::unique_ptr<PreparedRun>(size_t)>& prepare,
                                          const std::function<std::string(size_t)>& dir_of,
                                          const std::function<std::string(size_t)>& name_of,
                                          const std::function<std::string(size_t)>& settings_of, bool progress_bar,
                                          const std::string& progress_unit);

/// Worker threads for `n` variants: `asked` when > 0, else one per variant up to the cores.
[[nodiscard]] int worker_threads(int asked, size_t n);

/// The directory-safe check for variant and grid-point names.
[[nodiscard]] bool valid_variant_name(const std::string& name);

}  // namespace gcsim
