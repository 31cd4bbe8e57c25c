#include "models/sched/backfill_nodes.hpp"

#include <limits>

namespace gcsim::bf {

namespace {

// The clones stay inside this file: a target_clones definition behind a plain
// declaration in another file does not link under clang.
// Set bits of w[0, n), counted until they reach `stop` (the count, or a value >= stop).
GCSIM_POPCNT_CLONES int popcount_words(const uint64_t* w, size_t n, int stop) {
  int c = 0;
  for (size_t i = 0; i < n && c < stop; ++i) c += std::popcount(w[i]);
  return c;
}

}  // namespace

int NodeSet::count() const { return popcount_words(w_.data(), w_.size(), std::numeric_limits<int>::max()); }
bool NodeSet::has_at_least(int k) const { return popcount_words(w_.data(), w_.size(), k) >= k; }

}  // namespace gcsim::bf
