// The policy seam. A policy reads a view of the queue, the running jobs and the
// free resources, and decides which jobs start now (and what it plans for the
// others), and, if it preempts, which running jobs stop and go back to the queue. It
// never sees the event queue: the kernel applies its decisions.
#pragma once

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/cluster/cluster.hpp"
#include "sim/core/time.hpp"
#include "sim/placement/allocator.hpp"
#include "sim/placement/job_shape.hpp"
#include "sim/placement/node_state.hpp"
#include "sim/workload/job.hpp"

namespace gcsim {

/// Which loop started a job (sacct `Flags`).
enum class StartedBy { kNone, kMain, kBackfill };

class SchedContext {
 public:
  virtual ~SchedContext() = default;
  [[nodiscard]] virtual SimTime now() const = 0;
  [[nodiscard]] virtual const Cluster& cluster() const = 0;
  [[nodiscard]] virtual const ClusterState& state() const = 0;
  /// Eligible pending jobs (indices into the trace) in queue order: submit, then id.
  [[nodiscard]] virtual const std::vector<int>& pending() const = 0;
  /// Running jobs, in ascending job index.
  [[nodiscard]] virtual std::vector<int> running() const = 0;
  [[nodiscard]] virtual const Job& job(int j) const = 0;
  [[nodiscard]] virtual const JobShape& shape(int j) const = 0;
  [[nodiscard]] virtual const std::vector<int>& node_order(int j) const = 0;
  /// What a running job holds (a job that ended may have none left here: its outcome
  /// keeps it packed).
  [[nodiscard]] virtual const Allocation& allocation(int j) const = 0;
  /// When a running job will end at the latest, as the scheduler knows it: start + limit.
  [[nodiscard]] virtual SimTime expected_end(int j) const = 0;
  /// Running jobs as (expected_end, job index), in that order (EASY's shadow search).
  /// The default sorts running(); a context may keep the list in order as jobs start
  /// and stop. Valid until the next start, preemption or end.
  [[nodiscard]] virtual const std::vector<std::pair<SimTime, int>>& running_by_end() const {
    by_end_.clear();
    for (int j : running()) by_end_.emplace_back(expected_end(j), j);
    std::sort(by_end_.begin(), by_end_.end());
    return by_end_;
  }
  /// A running job's cores and GPUs (allocation(j).cores() and .gpus(), which walk
  /// its nodes); a context may keep them from the start.
  [[nodiscard]] virtual std::pair<int64_t, int64_t> allocated_cores_gpus(int j) const {
    const Allocation& a = allocation(j);
    return {a.cores(), a.gpus()};
  }
  [[nodiscard]] virtual const Allocator& allocator() const = 0;
  /// Starts a pending job now on `a` (which must fit). Applied at once: later
  /// queries in the same pass see it. By value: a caller done with `a` moves it in.
  virtual void start(int j, Allocation a, StartedBy by) = 0;
  /// Records the start time a policy plans for a job (backfill reservations).
  virtual void reserve(int j, SimTime planned) = 0;
  /// Asks for Policy::on_wake(ctx, tag) at time `t` (>= now), in the schedule phase.
  /// Policies with their own timers (Slurm's main and backfill loops) use this.
  virtual void wake_at(SimTime t, uint64_t tag) = 0;
  /// When the job became eligible (entered the queue).
  [[nodiscard]] virtual SimTime eligible_time(int j) const = 0;
  /// When a running job started (a job resumed after a preemption: when it resumed).
  [[nodiscard]] virtual SimTime start_time(int j) const = 0;

  // Preemption. A policy may stop a running job and put it back in the queue with its
  // progress kept (a checkpoint and restore; Tiresias, Gandiva). Contexts that cannot
  // preempt keep these defaults.
  /// Stops running job `j` now: its resources are free at once (later queries in the same
  /// pass see them), it is pending again and may be start()ed again later, anywhere, in
  /// this pass or a later one; it rejoins pending() after the pass. It keeps its progress:
  /// a resumed job has its remaining work left (with a RuntimeModel, remaining reference
  /// work), plus `resume_cost` of extra work (restoring a checkpoint) charged when it
  /// starts again. Its time limit applies to its total run time over all its segments
  /// (restore time included); Start stays its first start, End its final end.
  virtual void preempt(int j, SimTime resume_cost) {
    (void)j;
    (void)resume_cost;
    throw std::logic_error("this scheduling context cannot preempt jobs");
  }
  /// Total time job `j` has run so far over all its segments (0 if it never started).
  [[nodiscard]] virtual SimTime run_time(int j) const {
    const auto r = running();
    return std::find(r.begin(), r.end(), j) != r.end() ? now() - start_time(j) : SimTime{};
  }

 private:
  mutable std::vector<std::pair<SimTime, int>> by_end_;  // running_by_end()'s default
};

class Policy {
 public:
  virtual ~Policy() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  /// Parameters as name/value strings, for the manifest and `gcsim policies`.
  [[nodiscard]] virtual std::vector<std::pair<std::string, std::string>> parameters() const { return {}; }
  /// One scheduling pass.
  virtual void schedule(SchedContext& ctx) = 0;

  // Event hooks. The defaults give the baseline behaviour: one pass at every instant
  // at which a job arrives or ends.
  /// true: the kernel runs schedule() whenever jobs arrive or end. false: it only
  /// calls the hooks below and the policy drives itself with wake_at().
  [[nodiscard]] virtual bool pass_on_change() const { return true; }
  /// Called once before the first event, to arm timers.
  virtual void on_begin(SchedContext& ctx) { (void)ctx; }
  /// A job entered the queue (eligible now).
  virtual void on_queued(SchedContext& ctx, int j) { (void)ctx; (void)j; }
  /// A job ended and its resources are free again.
  virtual void on_ended(SchedContext& ctx, int j) { (void)ctx; (void)j; }
  /// A timer asked with wake_at() fired.
  virtual void on_wake(SchedContext& ctx, uint64_t tag) { (void)tag; schedule(ctx); }
  /// When a job that started at `start` with limit `limit` is killed if still running
  /// (Slurm: at the first time-limit check after start + limit + OverTimeLimit).
  [[nodiscard]] virtual SimTime kill_time(SimTime start, SimTime limit) const { return start + limit; }
  /// How long after its run time a job's end reaches the scheduler (process exit and
  /// the completion message; 0 = at once).
  [[nodiscard]] virtual SimTime exit_latency() const { return SimTime{}; }
  /// Whether exit_latency_started_with() depends on its argument: the end events of the
  /// jobs one policy call starts are then set when the call returns.
  [[nodiscard]] virtual bool exit_latency_grows() const { return false; }
  /// The exit latency of a job started in one policy call with `together - 1` others
  /// (a controller that launches them one after another delays them all).
  [[nodiscard]] virtual SimTime exit_latency_started_with(int together) const {
    (void)together;
    return exit_latency();
  }
};

}  // namespace gcsim
