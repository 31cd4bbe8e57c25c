// One step of the random walks placement tests take over a ClusterState: hold the
// allocation just made (all but one step in `release_one_in`), else release one held
// earlier, chosen at random.
#pragma once

#include <optional>
#include <random>
#include <vector>

#include "sim/placement/node_state.hpp"

namespace gcsim::test {

/// Returns true when `a` was held (then moved into `held`). Calls changed(allocation)
/// after each allocate or release (bounds kept current by refresh()).
template <class F>
bool hold_or_release(ClusterState& state, std::vector<Allocation>& held, std::optional<Allocation>& a,
                     std::mt19937_64& rng, unsigned release_one_in, F&& changed) {
  if (a && rng() % release_one_in != 0) {
    state.allocate(*a);
    changed(*a);
    held.push_back(std::move(*a));
    return true;
  }
  if (!held.empty()) {
    const size_t k = rng() % held.size();
    state.release(held[k]);
    changed(held[k]);
    held.erase(held.begin() + static_cast<long>(k));
  }
  return false;
}

inline bool hold_or_release(ClusterState& state, std::vector<Allocation>& held, std::optional<Allocation>& a,
                            std::mt19937_64& rng, unsigned release_one_in) {
  return hold_or_release(state, held, a, rng, release_one_in, [](const Allocation&) {});
}

}  // namespace gcsim::test
