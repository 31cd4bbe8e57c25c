// Slurm's time formats: the `--time` forms sbatch accepts, the `[D-]HH:MM:SS` form
// sacct prints for Elapsed/Timelimit, and ISO-8601 timestamps (`2024-01-01T00:00:00`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/core/time.hpp"

namespace gcsim::slurm_time {

/// sbatch `--time`: "minutes", "minutes:seconds", "hours:minutes:seconds",
/// "days-hours", "days-hours:minutes", "days-hours:minutes:seconds"; also
/// "UNLIMITED"/"INFINITE" (-> SimTime::infinite()). std::nullopt when malformed.
[[nodiscard]] std::optional<SimTime> parse_time_limit(std::string_view s);

/// sacct Elapsed/Timelimit form: `MM:SS`, `HH:MM:SS`, `D-HH:MM:SS`, with optional
/// fractional seconds (`00:00:01.234`); `UNLIMITED`, `INFINITE` and `Partition_Limit`
/// map to infinite(). std::nullopt when malformed.
[[nodiscard]] std::optional<SimTime> parse_elapsed(std::string_view s);

/// Formats a duration as sacct does: `HH:MM:SS` below a day, `D-HH:MM:SS` above
/// (whole seconds, rounded down); infinite() prints `UNLIMITED`.
[[nodiscard]] std::string format_elapsed(SimTime d);

/// Formats a limit as sacct Timelimit does (same as format_elapsed).
[[nodiscard]] std::string format_timelimit(SimTime d);

/// ISO-8601 `YYYY-MM-DDTHH:MM:SS` for epoch seconds, in UTC.
[[nodiscard]] std::string format_iso(int64_t epoch_seconds);

/// Parses `YYYY-MM-DDTHH:MM:SS` (also with a space instead of `T`, and the date alone)
/// as UTC epoch seconds. `Unknown`/`None` give std::nullopt.
[[nodiscard]] std::optional<int64_t> parse_iso(std::string_view s);

}  // namespace gcsim::slurm_time
