// Option checks with plain messages (CLI11's own print ranges up to 1.8e308), so every
// bad option reads `<command line>: error: --opt: must be ...` and exits 2.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>

namespace gcsim {

/// A whole number >= `min` (a leading '-' is refused before CLI11 converts to unsigned).
inline CLI::Validator whole_number_at_least(int64_t min) {
  return CLI::Validator(
      [min](std::string& s) -> std::string {
        int64_t v = 0;
        const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() || p != s.data() + s.size() || v < min)
          return "'" + s + "': expected a whole number of at least " + std::to_string(min);
        return "";
      },
      min > 0 ? "POSITIVE" : "NON-NEGATIVE");
}

/// A finite number > 0.
inline CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        double v = 0;
        const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v) || v <= 0)
          return "'" + s + "': expected a positive number";
        return "";
      },
      "POSITIVE");
}

}  // namespace gcsim
