// las - Tiresias-style least-attained-service, a research policy written against the
// Policy seam alone (Gu et al., "Tiresias: A GPU Cluster Manager for Distributed Deep
// Learning", NSDI 2019: discretized two-dimensional LAS, 2D-LAS). It needs no job
// durations or time limits:
//  - a job's attained service is GPUs x run time so far, over all its run segments
//    (GPU-seconds; a CPU-only job counts 1 x run time, i.e. Tiresias' time-based LAS);
//  - K queues split by thresholds on attained service (default 2 queues, threshold
//    3,250 GPU-s, the first queue limit of the Tiresias simulator); every job enters the
//    first queue and moves down while it runs, at the instant its service passes the
//    threshold (a policy timer);
//  - jobs of a higher (less-attained) queue go first, FIFO (submit, id) within a queue;
//    a job that fits starts (greedy, no reservations: Tiresias is work-conserving);
//  - a pending job that does not fit preempts running jobs of lower queues, lowest queue
//    and latest started first, only when that lets it start now; victims it turns out not
//    to need (on other nodes) are kept running. A job started at this instant is never a
//    victim. A preempted job keeps its progress and queue, restarts anywhere later, and
//    pays `resume_cost` of extra work (checkpoint restore) when it does;
//  - starvation guard (Tiresias' PromoteKnob): a job in a lower queue that has waited,
//    since it last entered the first queue, longer than promote_knob x its run time in
//    that time goes back to the first queue, its service counted from zero again
//    (0 = no guard). The default 8 is a choice: the Tiresias simulator runs without the
//    guard and sweeps 0.5-1000. On the Philly sample on the DGX A100 pod, 8 cuts the
//    longest wait by ~30% against no guard for ~3% more mean JCT; under heavy overload a
//    small knob cycles the waiting jobs through the first queue (many preemptions).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/sched/policy.hpp"

namespace gcsim {

struct LasParams {
  std::vector<double> thresholds_gpu_s = {3250};  // ascending; K-1 thresholds for K queues
  double promote_knob = 8;                        // 0 turns the starvation guard off
  SimTime resume_cost;                            // extra work at every resume after a preemption
};

class LasPolicy final : public Policy {
 public:
  explicit LasPolicy(LasParams p = {});
  [[nodiscard]] std::string name() const override { return "las"; }
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> parameters() const override;
  void on_begin(SchedContext& ctx) override;
  void on_wake(SchedContext& ctx, uint64_t tag) override;
  void schedule(SchedContext& ctx) override;

  /// The queue (0 = first, highest priority) job `j` was in after the last pass.
  [[nodiscard]] int queue_of(int j) const;
  /// How many jobs moved back to the first queue by the starvation guard.
  [[nodiscard]] int64_t promotions() const { return promotions_; }

 private:
  struct JobState {
    int queue = 0;
    SimTime base;           // run time at the last promotion: service counts from here
    SimTime waited;         // pending time since the last promotion, of closed pending periods
    SimTime pending_since;  // when it was preempted (while `preempted`)
    bool preempted = false;
    uint64_t no_fit_epoch = UINT64_MAX;  // did not fit when freed_epoch_ had this value
  };
  JobState& st(int j);
  /// How much longer pending job `j` waits before the starvation guard promotes it
  /// (<= 0: due now; infinite: never, as things stand).
  [[nodiscard]] SimTime promote_wait_left(const SchedContext& ctx, int j) const;
  /// Attained service in GPU-microseconds since the last promotion.
  [[nodiscard]] int64_t service_us(const SchedContext& ctx, int j) const;
  void update_queues(const SchedContext& ctx, const std::vector<int>& running, const std::vector<int>& pending);
  /// Preempts what job `j` needs and returns true when that lets it start now.
  bool make_room(SchedContext& ctx, int j, const std::vector<uint8_t>& is_running, std::vector<int>& victims);
  void arm_timer(SchedContext& ctx, const std::vector<int>& running, const std::vector<int>& pending);

  LasParams p_;
  std::vector<int64_t> thresholds_us_;  // GPU-microseconds
  std::vector<JobState> jobs_;
  std::vector<SimTime> armed_;  // wake times asked for and not yet fired
  // In a pass, until it starts or preempts anything: the state without the running jobs
  // below queue relaxed_queue_ (whether a blocked job could start at all by preempting).
  std::optional<ClusterState> relaxed_;
  int relaxed_queue_ = -1;
  uint64_t freed_epoch_ = 0;  // counts the times resources were freed (ends, preemptions)
  size_t last_running_ = 0;   // running jobs after the last pass
  int64_t promotions_ = 0;
};

}  // namespace gcsim
