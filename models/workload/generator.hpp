// A synthetic GPU workload generator: a statistical model of a job trace (arrivals
// with a diurnal cycle, GPU-count mix, durations by GPU size class, users and
// accounts, time-limit rule, workload profiles), fitted from a real trace or read
// from YAML, and a seeded generator that turns the model into a Trace.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/time.hpp"
#include "sim/workload/job.hpp"

namespace gcsim {

/// One exact GPU count of the mix and its relative weight (weights need not sum to 1).
struct GpuShare {
  int64_t gpus = 0;
  double weight = 0;
  bool operator==(const GpuShare&) const = default;
};

/// Durations of jobs whose GPU count falls into one size class: those with more GPUs
/// than the previous class's `max_gpus` and at most this one's (0 = no upper bound).
/// `mu`/`sigma` are the log-normal of ln(seconds), the parametric form for hand-written
/// models and for classes fitted from few jobs. A class fitted from enough jobs also
/// keeps its empirical quantile function: `ln_quantiles[i]` is the ln(seconds) at
/// probability i/(size-1), sampled by linear interpolation in ln space; when present
/// it is used instead of the log-normal (one log-normal does not reproduce quantiles).
struct DurationClass {
  int64_t max_gpus = 0;
  double mu = 0;
  double sigma = 0;
  int64_t fitted_jobs = 0;  // jobs the class was fitted from; 0 = written by hand
  std::vector<double> ln_quantiles;
  bool operator==(const DurationClass&) const = default;
};

struct GenUser {
  std::string name;
  std::string account;
  double weight = 1;
  bool operator==(const GenUser&) const = default;
};

/// Workload profiles are a future feature (what a job does with its GPUs). For now a
/// job only carries the profile's name, chosen by GPU count like a size class: the
/// first profile whose `max_gpus` (0 = no bound) is at least the job's GPUs.
struct GenProfile {
  std::string name;
  int64_t max_gpus = 0;
  bool operator==(const GenProfile&) const = default;
};

/// The model. Arrivals are a Poisson process whose rate in the hour starting at
/// absolute time T is rate_per_hour * hour_weight[hour of T] * weekday_weight[day of T],
/// each weight vector divided by its mean (so rate_per_hour is the long-run mean).
struct GenModel {
  // Provenance of a fitted model; empty for one written by hand.
  std::string source_path;
  std::string source_sha256;
  std::string source_format;
  int64_t source_jobs = 0;
  /// Absolute time (UTC epoch seconds, a whole hour) of generated t=0; it fixes which
  /// hour and weekday the weights apply to. Absent: t=0 is read as epoch 0
  /// (1970-01-01 00:00 UTC, a Thursday) and generated traces have no unix_start.
  std::optional<int64_t> unix_start;
  double rate_per_hour = 1;
  std::array<double, 24> hour_weights{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  std::optional<std::array<double, 7>> weekday_weights;  // Monday first; absent = flat
  /// Largest GPU count of one node: a job of G GPUs asks for the fewest nodes N with
  /// G divisible by N and G/N <= gpus_per_node (--nodes=N --gpus-per-node=G/N).
  int64_t gpus_per_node = 8;
  std::vector<GpuShare> gpu_mix;
  std::vector<DurationClass> durations;  // ascending max_gpus; the last may be unbounded
  std::vector<GenUser> users;            // empty = jobs have no user or account
  /// 0 = jobs ask for no time limit; else limit = duration x factor rounded up to minutes.
  double time_limit_factor = 0;
  std::vector<GenProfile> profiles;      // empty = default_profiles(gpus_per_node)
  bool operator==(const GenModel&) const = default;
};

/// "1gpu" (1 GPU), "2-8gpu" (up to one node of gpus_per_node), "multi-node" (more).
[[nodiscard]] std::vector<GenProfile> default_profiles(int64_t gpus_per_node);

/// Fits a model to a trace as read by any reader. Diurnal and weekday shapes come from
/// submit times at Trace::unix_start when known, else relative to t=0 (noted). GPUs are
/// counted from the job request (--gpus, --gpus-per-node, --gres gpu, --gpus-per-task,
/// else the recorded count); jobs without GPUs are left out (noted). What the fit had
/// to assume is appended to `notes`. Throws InputError when nothing can be fitted.
[[nodiscard]] GenModel fit_generator(const Trace& t, std::vector<std::string>& notes);

/// Reads a model from YAML (the schema generator_yaml writes; see generator.cpp).
/// Errors are `file:line:col: error: ...`, collected and thrown as InputError;
/// unknown keys are errors.
[[nodiscard]] GenModel load_generator_yaml(const std::string& path);
[[nodiscard]] GenModel parse_generator_yaml(const std::string& text, const std::string& path);
/// The model as YAML; load_generator_yaml of it gives an equal model (doubles as %.17g).
[[nodiscard]] std::string generator_yaml(const GenModel& m);

/// How much to generate: `jobs` jobs, or every arrival before `span`; with both, stops at
/// whichever comes first; at least one must be set. scale_arrivals multiplies the rate.
struct GenOptions {
  uint64_t seed = 1;
  int64_t jobs = 0;
  SimTime span{};
  double scale_arrivals = 1.0;
};

/// A deterministic trace for the seed: jobs sorted by submit, ids 1..n, names
/// "gen-<n>:<profile>", requests shaped like the Philly reader's (--nodes=N
/// --gpus-per-node=G/N --ntasks=G), format "generated", provenance in assumptions.
/// Each aspect draws from its own stream ("gen.arrivals", "gen.size", "gen.duration",
/// "gen.user"), so changing one part of the model does not shift the others' draws.
/// Throws std::invalid_argument for an inconsistent model or options.
[[nodiscard]] Trace generate_trace(const GenModel& m, const GenOptions& o);

/// Lines for an output file's header comment: source trace and its SHA-256 when fitted,
/// seed, job count or span, and a summary of the model.
[[nodiscard]] std::vector<std::string> generator_provenance(const GenModel& m, const GenOptions& o);

/// The profile part of a generated job's name ("gen-12:2-8gpu" -> "2-8gpu"); "" if none.
[[nodiscard]] std::string_view generated_profile(const Job& j);

}  // namespace gcsim
