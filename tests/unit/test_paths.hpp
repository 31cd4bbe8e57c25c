// Paths the tests share: the source tree (fixtures) and the built gcsim binary.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace gcsim::test {

inline std::string src(const std::string& rel) { return std::string(GCSIM_SOURCE_DIR) + "/" + rel; }
inline std::string gcsim_binary() { return GCSIM_BINARY; }
inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace gcsim::test
