// Calibration of the NCCL cost model from nccl-tests logs: the log reader, and a per-link-class
// least-squares fit of the two terms of t = L + S / B (a latency offset and a bandwidth
// efficiency, NcclTuning::link_calibration) against the model's own prediction of every row;
// `gcsim calibrate nccl` writes the result as a tuning file `--tuning` loads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/collective/nccl_model.hpp"
#include "models/collective/nccl_tuning.hpp"

namespace gcsim {

/// One result row of an nccl-tests table (out-of-place columns, in-place where printed).
struct NcclTestsRow {
  int line = 0;                  // 1-based line in the log
  int64_t size = 0;              // bytes (nccl-tests' `size`)
  int64_t count = 0;             // elements
  std::string type, redop;
  int root = -1;
  double time_us = 0, algbw = 0, busbw = 0;
  std::optional<int64_t> wrong;  // empty = N/A
  bool has_in_place = false;
  double in_place_time_us = 0, in_place_algbw = 0, in_place_busbw = 0;
};

/// What one nccl-tests run printed.
struct NcclTestsLog {
  std::string path;
  Collective collective = Collective::kAllReduce;
  int threads = 1;                  // `# nThread`
  int gpus_per_thread = 1;          // `nGpus` (nccl-tests -g)
  std::vector<std::string> devices; // one per `#  Rank` line, the GPU name after `[0x..]`
  std::optional<NcclAlgo> algo;     // "NCCL_ALGO set by environment to X" in NCCL INFO lines
  std::optional<NcclProto> proto;   // likewise NCCL_PROTO
  std::vector<NcclTestsRow> rows;
  /// Ranks of the communicator: the `#  Rank` lines (several processes print one log each
  /// only with MPI; the table is rank 0's).
  [[nodiscard]] int ranks() const { return static_cast<int>(devices.size()); }
};

/// Parses nccl-tests stdout. The collective comes from `collective` if given, else from a
/// `# Collective test starting: all_reduce_perf` line, else from the first `*_perf` word of a
/// non-row line (a pasted command line). Tolerates missing in-place columns, `N/A` in #wrong,
/// NCCL INFO/WARN lines and other text between rows. Throws InputError (`path:line:col`) on a
/// malformed header or row, no `#  Rank` lines, no rows, or no way to tell the collective.
[[nodiscard]] NcclTestsLog parse_nccl_tests_log(const std::string& text, const std::string& path,
                                                std::optional<Collective> collective = std::nullopt);
[[nodiscard]] NcclTestsLog load_nccl_tests_log(const std::string& path,
                                               std::optional<Collective> collective = std::nullopt);

/// The communicator a log ran on: its first ranks() GPUs of `cluster`, node by node, with
/// gpus_per_process = nGpus; `base` gives the rest (transport, CPU vendor). Throws InputError
/// when the cluster has fewer GPUs than the log has ranks.
[[nodiscard]] CommSpec nccl_tests_comm(const Cluster& cluster, const NcclTestsLog& log, const CommOptions& base = {});

/// One log and the communicator it ran on.
struct NcclCalibrationRun {
  const NcclTestsLog* log = nullptr;
  CommSpec spec;
};

struct NcclCalibrationRow {
  std::string where;   // path:line
  Collective collective = Collective::kAllReduce;
  int64_t bytes = 0;
  NcclLinkClass link_class = NcclLinkClass::kNvlink;
  std::string algo, proto;  // the model's choice
  double measured_us = 0, before_us = 0, after_us = 0;
  double latency_part_us = 0;  // L: NCCL's latency + launch, without calibration.links
  double bandwidth_part_us = 0;  // S / B: at bw_efficiency 1
};

struct NcclClassFit {
  NcclLinkClass link_class = NcclLinkClass::kNvlink;
  int rows = 0;
  NcclLinkCalibration before, after;
  double rms_before = 0, rms_after = 0;  // root mean square of the relative time error
};

struct NcclCalibration {
  NcclTuning tuning;                      // `base` with the fitted link_calibration
  std::vector<NcclCalibrationRow> rows;   // in input order
  std::vector<NcclClassFit> classes;      // classes with rows, in NcclLinkClass order
  double rms_before = 0, rms_after = 0;
};

/// Fits, per link class with rows, t_measured - L = a + b (S/B) by weighted linear least
/// squares (weights 1/t_measured, so the relative error is what is minimised; Eigen's
/// column-pivoting QR), where L and S/B are the model's latency and bandwidth parts of the row
/// with that class's terms at zero/one; the new terms are latency_us = a, bw_efficiency = 1/b.
/// Classes without rows keep `base`'s terms. Throws InputError when a class has fewer than two
/// rows of different sizes, or its fit gives b <= 0.
[[nodiscard]] NcclCalibration fit_nccl_calibration(const NcclTuning& base, const std::vector<NcclCalibrationRun>& runs);

/// The residual table: one line per row (measured, before, after, relative errors), the
/// per-class terms and RMS before/after, the overall RMS. Fixed formatting.
[[nodiscard]] std::string format_nccl_calibration(const NcclCalibration& cal);

/// `base_text` (a tuning YAML) with its `calibration.links` block replaced by the fitted
/// terms, preceded by `note` as a comment. Checked: the result parses to the fitted tuning's
/// terms, else std::logic_error.
[[nodiscard]] std::string nccl_calibration_yaml(const std::string& base_text, const std::string& base_path,
                                                const NcclCalibration& cal, const std::string& note);

}  // namespace gcsim
