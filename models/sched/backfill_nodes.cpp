#include "models/sched/backfill_nodes.hpp"

namespace gcsim::bf {

namespace {

// The clones stay inside this file: a target_clones definition behind a plain
// declaration in another file does not link under clang.
GCSIM_POPCNT_CLONES int popcount_words(const uint64_t* w, size_t n) {
  int c = 0;
  for (size_t i = 0; i < n; ++i) c += std::popcount(w[i]);
  return c;
}

GCSIM_POPCNT_CLONES bool popcount_reaches(const uint64_t* w, size_t n, int k) {
  int c = 0;
  for (size_t i = 0; i < n && c < k; ++i) c += std::popcount(w[i]);
  return c >= k;
}

}  // namespace

int NodeSet::count() const { return popcount_words(w_.data(), w_.size()); }
bool NodeSet::has_at_least(int k) const { return popcount_reaches(w_.data(), w_.size(), k); }

}  // namespace gcsim::bf
