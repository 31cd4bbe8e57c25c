// bestfit - topology-aware best fit, a research policy written against the Policy seam
// alone. Queue order, the head job's reservation and backfill are EASY's (easy_pass);
// what changes is where each job it starts goes:
//  - a one-node GPU job goes where its GPUs sit tightest: under one PCIe switch, else in
//    one NVLink island or NUMA domain, else anywhere in the node; among equally tight
//    choices, the best fit: fewest free GPUs left on the node, then under its leaf switch,
//    then in the island/NUMA domain and under the PCIe switch it uses, so whole nodes,
//    leaves, sockets and switches stay free for the jobs that need them;
//  - a multi-node job goes under one leaf switch when some leaf can hold it (fat-tree or
//    topology/tree), the leaf with the fewest free GPUs (CPU jobs: cores) left.
// Node Weight comes first, as in Slurm. Cores, memory and GPU indices stay the
// allocator's: bestfit only asks it, without committing, what it would pick on one
// candidate node (or leaf) and with which of the node's GPUs visible (the others shown
// busy in a scratch copy of the state), and keeps the best answer. One-node CPU-only and
// --exclusive jobs get the allocator's own choice.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "sim/sched/policy.hpp"

namespace gcsim {

/// How tightly GPUs `gpus` of one node of template `t` sit: 0 = under one PCIe switch
/// (the top switch of their bridge chains) or a single GPU, 1 = in one NVLink island
/// (GPUs joined by NVLink, directly or through NVSwitch) or one NUMA domain, 2 = spread.
[[nodiscard]] int gpu_spread_level(const NodeTemplate& t, const std::vector<int>& gpus);

class BestFitPolicy final : public Policy {
 public:
  BestFitPolicy();
  ~BestFitPolicy() override;
  [[nodiscard]] std::string name() const override { return "bestfit"; }
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> parameters() const override;
  void schedule(SchedContext& ctx) override;
  /// Where bestfit would start job `j` on `state` now, std::nullopt when it does not fit
  /// (exactly when the allocator finds nothing over the job's node order). Pure.
  [[nodiscard]] std::optional<Allocation> place(const SchedContext& ctx, int j, const ClusterState& state) const;

 private:
  struct Leaves;
  [[nodiscard]] const Leaves& leaves(const Cluster& c) const;
  [[nodiscard]] std::optional<Allocation> place_one_node(const SchedContext& ctx, int j, const ClusterState& state,
                                                         Allocation fallback) const;
  [[nodiscard]] std::optional<Allocation> place_multi_node(const SchedContext& ctx, int j, const ClusterState& state,
                                                           Allocation fallback) const;
  mutable std::unique_ptr<Leaves> leaves_;  // leaf switch of each node, built on first use per cluster
};

}  // namespace gcsim
