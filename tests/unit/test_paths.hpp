// Paths the tests share: the source tree (fixtures) and the built gcsim binary.
#pragma once

#include <string>

namespace gcsim::test {

inline std::string src(const std::string& rel) { return std::string(GCSIM_SOURCE_DIR) + "/" + rel; }
inline std::string gcsim_binary() { return GCSIM_BINARY; }

}  // namespace gcsim::test
