#include "models/sched/baseline.hpp"

#include <algorithm>
#include <optional>
#include <utility>

namespace gcsim {

void FcfsPolicy::schedule(SchedContext& ctx) {
  const std::vector<int> queue = ctx.pending();
  for (int j : queue) {
    auto a = ctx.allocator().allocate(ctx.shape(j), ctx.state(), ctx.node_order(j));
    if (!a) break;
    ctx.start(j, std::move(*a), StartedBy::kMain);
  }
}

void EasyPolicy::schedule(SchedContext& ctx) { easy_pass(ctx, ctx.pending()); }

void SjfPolicy::schedule(SchedContext& ctx) {
  std::vector<int> queue = ctx.pending();
  // Shortest time limit first; the kernel's queue order (submit, id) breaks ties.
  std::stable_sort(queue.begin(), queue.end(),
                   [&](int a, int b) { return ctx.shape(a).time_limit < ctx.shape(b).time_limit; });
  easy_pass(ctx, queue);
}

bool ReplayPolicy::try_start(SchedContext& ctx, int j) {
  auto a = ctx.allocator().allocate(ctx.shape(j), ctx.state(), ctx.node_order(j));
  if (!a) return false;
  ctx.start(j, std::move(*a), StartedBy::kMain);
  return true;
}

void ReplayPolicy::schedule(SchedContext& ctx) {
  // first fit over the late jobs: one that still does not fit holds back no other
  std::erase_if(late_, [&](int j) { return try_start(ctx, j); });
}

void ReplayPolicy::on_queued(SchedContext& ctx, int j) {
  const SimTime due = ctx.job(j).recorded_start.value_or(ctx.now());
  if (due > ctx.now()) {
    ctx.wake_at(due, static_cast<uint64_t>(j));
    return;
  }
  on_wake(ctx, static_cast<uint64_t>(j));
}

void ReplayPolicy::on_wake(SchedContext& ctx, uint64_t tag) {
  const int j = static_cast<int>(tag);
  if (!try_start(ctx, j)) late_.push_back(j);
}

void ReplayPolicy::on_ended(SchedContext& ctx, int j) {
  (void)j;
  schedule(ctx);
}

namespace {

// The cluster as EASY plans it at the shadow time: running jobs released in order of
// their expected end, and the jobs backfilled past the shadow time taken. In general a
// copy of the state with the head's node-by-node bound kept on it. When the head's
// bound is exact and the free-core total alone decides it (FitBound), only the totals
// are kept: every resource free in the live state is free in the shadow one too (the
// shadow only adds releases, and takes what it takes in both), so a candidate placed
// on the live state always fits the shadow, and only the head's count is left to check.
// A memory-heavy candidate could make memory bind for the head; the shadow then
// becomes a full copy before taking it.
class Shadow {
 public:
  Shadow(const SchedContext& ctx, int head, const Allocator& alloc)
      : ctx_(ctx),
        head_(head),
        alloc_(alloc),
        shape_(ctx.shape(head)),
        exact_(alloc.bound_is_exact(shape_)),
        counted_(exact_ && FitBound::decided_by_free_cores(shape_, ctx.state(), ctx.node_order(head))),
        cores_(ctx.state().free_cores_total()),
        gpus_(ctx.state().free_gpus_total()) {
    if (!counted_) copy_state();
  }

