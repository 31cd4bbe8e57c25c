// Shared by the libFuzzer harnesses: what a reader may do with arbitrary bytes.
// Throwing InputError is the expected answer to bad input, and it must carry at least
// one error located in a named file. Any other exception escapes and libFuzzer reports
// it (a reader that throws std::out_of_range would make gcsim exit 1 with no location).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "sim/core/diagnostics.hpp"
#include "sim/core/hostlist.hpp"

namespace gcsim::fuzz {

// Fuzzing explores structure, not scale: clusters and host lists are capped at 20,000
// names (a million in gcsim itself). A seed naming a million valid hosts before its
// error took 35-57 s to load under AddressSanitizer, past libFuzzer's timeout.
inline const bool kHostCapSet = (hostlist::set_max_hosts(20'000), true);

inline std::string bytes(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Aborts (a libFuzzer finding) when an error lacks a file or a message.
inline void check_located(const Diagnostics& d) {
  bool any_error = false;
  for (const Diagnostic& x : d.all()) {
    if (x.severity != Severity::kError) continue;
    any_error = true;
    if (x.loc.file.empty() || x.message.empty() || x.loc.line < 0 || x.loc.col < 0) {
      std::fprintf(stderr, "unlocated diagnostic: %s\n", x.str().c_str());
      std::abort();
    }
  }
  if (!any_error) {
    std::fprintf(stderr, "InputError without an error diagnostic\n");
    std::abort();
  }
}

/// Runs `f`; InputError is fine if it is located, everything else escapes.
template <class F>
void run_reader(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    check_located(e.diagnostics());
  }
}

/// A scratch directory of this process (under TMPDIR, else /tmp), made once.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    const char* t = std::getenv("TMPDIR");
    std::filesystem::path p = std::filesystem::path(t && *t ? t : "/tmp") /
                              ("gcsim-fuzz-" + std::to_string(static_cast<long>(::getpid())));
    std::filesystem::create_directories(p);
    return p;
  }();
  return dir;
}

/// Writes `content` to `name` in the scratch directory; returns its path.
inline std::string scratch_file(const std::string& name, std::string_view content) {
  const std::filesystem::path p = scratch_dir() / name;
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  return p.string();
}

/// Splits `s` at lines that are exactly `%%` (how multi-file corpora are stored).
inline std::vector<std::string_view> split_files(std::string_view s, size_t max_parts) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (parts.size() + 1 < max_parts) {
    const size_t at = s.find("\n%%\n", start);
    if (at == std::string_view::npos) break;
    parts.push_back(s.substr(start, at + 1 - start));
    start = at + 4;
  }
  parts.push_back(s.substr(start));
  return parts;
}

}  // namespace gcsim::fuzz
