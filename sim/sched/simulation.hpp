// One batch-system simulation: jobs arrive, become eligible, are started by a
// policy (and, by policies that preempt, stopped and started again later), end or are
// killed at their time limit. A Simulation is a value you own;
// several can run in one process (compare, sweeps, tests).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/kernel/event_queue.hpp"
#include "sim/sched/policy.hpp"
#include "sim/sched/runtime.hpp"

namespace gcsim {

enum class JobStatus { kFuture, kPending, kRunning, kDone, kRejected };

/// Everything the simulation learned about one job.
struct JobOutcome {
  JobStatus status = JobStatus::kFuture;
  JobShape shape;
  SimTime eligible;
  SimTime start;
  SimTime end;
  bool timed_out = false;
  Allocation alloc;          // while running (and at the end unless bindings are kept)
  PackedAllocation packed;   // once ended: `alloc` packed, and `alloc` emptied
  StartedBy started_by = StartedBy::kNone;
  std::optional<SimTime> first_reservation;  // earliest planned start a policy recorded
  std::string reject_reason;
  bool failed = false;  // ended in a state afterok does not accept (timeout, recorded failure)
  // With a RuntimeModel: progress in reference microseconds of the trace duration.
  double remaining_ref_us = 0;  // reference work left at `progress_at`
  double speed = 1;             // reference seconds per simulated second since `progress_at`
  SimTime progress_at;
  SimTime kill_at = SimTime::infinite();
  uint64_t end_token = 0;       // the job's live end event; older ones are ignored
  double speed_min = 1, speed_max = 1;  // extremes over the run (reported per job)
  bool gpu_tasks_numa_local = true;  // Allocation::gpu_tasks_numa_local of `alloc`, set at each start
  // Preemption (SchedContext::preempt). `start` stays the first start and `end` is the
  // final end, so End - Start includes the time spent preempted; `alloc` and
  // `started_by` are those of the last and the first segment.
  struct Segment {
    SimTime start, end;
    Allocation alloc;
  };
  int preemptions = 0;
  SimTime preempted_time;          // total time pending between a preemption and the resume
  SimTime segment_start;           // when the current (last) segment started
  SimTime run_before;              // run time of the segments before the current one
  SimTime preempted_at;            // when the job was last preempted
  SimTime resume_cost;             // extra work charged at the next start (restore)
  std::vector<Segment> preempted_segments;  // the segments that ended in a preemption, in order
                                            // (their allocations without task bindings)

  /// The last segment's allocation, packed: `packed` once the job ended, else `alloc`
  /// packed into `scratch` (and then a reference to it).
  [[nodiscard]] const PackedAllocation& final_packed(PackedAllocation& scratch) const {
    if (!packed.empty() || alloc.nodes.empty()) return packed;
    scratch = PackedAllocation(alloc);
    return scratch;
  }
};

struct SimulationOptions {
  bool reverse_ties = false;              // determinism test: invert simultaneous-event order
  const std::atomic<bool>* stop = nullptr;  // set asynchronously to stop early
  std::function<void(size_t done, size_t total)> progress;  // called now and then
  RuntimeModel* runtime = nullptr;  // placement/contention-dependent speed; null = recorded durations
  /// Finished jobs keep their per-task bindings in `alloc` (tests, real-mode checks);
  /// runs that write only sacct, summary and compare metrics drop them at the end (a
  /// 1M-job GPU run held about 0.4 GB of them).
  bool keep_task_bindings = true;
};

struct SimulationResult {
  bool completed = false;
  uint64_t fingerprint = 0;
  uint64_t events = 0;
  uint64_t passes = 0;
  SimTime end_time;
};

class Simulation final : private SchedContext {
 public:
  Simulation(const Cluster& cluster, const Trace& trace, Policy& policy, const Allocator& allocator,
             SimulationOptions options = {});
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  SimulationResult run();
  /// Processes every event up to and including time `t` (benchmarks, tests).
  void advance_to(SimTime t);
  /// Runs one extra scheduling pass on the current state (benchmarks, tests).
  void schedule_once();
  /// Runs `f` as a scheduling pass with this simulation as its context (benchmarks that
  /// time one part of a policy, such as one Slurm backfill cycle).
  void run_pass(const std::function<void(SchedContext&)>& f);
  [[nodiscard]] const std::vector<JobOutcome>& outcomes() const { return out_; }
  /// Moves the outcomes out once the run is over (the simulation is spent after this).
  [[nodiscard]] std::vector<JobOutcome> take_outcomes() { return std::move(out_); }
  [[nodiscard]] const Trace& trace() const { return *trace_; }

