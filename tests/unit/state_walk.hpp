// One step of the random walks placement tests take over a ClusterState: hold the
// allocation just made (all but one step in `release_one_in`), else release one held
// earlier, chosen at random.
#pragma once

#include <optional>
#include <random>
#include <vector>

#include "sim/placement/node_state.hpp"

namespace gcsim::test {

/// Returns true when `a` was held (then moved into `held`).
inline bool hold_or_release(ClusterState& state, std::vector<Allocation>& held, std::optional<Allocation>& a,
                            std::mt19937_64& rng, unsigned release_one_in) {
  if (a && rng() % release_one_in != 0) {
    state.allocate(*a);
    held.push_back(std::move(*a));
    return true;
  }
  if (!held.empty()) {
    const size_t k = rng() % held.size();
    state.release(held[k]);
    held.erase(held.begin() + static_cast<long>(k));
  }
  return false;
}

}  // namespace gcsim::test