  // Running job j's resources, free from its expected end on.
  void release(int j) {
    const Allocation& a = ctx_.allocation(j);
    if (counted_) {
      const auto [cores, gpus] = ctx_.allocated_cores_gpus(j);
      cores_ += cores;
      gpus_ += gpus;
      released_.push_back(&a);
      return;
    }
    state_->release(a);
    bound_->refresh(a);
  }
  // A job started now that ends by the shadow time (its resources are free there).
  void started_before_shadow(const Allocation& a) {
    if (counted_) released_.push_back(&a);
  }
  [[nodiscard]] bool head_fits() const {
    if (counted_) return cores_ >= shape_.tasks;
    return bound_->may_fit() && (exact_ || alloc_.allocate(shape_, *state_, ctx_.node_order(head_)));
  }
  [[nodiscard]] int64_t free_cores() const { return counted_ ? cores_ : state_->free_cores_total(); }
  [[nodiscard]] int64_t free_gpus() const { return counted_ ? gpus_ : state_->free_gpus_total(); }
  // Takes `a` (a job that runs past the shadow time) when the head still fits without
  // it; otherwise leaves the shadow as it was. Tried in place and undone, rather than
  // copying the whole cluster per candidate.
  bool take_if_head_still_fits(const Allocation& a) {
    if (counted_ && std::any_of(a.nodes.begin(), a.nodes.end(),
                                [&](const NodeAlloc& na) { return ctx_.state().memory_heavy(na); })) {
      counted_ = false;
      copy_state();
    }
    if (counted_) {
      if (cores_ - a.cores() < shape_.tasks) return false;
      cores_ -= a.cores();
      gpus_ -= a.gpus();
      return true;
    }
    if (!state_->fits(a)) return false;
    state_->allocate(a);
    bound_->refresh(a);
    if (head_fits()) return true;
    state_->release(a);
    bound_->refresh(a);
    return false;
  }

 private:
  // The full shadow: the live state (which holds what was taken past the shadow time)
  // with what is free at the shadow time released.
  void copy_state() {
    state_.emplace(ctx_.state());
    for (const Allocation* a : released_) state_->release(*a);
    released_.clear();
    bound_.emplace(shape_, *state_, ctx_.node_order(head_));
  }

  const SchedContext& ctx_;
  int head_;
  const Allocator& alloc_;
  const JobShape& shape_;
  bool exact_, counted_;
  int64_t cores_, gpus_;                     // counted_: free cores and GPUs at the shadow
  std::vector<const Allocation*> released_;  // counted_: what is free at the shadow but not now
  std::optional<ClusterState> state_;
  std::optional<FitBound> bound_;
};

}  // namespace

void easy_pass(SchedContext& ctx, const std::vector<int>& queue, const PlaceFn& place) {
  const Allocator& alloc = ctx.allocator();
  auto place_now = [&](int j) {
    return place ? place(ctx, j, ctx.state()) : alloc.allocate(ctx.shape(j), ctx.state(), ctx.node_order(j));
  };
  size_t i = 0;
  for (; i < queue.size(); ++i) {
    const int j = queue[i];
    auto a = place_now(j);
    if (!a) break;
    ctx.start(j, std::move(*a), StartedBy::kMain);
  }
  if (i >= queue.size()) return;
  const int head = queue[i];

  // Shadow time: release running jobs in order of their latest end (then job index)
  // until the head fits.
  const auto& by_end = ctx.running_by_end();
  Shadow shadow_state(ctx, head, alloc);
  SimTime shadow = SimTime::infinite();
  for (size_t k = 0; k < by_end.size();) {
    const SimTime t = by_end[k].first;
    while (k < by_end.size() && by_end[k].first == t) shadow_state.release(by_end[k++].second);
    if (shadow_state.head_fits()) {
      shadow = t;
      break;
    }
  }
  if (shadow.is_infinite()) return;  // cannot happen: the head fits an empty cluster
  ctx.reserve(head, shadow);

  // What the head takes at the shadow time at least (cores, GPUs): a candidate running
  // past it must leave that much free there, which rules out most without placing them.
  const int64_t head_cores = min_cores(ctx.shape(head), ctx.state());
  const int64_t head_gpus = ctx.shape(head).requested_gpus();
  for (size_t k = i + 1; k < queue.size(); ++k) {
    const int j = queue[k];
    const JobShape& sj = ctx.shape(j);
    const SimTime end = ctx.now() + sj.time_limit;
    if (end > shadow && (shadow_state.free_cores() - min_cores(sj, ctx.state()) < head_cores ||
                         shadow_state.free_gpus() - sj.requested_gpus() < head_gpus))
      continue;
    auto a = place_now(j);
    if (!a) continue;
    // One that runs past the shadow time only on resources the head does not need then.
    if (end <= shadow) {
      ctx.start(j, std::move(*a), StartedBy::kBackfill);
      shadow_state.started_before_shadow(ctx.allocation(j));
    } else if (shadow_state.take_if_head_still_fits(*a)) {
      ctx.start(j, std::move(*a), StartedBy::kBackfill);
    }
  }
}

}  // namespace gcsim
