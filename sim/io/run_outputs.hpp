// What a run writes into its run directory: jobs.sacct (sacct --parsable2 with
// scontrol-style CPU_IDs/GRES_IDX), summary.json and manifest.json. Each file is
// written to a temporary name and renamed, so a reader never sees half a file; the
// manifest says whether the run completed.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "sim/metrics/summary.hpp"
#include "sim/sched/simulation.hpp"

namespace gcsim {

/// The sacct columns gcsim writes, in order.
[[nodiscard]] const std::vector<std::string>& sacct_columns();

/// jobs.sacct: a header line, then one line per job that ran, in JobID order.
[[nodiscard]] std::string format_sacct(const Cluster& cluster, const Trace& trace, const std::vector<JobOutcome>& out);
/// The same text written row by row (a million-job run never holds all of it).
void write_sacct(std::ostream& os, const Cluster& cluster, const Trace& trace, const std::vector<JobOutcome>& out);

[[nodiscard]] std::string format_summary_json(const Summary& s);

struct InputDigest {
  std::string role;  // "cluster", "trace"
  std::string path;
  std::string sha256;
};

struct ManifestInfo {
  std::vector<std::string> argv;
  std::vector<InputDigest> inputs;
  uint64_t seed = 0;
  std::string policy;
  std::vector<std::pair<std::string, std::string>> policy_params;
  std::string allocator;
  SimulationResult result;
  bool completed = false;
  double wall_seconds = 0;
  int64_t peak_rss_kib = 0;
  std::vector<std::string> assumptions;
};

[[nodiscard]] std::string gcsim_version();
[[nodiscard]] std::string gcsim_git_sha();
[[nodiscard]] std::string format_manifest_json(const ManifestInfo& m);

/// Creates `dir` (and parents) if needed. Throws std::runtime_error on failure.
void ensure_directory(const std::string& dir);
/// Writes `content` to dir/name through a temporary file and rename(2).
void write_file_atomic(const std::string& dir, const std::string& name, const std::string& content);
/// The same, with the content produced by `write` on the temporary file's stream.
void write_file_atomic(const std::string& dir, const std::string& name,
                       const std::function<void(std::ostream&)>& write);

/// A run directory published whole. Files are written into a hidden sibling staging
/// directory (`.NAME.partial-PID`); publish() swaps it into place with one
/// renameat2(RENAME_EXCHANGE), so a reader sees the old run or the new one, never a mix,
/// then deletes the old one. An existing `final_dir` must be empty or hold a
/// manifest.json (a gcsim output): gcsim never deletes a directory it did not write, and
/// refuses anything else with InputError before writing. Destroyed unpublished (an
/// exception, a crash is left behind as `.partial-PID`), it removes the staging.
class StagedDir {
 public:
  explicit StagedDir(std::string final_dir);
  ~StagedDir();
  StagedDir(const StagedDir&) = delete;
  StagedDir& operator=(const StagedDir&) = delete;
  /// Where to write until publish().
  [[nodiscard]] const std::string& path() const { return staging_; }
  [[nodiscard]] const std::string& final_path() const { return final_; }
  void publish();

 private:
  std::string final_;
  std::string staging_;
  bool published_ = false;
};

/// Peak resident set size of this process in KiB (VmHWM), 0 if unknown.
[[nodiscard]] int64_t peak_rss_kib();

}  // namespace gcsim
