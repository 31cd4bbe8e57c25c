// The one units parser: sizes (`512GiB`, `80GB`), bandwidths (`200Gbps`, `25GB/s`)
// and durations (`1.5us`, `30s`, `2h`) as they appear in YAML values.
// Each returns std::nullopt on malformed input; callers turn that into a diagnostic.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/core/time.hpp"

namespace gcsim::units {

/// Bytes. Decimal (`kB`, `MB`, `GB`, `TB`, powers of 1000) and binary (`KiB`, `MiB`,
/// `GiB`, `TiB`, powers of 1024) suffixes, plus `B`; a bare number is bytes.
/// Fractions are allowed (`1.5GiB`); the result rounds to the nearest byte.
[[nodiscard]] std::optional<int64_t> parse_bytes(std::string_view s);

/// Bandwidth in bits per second. Suffixes: `bps`, `Kbps`, `Mbps`, `Gbps`, `Tbps` (bits,
/// decimal) and `B/s`, `KB/s`, `MB/s`, `GB/s`, `TB/s`, `KiB/s`, `MiB/s`, `GiB/s` (bytes).
/// A bare number is rejected: bandwidth always needs its unit.
[[nodiscard]] std::optional<double> parse_bandwidth_bps(std::string_view s);

/// Duration: `ns`, `us`, `ms`, `s`, `min`, `h`, `d` suffixes; a bare number is seconds.
/// Rounds up to the next microsecond (SimTime::from_seconds_ceil).
[[nodiscard]] std::optional<SimTime> parse_duration(std::string_view s);

/// Human-readable forms used by writers: bytes as Slurm's MiB count (`RealMemory`).
[[nodiscard]] int64_t bytes_to_mib(int64_t bytes);

}  // namespace gcsim::units
