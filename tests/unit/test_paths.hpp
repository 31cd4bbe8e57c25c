// Paths the tests share: the source tree (fixtures) and the built gcsim binary.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

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

}  // namespace gcsim::test
