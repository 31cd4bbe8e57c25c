// Parses an sbatch option string (`--nodes=2 -n 16 --gres=gpu:a100:2 -t 1:00:00`)
// exactly as sbatch reads its command line: long options with `=` or a separate
// value, short options with attached or separate values, quoting as a POSIX shell.
#pragma once

#include <string>
#include <string_view>

#include "sim/core/diagnostics.hpp"
#include "sim/workload/job.hpp"

namespace gcsim {

/// Splits like a POSIX shell (single quotes, double quotes, backslash escapes).
/// On an unterminated quote returns false and sets `error`.
bool shell_split(std::string_view s, std::vector<std::string>& out, std::string* error);

/// Fills `req` from `args`. Each unknown or malformed option becomes an error in
/// `diags` at `loc` (the column is advanced to the offending option's offset within
/// `args` when loc.col > 0). Returns true when no error was added.
bool parse_sbatch_options(std::string_view args, const SourceLoc& loc, JobRequest& req,
                          Diagnostics& diags);

/// Memory size as sbatch reads `--mem`: number with optional K/M/G/T suffix
/// (default M), result in MB (Slurm's MB = MiB). std::nullopt when malformed.
[[nodiscard]] std::optional<int64_t> parse_slurm_mem_mb(std::string_view s);

/// `[name:][type:]count` for --gres (name required) or `[type:]count` for --gpus*.
[[nodiscard]] std::optional<GresRequest> parse_gres_spec(std::string_view s, bool name_required);

}  // namespace gcsim
