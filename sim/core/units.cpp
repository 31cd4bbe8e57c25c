#include "sim/core/units.hpp"

#include <charconv>
#include <cmath>
#include <limits>

namespace gcsim::units {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// A value split into its number and its unit: `12.5 GiB` -> (12.5, "GiB").
/// Grammar: digits [. digits] [e|E [+|-] digits], then at most one space, then the unit
/// (empty when no space follows). No sign, no leading/trailing whitespace, no nan/inf.
struct Quantity {
  double value = 0;
  std::string_view unit;
};

std::optional<Quantity> split_quantity(std::string_view s) {
  size_t i = 0;
  size_t int_digits = 0, frac_digits = 0;
  while (i < s.size() && is_digit(s[i])) ++i, ++int_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i, ++frac_digits;
  }
  if (int_digits + frac_digits == 0) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    // Only an exponent if digits follow; otherwise the 'e' belongs to no unit we know.
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    size_t exp_digits = 0;
    while (j < s.size() && is_digit(s[j])) ++j, ++exp_digits;
    if (exp_digits == 0) return std::nullopt;
    i = j;
  }
  std::string_view number = s.substr(0, i);
  std::string_view rest = s.substr(i);
  if (!rest.empty() && rest.front() == ' ') {
    rest.remove_prefix(1);
    if (rest.empty() || rest.front() == ' ') return std::nullopt;  // "5 " or "5  GiB"
  }
  for (char c : rest)
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') return std::nullopt;
  Quantity q;
  const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), q.value);
  if (ec != std::errc() || ptr != number.data() + number.size()) return std::nullopt;
  if (!std::isfinite(q.value) || q.value < 0) return std::nullopt;
  q.unit = rest;
  return q;
}

struct UnitScale {
  std::string_view unit;
  double scale;
};

std::optional<double> scale_of(std::string_view unit, const UnitScale* table, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (table[i].unit == unit) return table[i].scale;
  return std::nullopt;
}

constexpr double kKi = 1024.0;
constexpr double kMi = kKi * 1024.0;
constexpr double kGi = kMi * 1024.0;
constexpr double kTi = kGi * 1024.0;
constexpr double kPi = kTi * 1024.0;

// Sizes. `kB` and `KB` are both 1000 bytes (people write either); binary units are
// spelled with `i`. Everything else is case-sensitive: `gb`, `Gb`, `gib` are rejected.
constexpr UnitScale kSizeUnits[] = {
    {"", 1},         {"B", 1},          {"kB", 1e3},      {"KB", 1e3},      {"MB", 1e6},
    {"GB", 1e9},     {"TB", 1e12},      {"PB", 1e15},     {"KiB", kKi},     {"MiB", kMi},
    {"GiB", kGi},    {"TiB", kTi},      {"PiB", kPi},
};

// Bandwidths, as bits per second. Bit rates are decimal (`Kbps` and `kbps` both 1000).
constexpr UnitScale kBandwidthUnits[] = {
    {"bps", 1},           {"Kbps", 1e3},        {"kbps", 1e3},        {"Mbps", 1e6},
    {"Gbps", 1e9},        {"Tbps", 1e12},       {"B/s", 8},           {"kB/s", 8e3},
    {"KB/s", 8e3},        {"MB/s", 8e6},        {"GB/s", 8e9},        {"TB/s", 8e12},
    {"KiB/s", 8 * kKi},   {"MiB/s", 8 * kMi},   {"GiB/s", 8 * kGi},   {"TiB/s", 8 * kTi},
};

// Durations, as seconds. A bare number is seconds.
constexpr UnitScale kDurationUnits[] = {
    {"", 1},     {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3},    {"s", 1},
    {"min", 60}, {"h", 3600},  {"d", 86400},
};

template <size_t N>
std::optional<double> parse_scaled(std::string_view s, const UnitScale (&table)[N]) {
  auto q = split_quantity(s);
  if (!q) return std::nullopt;
  // "5 " was rejected above; "5" with an empty unit is looked up as "".
  auto scale = scale_of(q->unit, table, N);
  if (!scale) return std::nullopt;
  const double v = q->value * *scale;
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

}  // namespace

std::optional<int64_t> parse_bytes(std::string_view s) {
  auto v = parse_scaled(s, kSizeUnits);
  if (!v) return std::nullopt;
  const double rounded = std::round(*v);
  // 2^63 is exactly representable; anything at or above it does not fit.
  if (rounded >= 9223372036854775808.0) return std::nullopt;
  return static_cast<int64_t>(rounded);
}

std::optional<double> parse_bandwidth_bps(std::string_view s) {
  auto q = split_quantity(s);
  if (!q || q->unit.empty()) return std::nullopt;  // bandwidth always needs its unit
  return parse_scaled(s, kBandwidthUnits);
}

std::optional<SimTime> parse_duration(std::string_view s) {
  auto v = parse_scaled(s, kDurationUnits);
  if (!v) return std::nullopt;
  return SimTime::from_seconds_ceil(*v);
}

int64_t bytes_to_mib(int64_t bytes) { return bytes / (1024 * 1024); }

}  // namespace gcsim::units
