// Option checks with plain messages (CLI11's own print ranges up to 1.8e308), so every
// bad option reads `<command line>: error: --opt: must be ...` and exits 2.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "sim/core/input_file.hpp"

namespace gcsim {

/// A whole number >= `min` (a leading '-' is refused before CLI11 converts to unsigned).
inline CLI::Validator whole_number_at_least(int64_t min) {
  return CLI::Validator(
      [min](std::string& s) -> std::string {
        const auto v = parse_integer(s);
        if (!v || *v < min)
          return "'" + s + "': expected a whole number of at least " + std::to_string(min);
        return "";
      },
      min > 0 ? "POSITIVE" : "NON-NEGATIVE");
}

/// A finite number > 0.
inline CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const auto v = parse_non_negative_number(s);
        if (!v || *v <= 0)
          return "'" + s + "': expected a positive number";
        return "";
      },
      "POSITIVE");
}

}  // namespace gcsim
