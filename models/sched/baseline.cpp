#include "models/sched/baseline.hpp"

#include <algorithm>

namespace gcsim {

void FcfsPolicy::schedule(SchedContext& ctx) {
  const std::vector<int> queue = ctx.pending();
  for (int j : queue) {
    auto a = ctx.allocator().allocate(ctx.shape(j), ctx.state(), ctx.node_order(j));
    if (!a) break;
    ctx.start(j, *a, StartedBy::kMain);
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
    ctx.start(j, *a, StartedBy::kMain);
  }
  if (i >= queue.size()) return;
  const int head = queue[i];

  // Shadow time: release running jobs in order of their latest end until the head fits.
  std::vector<int> running = ctx.running();
  std::stable_sort(running.begin(), running.end(),
                   [&](int a, int b) { return ctx.expected_end(a) < ctx.expected_end(b); });
  ClusterState shadow_state = ctx.state();
  // The head's node-by-node bound follows the shadow state, so most release steps and
  // backfill candidates are judged without placing the head.
  FitBound head_bound(ctx.shape(head), shadow_state, ctx.node_order(head));
  const bool bound_exact = alloc.bound_is_exact(ctx.shape(head));
  SimTime shadow = SimTime::infinite();
  for (size_t k = 0; k < running.size();) {
    const SimTime t = ctx.expected_end(running[k]);
    while (k < running.size() && ctx.expected_end(running[k]) == t) {
      const Allocation& r = ctx.allocation(running[k++]);
      shadow_state.release(r);
      head_bound.refresh(r);
    }
    if (head_bound.may_fit() && (bound_exact || alloc.allocate(ctx.shape(head), shadow_state, ctx.node_order(head)))) {
      shadow = t;
      break;
    }
  }
  if (shadow.is_infinite()) return;  // cannot happen: the head fits an empty cluster
  ctx.reserve(head, shadow);

  // What the head takes at the shadow time at least (cores, GPUs): a candidate running
  // past it must leave that much free there, which rules out most without placing them.
  const int64_t head_cores = min_cores(ctx.shape(head), shadow_state);
  const int64_t head_gpus = ctx.shape(head).requested_gpus();
  for (size_t k = i + 1; k < queue.size(); ++k) {
    const int j = queue[k];
    const JobShape& sj = ctx.shape(j);
    const SimTime end = ctx.now() + sj.time_limit;
    if (end > shadow && (shadow_state.free_cores_total() - min_cores(sj, shadow_state) < head_cores ||
                         shadow_state.free_gpus_total() - sj.requested_gpus() < head_gpus))
      continue;
    auto a = place_now(j);
    if (!a) continue;
    if (end <= shadow) {
      ctx.start(j, *a, StartedBy::kBackfill);
      continue;
    }
    // Runs past the shadow time: only on resources the head does not need then.
    if (!shadow_state.fits(*a)) continue;
    // Try it in place and undo, rather than copying the whole cluster per candidate.
    shadow_state.allocate(*a);
    head_bound.refresh(*a);
    if (!head_bound.may_fit() || !(bound_exact || alloc.allocate(ctx.shape(head), shadow_state, ctx.node_order(head)))) {
      shadow_state.release(*a);
      head_bound.refresh(*a);
      continue;
    }
    ctx.start(j, *a, StartedBy::kBackfill);
  }
}

}  // namespace gcsim
