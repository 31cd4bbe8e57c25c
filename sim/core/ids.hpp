// Strong id types: a JobId is never mixed up with a NodeId.
#pragma once

#include <compare>
#include <cstdint>

namespace gcsim {

template <typename Tag>
struct StrongId {
  int64_t value = -1;
  constexpr StrongId() = default;
  constexpr explicit StrongId(int64_t v) : value(v) {}
  [[nodiscard]] constexpr bool valid() const { return value >= 0; }
  constexpr auto operator<=>(const StrongId&) const = default;
};

using JobId = StrongId<struct JobIdTag>;    // Slurm job id (1-based, as sacct prints it)
using NodeId = StrongId<struct NodeIdTag>;  // index into Cluster::nodes

}  // namespace gcsim
