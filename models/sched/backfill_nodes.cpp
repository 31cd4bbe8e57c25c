#include "models/sched/backfill_nodes.hpp"

namespace gcsim::bf {

GCSIM_POPCNT_CLONES int NodeSet::count() const {
  int c = 0;
  for (uint64_t x : w_) c += std::popcount(x);
  return c;
}

}  // namespace gcsim::bf
