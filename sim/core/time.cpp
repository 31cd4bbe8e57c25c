#include "sim/core/time.hpp"

#include <cmath>

namespace gcsim {

SimTime SimTime::from_seconds_ceil(double s) {
  if (!(s > 0.0)) return SimTime(0);
  const double us = std::ceil(s * static_cast<double>(kPerSecond) - 1e-6);
  if (us >= static_cast<double>(infinite().v_)) return infinite();
  return SimTime(static_cast<int64_t>(us));
}

}  // namespace gcsim