 private:
  // SchedContext
  [[nodiscard]] SimTime now() const override { return now_; }
  [[nodiscard]] const Cluster& cluster() const override { return *cluster_; }
  [[nodiscard]] const ClusterState& state() const override { return state_; }
  [[nodiscard]] const std::vector<int>& pending() const override { return pending_; }
  [[nodiscard]] std::vector<int> running() const override;
  [[nodiscard]] const Job& job(int j) const override { return trace_->jobs[j]; }
  [[nodiscard]] const JobShape& shape(int j) const override { return out_[j].shape; }
  [[nodiscard]] const std::vector<int>& node_order(int j) const override;
  [[nodiscard]] const Allocation& allocation(int j) const override { return out_[j].alloc; }
  [[nodiscard]] SimTime expected_end(int j) const override;
  [[nodiscard]] const std::vector<std::pair<SimTime, int>>& running_by_end() const override { return by_end_; }
  [[nodiscard]] std::pair<int64_t, int64_t> allocated_cores_gpus(int j) const override { return held_[j]; }
  [[nodiscard]] const Allocator& allocator() const override { return *allocator_; }
  void start(int j, Allocation a, StartedBy by) override;
  void reserve(int j, SimTime planned) override;
  void wake_at(SimTime t, uint64_t tag) override;
  [[nodiscard]] SimTime eligible_time(int j) const override { return out_[j].eligible; }
  [[nodiscard]] SimTime start_time(int j) const override { return out_[j].segment_start; }
  void preempt(int j, SimTime resume_cost) override;
  [[nodiscard]] SimTime run_time(int j) const override;

  /// Dependencies (--dependency): kUnmet while waiting, kMet once satisfied, kNever
  /// when they can no longer be satisfied (Slurm: DependencyNeverSatisfied).
  enum class DepState { kMet, kUnmet, kNever };
  [[nodiscard]] DepState dependency_state(int j) const;
  /// Makes a submitted job eligible, rejects it, or returns true: it must wait.
  bool route_by_dependency(int j);
  void recheck_dependencies();
  void parse_dependencies();
  /// Runs a policy call; jobs it started leave the pending queue.
  void call_policy(const std::function<void()>& f);
  /// Pushes the end events of the jobs the last policy call started, with the exit
  /// latency of that many jobs started together (Policy::exit_latency_grows).
  void set_deferred_ends();
  /// Pushes job j's end event at its start + duration + `latency`, or at its kill time
  /// if that comes first (a job started afresh, at speed 1).
  void push_end(int j, SimTime latency);

  void prime();
  void process(const Event& e);
  void push(SimTime t, Phase p, EventKind k, int64_t subject, uint64_t token = 0);
  void request_pass();
  void on_submit(int j);
  void on_eligible(int j);
  void on_end(int j);
  /// Puts job j into the pending queue at its place in queue order (submit, id).
  void insert_pending(int j);
  /// Job j stops running (it ended or was preempted): frees its resources, tells the runtime model.
  void leave_running(int j);
  /// Asks the runtime model for changed speeds and moves those jobs' end events.
  void apply_speeds();
  /// End of job j from its remaining work and speed (never past its kill time).
  void schedule_end(int j);

  const Cluster* cluster_;
  const Trace* trace_;
  Policy* policy_;
  const Allocator* allocator_;
  SimulationOptions opt_;
  EventQueue queue_;
  ClusterState state_;
  std::vector<JobOutcome> out_;
  std::vector<int> pending_;
  std::vector<uint8_t> is_running_;
  std::vector<int> running_;
  // running_ as (expected_end, job) in order, kept by start and leave_running (an
  // EASY pass used to copy and sort the running set: 9% of a Curie run); the key each
  // job was filed under, as preemption changes expected_end before it leaves.
  std::vector<std::pair<SimTime, int>> by_end_;
  std::vector<SimTime> end_key_;
  std::vector<std::pair<int64_t, int64_t>> held_;  // a running job's cores and GPUs (its last start)
  std::vector<int> started_this_pass_;
  std::vector<int> ends_to_set_;  // started this call, end event not yet set (exit_latency_grows)
  std::vector<int> preempted_this_pass_;
  Fingerprint fp_;
  SimTime now_;
  SimTime pass_pending_at_ = SimTime::us(-1);
  size_t finished_ = 0;
  uint64_t events_ = 0;
  bool primed_ = false;
  std::unique_ptr<ClusterState> empty_;
  std::map<JobShape, bool> ever_fits_;  // shape -> fits the empty cluster (submission check)
  struct DepRef {
    std::vector<int> jobs;  // trace indices (all tasks of an array, or one task)
    SimTime delay;          // after:id+minutes
  };
  struct DepClause {
    std::string type;       // after, afterok, afternotok, afterany, aftercorr, singleton
    std::vector<DepRef> refs;
    bool invalid = false;   // names a job the trace does not have
  };
  struct Dependency {
    bool any = false;       // '?' separated: one clause suffices
    std::vector<DepClause> clauses;
  };
  std::vector<Dependency> deps_;                   // per job; empty = none
  std::vector<int> waiting_;                       // submitted jobs with unmet dependencies
  bool self_driven_ = false;                       // policy drives passes with wake_at()
  uint64_t passes_ = 0;
  uint64_t next_end_token_ = 1;
  std::vector<std::pair<int, double>> speed_changes_;
};

}  // namespace gcsim
