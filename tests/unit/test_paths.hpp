// Paths the tests share: the source tree (fixtures) and the built gcsim binary.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <sstream>
#include <string>

#include "sim/core/diagnostics.hpp"

namespace gcsim::test {

inline std::string src(const std::string& rel) { return std::string(GCSIM_SOURCE_DIR) + "/" + rel; }
/// A file under the project's curated ../shared/data (absent on a fresh clone: callers
/// check shared_exists() and skip with a WARN).
inline std::string shared_data(const std::string& rel) {
  return std::string(GCSIM_SOURCE_DIR) + "/../shared/data/" + rel;
}
inline bool shared_exists(const std::string& rel) { return std::ifstream(shared_data(rel)).good(); }
inline std::string gcsim_binary() { return GCSIM_BINARY; }
inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// What a shell command printed on stdout and its exit status (-1: killed by a signal).
struct Proc {
  int status = -1;
  std::string output;
};
inline Proc run_shell(const std::string& cmd) {
  Proc p;
  FILE* f = ::popen(cmd.c_str(), "r");
  if (!f) throw std::runtime_error("popen failed: " + cmd);
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) p.output.append(buf.data(), n);
  const int st = ::pclose(f);
  p.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return p;
}

/// The first error of an InputError as `file:line:col: error: message`.
inline std::string first_error(const InputError& e) {
  for (const auto& d : e.diagnostics().all())
    if (d.severity == Severity::kError) return d.str();
  return "";
}

/// The first error `f` throws, or "(no error)".
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return first_error(e);
  }
  return "(no error)";
}

}  // namespace gcsim::test
