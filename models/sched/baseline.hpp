// Baseline policies over real per-node resources:
//  fcfs - strict first-come first-served: the first job that does not fit blocks the queue.
//  easy - EASY backfill (Lifka 1995; Mu'alem & Feitelson 2001): the head job gets a
//         reservation at the earliest time enough running jobs will have ended (by their
//         time limits); later jobs start now only if they do not delay that reservation.
//  sjf  - shortest-job-first: the queue ordered by time limit (the estimate users give;
//         the kernel's order breaks ties), then EASY backfill over that order. A research
//         policy written against the same Policy interface, touching no kernel code.
//  replay - no scheduling: every job starts at its recorded start time (bench/e2e's
//         engine floor, and a check that a trace fits the cluster it is run on).
#pragma once

#include <functional>

#include "sim/sched/policy.hpp"

namespace gcsim {

class FcfsPolicy final : public Policy {
 public:
  [[nodiscard]] std::string name() const override { return "fcfs"; }
  void schedule(SchedContext& ctx) override;
};

class EasyPolicy final : public Policy {
 public:
  [[nodiscard]] std::string name() const override { return "easy"; }
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> parameters() const override {
    return {{"reservations", "1"}, {"planning_time", "time_limit"}};
  }
  void schedule(SchedContext& ctx) override;
};

class SjfPolicy final : public Policy {
 public:
  [[nodiscard]] std::string name() const override { return "sjf"; }
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> parameters() const override {
    return {{"order", "time_limit"}, {"backfill", "easy"}};
  }
  void schedule(SchedContext& ctx) override;
};

/// Starts each job at its recorded start (the trace's Start; a job without one when it
/// becomes eligible), or when it becomes eligible if that is later, on the allocator's
/// choice over its node order. No queue is searched: a job that does not fit then
/// (the cluster or the node choice differ from the real ones) is late, and as jobs end
/// the late ones start first-fit in the order they fell due. The cost of a run is then
/// the engine's alone: events, placement, accounting and output.
class ReplayPolicy final : public Policy {
 public:
  [[nodiscard]] std::string name() const override { return "replay"; }
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> parameters() const override {
    return {{"start", "recorded"}, {"late_jobs", "first_fit"}};
  }
  [[nodiscard]] bool pass_on_change() const override { return false; }
  void schedule(SchedContext& ctx) override;
  void on_queued(SchedContext& ctx, int j) override;
  void on_ended(SchedContext& ctx, int j) override;
  void on_wake(SchedContext& ctx, uint64_t tag) override;

 private:
  /// Starts `j` where the allocator places it now; false when it does not fit.
  static bool try_start(SchedContext& ctx, int j);
  std::vector<int> late_;  // due but not fitting, in the order they fell due
};

/// Where a pass starts job `j` on `state`, or std::nullopt when it does not fit. It must fit
/// exactly when the allocator over the job's node order fits (the pass checks reservations
/// with the allocator); only the resources it picks may differ (bestfit).
using PlaceFn = std::function<std::optional<Allocation>(const SchedContext& ctx, int j, const ClusterState& state)>;

/// One EASY pass over `queue` (pending jobs in the order to serve them): start from the
/// front while jobs fit, reserve for the first that does not, backfill the rest around it.
/// Jobs it starts are placed by `place`; without one, by the allocator over the job's node order.
void easy_pass(SchedContext& ctx, const std::vector<int>& queue, const PlaceFn& place = {});

}  // namespace gcsim
