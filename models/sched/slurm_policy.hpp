// The `slurm` policy: Slurm 22.05-23.11's two scheduling loops over cons_tres
// selection (shared/research/slurm_internals.md sections 1-4, 6, 10).
//
//  queue     PriorityTier, then priority (priority/multifactor, recomputed at submit and
//            every PriorityCalcPeriod), then submit time, job id, array task id.
//  main      runs on the 1 s background tick when jobs were submitted or ended and
//            batch_sched_delay has passed since the last pass (default_queue_depth
//            records), and as a full pass every sched_interval, both in whole seconds
//            of the controller's clock; the first job that does not fit blocks its
//            partition's nodes for the rest of the pass.
//  backfill  every bf_interval when something changed, a reservation in the last cycle
//            included (else on the next 1 s re-check):
//            each tested job that cannot start now gets a whole-node reservation in a
//            table floored to bf_resolution within bf_window; a job starts only on nodes
//            free of every earlier reservation for its whole planned limit.
//  timers    time-limit kills at the 30 s check after limit + OverTimeLimit.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/priority/multifactor.hpp"
#include "models/sched/slurm_config.hpp"
#include "models/sched/slurm_select.hpp"
#include "sim/sched/policy.hpp"

namespace gcsim {

struct SlurmPolicyInputs {
  const Cluster* cluster = nullptr;
  std::string accounts_path;                       // --accounts (sacctmgr dump); "" = none
  std::map<std::string, std::string> overrides;    // --set KEY=VALUE
};

struct BackfillNodeSets;  // slurm_policy.cpp
struct BackfillFutures;   // slurm_policy.cpp
struct WillRunCache;      // slurm_policy.cpp
struct BackfillReplay;    // slurm_policy.cpp
struct WalkMemo;          // slurm_policy.cpp

class SlurmPolicy final : public Policy {
 public:
  /// Reads the configuration; throws InputError on malformed values. Warnings (options
  /// gcsim does not model) go to `warnings`.
  SlurmPolicy(const SlurmPolicyInputs& in, Diagnostics& warnings);
  ~SlurmPolicy() override;
  [[nodiscard]] std::string name() const override { return "slurm"; }
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> parameters() const override;
  void schedule(SchedContext& ctx) override { main_pass(ctx, true); }

  [[nodiscard]] bool pass_on_change() const override { return false; }
  void on_begin(SchedContext& ctx) override;
  void on_queued(SchedContext& ctx, int j) override;
  void on_ended(SchedContext& ctx, int j) override;
  void on_wake(SchedContext& ctx, uint64_t tag) override;
  [[nodiscard]] SimTime kill_time(SimTime start, SimTime limit) const override;
  [[nodiscard]] SimTime exit_latency() const override { return cfg_.job_exit_latency; }
  [[nodiscard]] bool exit_latency_grows() const override { return cfg_.job_exit_latency_per_start > SimTime{}; }
  [[nodiscard]] SimTime exit_latency_started_with(int together) const override {
    return cfg_.job_exit_latency + SimTime::us(cfg_.job_exit_latency_per_start.count_us() * (together - 1));
  }

  /// One backfill cycle now, outside the bf_interval timer (benchmarks).
  void backfill_now(SchedContext& ctx) { backfill(ctx); }
  /// Forgets the will-run outcomes kept from earlier cycles, so that the next cycle
  /// tests every job as after a change of state (benchmarks).
  void forget_will_runs();
  /// Whether will-run outcomes are kept from cycle to cycle (default true; tests
  /// check that keeping them changes no decision), and how many were used again.
  void keep_will_runs(bool on) { keep_will_runs_ = on; }
  [[nodiscard]] uint64_t will_runs_reused() const;
  /// Whether a cycle after no change of state replays the last one's outcomes where
  /// they still hold (default true; tests check that it changes no decision), and how
  /// many it replayed.
  void replay_outcomes(bool on) { replay_outcomes_ = on; }
  [[nodiscard]] uint64_t outcomes_replayed() const;
  /// Tests: each outcome the replay would take is tested afresh instead, and compared
  /// (planned start and reserved nodes). Returns (compared, found otherwise).
  void check_replays(bool on) { check_replays_ = on; }
  [[nodiscard]] std::pair<uint64_t, uint64_t> replays_checked() const;
  /// Whether the jobs of a cycle with the same candidates share one will-run walk
  /// (WalkMemo; default true; tests check that sharing changes no decision), and how
  /// many walks were shared.
  void share_walks(bool on) { share_walks_ = on; }
  [[nodiscard]] uint64_t walks_shared() const;
  /// Whether a tested job whose windows repeat those of a job before it in the cycle
  /// that found too few candidate nodes in each is ended as that one was (default true;
  /// tests check that it changes no decision), and how many were.
  void share_chains(bool on) { share_chains_ = on; }
  [[nodiscard]] uint64_t chains_shared() const;
  [[nodiscard]] const SlurmSchedConfig& config() const { return cfg_; }
  [[nodiscard]] int64_t job_priority(int j) const { return j < static_cast<int>(prio_.size()) ? prio_[j] : 0; }

 private:
  enum Tag : uint64_t { kMainTick = 1, kBfTick = 2, kPrioTick = 3 };
  void main_pass(SchedContext& ctx, bool full);
  void backfill(SchedContext& ctx);
  /// The queue in order, valid until the next call.
  [[nodiscard]] const std::vector<int>& build_queue(SchedContext& ctx);
  [[nodiscard]] SimTime grid(SimTime at_least, SimTime phase, SimTime period) const;
  [[nodiscard]] SimTime main_grid(SimTime at_least) const;
  /// When a backfill cycle that began at `start` and tested `tested` jobs ends.
  [[nodiscard]] SimTime bf_cycle_end(SimTime start, int tested) const;
  /// t floored to a multiple of q on the controller's wall clock (wall_clock_zero).
  [[nodiscard]] SimTime wall_floor(SimTime t, SimTime q) const;
  /// The controller's time(NULL) at trace time t, as the start of that wall-clock second.
  [[nodiscard]] SimTime wall_s(SimTime t) const;
  void arm_main(SchedContext& ctx);
  void arm_bf(SchedContext& ctx);
  void start(SchedContext& ctx, int j, Allocation a, StartedBy by);
  void recompute_priorities(SchedContext& ctx);
  void set_priority(SchedContext& ctx, int j);
  void ensure_job(SchedContext& ctx, int j);
  [[nodiscard]] bool array_capped(SchedContext& ctx, int j) const;
  [[nodiscard]] SimTime plan_limit(SchedContext& ctx, int j) const;
  [[nodiscard]] SimTime end_time(SchedContext& ctx, int r) const;

  const Cluster* cluster_;
  SlurmSchedConfig cfg_;
  std::unique_ptr<MultifactorPriority> mf_;
  SlurmSelector selector_;
  std::vector<int64_t> prio_;
  // build_queue's last order, of ctx.pending() as it was, while queue_version_ (bumped
  // when a priority or an array's running count changes) is queue_of_
  std::vector<int> queue_, queue_pending_;
  std::vector<uint8_t> seen_;  // by job: build_queue's scratch, 0 between calls
  uint64_t queue_version_ = 0, queue_of_ = ~uint64_t{0};
  std::vector<int> assoc_;
  std::vector<SimTime> charged_until_;
  std::vector<uint8_t> known_;
  std::map<int64_t, int> array_running_;  // array job id -> running tasks
  SimTime last_sched_, last_full_, last_bf_end_;
  bool bf_ran_ = false;
  int sched_requests_ = 0;
  bool changed_ = true;
  SimTime main_armed_ = SimTime::infinite();
  SimTime bf_armed_ = SimTime::infinite();
  std::unique_ptr<BackfillNodeSets> bf_sets_;  // every node and each partition, as node sets
  std::unique_ptr<BackfillFutures> futures_;   // backfill's running jobs by end and future states, kept across cycles
  std::unique_ptr<WillRunCache> will_runs_;    // will-run outcomes, kept while the cluster state is unchanged
  bool keep_will_runs_ = true;
  std::unique_ptr<BackfillReplay> replay_;     // the last cycle's outcomes, replayed while the state is unchanged
  bool replay_outcomes_ = true;
  bool check_replays_ = false;
  std::unique_ptr<WalkMemo> walks_;            // will-run walks by candidate set, while the present is unchanged
  bool share_walks_ = true;
  bool share_chains_ = true;
  uint64_t chains_shared_ = 0;
};

}  // namespace gcsim
