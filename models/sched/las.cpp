#include "models/sched/las.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace gcsim {

namespace {

/// GPUs a job's service is counted with: its GPUs, or 1 for a CPU-only job.
int64_t service_weight(const SchedContext& ctx, int j) { return std::max<int64_t>(1, ctx.shape(j).requested_gpus()); }

/// A necessary condition for `sh` to fit `s`, far cheaper than asking the allocator:
/// enough free GPUs in all, and on enough nodes for a fixed node count.
bool may_fit(const ClusterState& s, const JobShape& sh) {
  if (s.free_gpus_total() < sh.requested_gpus()) return false;
  if (sh.gpus_per_node <= 0 || !sh.fixed_nodes) return true;
  int nodes = 0;
  for (size_t i = 0; i < s.size() && nodes < sh.nodes_min; ++i) nodes += s.node(static_cast<int>(i)).free_gpus >= sh.gpus_per_node;
  return nodes >= sh.nodes_min;
}

std::optional<Allocation> place(const SchedContext& ctx, int j, const ClusterState& s) {
  if (!may_fit(s, ctx.shape(j))) return std::nullopt;
  return ctx.allocator().allocate(ctx.shape(j), s, ctx.node_order(j));
}

std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

LasPolicy::LasPolicy(LasParams p) : p_(std::move(p)) {
  double prev = 0;
  for (double t : p_.thresholds_gpu_s) {
    if (!(t > prev) || !std::isfinite(t)) throw std::invalid_argument("las: thresholds must be positive and ascending");
    prev = t;
    thresholds_us_.push_back(static_cast<int64_t>(std::llround(t * 1e6)));
  }
  if (!(p_.promote_knob >= 0) || !std::isfinite(p_.promote_knob))
    throw std::invalid_argument("las: promote_knob must be >= 0");
  if (p_.resume_cost < SimTime{} || p_.resume_cost.is_infinite())
    throw std::invalid_argument("las: resume_cost must be >= 0");
}

std::vector<std::pair<std::string, std::string>> LasPolicy::parameters() const {
  std::string thr;
  for (size_t i = 0; i < p_.thresholds_gpu_s.size(); ++i) thr += (i ? "," : "") + format_number(p_.thresholds_gpu_s[i]);
  return {{"queues", std::to_string(thresholds_us_.size() + 1)},
          {"thresholds_gpu_s", thr.empty() ? "none" : thr},
          {"service", "gpus*run_time (cpu-only: run_time)"},
          {"order", "queue>submit"},
          {"preempt", "lower_queues:lowest_queue>latest_start, only_if_it_starts"},
          {"promote_knob", format_number(p_.promote_knob)},
          {"resume_cost_s", format_number(p_.resume_cost.to_seconds())}};
}

LasPolicy::JobState& LasPolicy::st(int j) {
  if (static_cast<size_t>(j) >= jobs_.size()) jobs_.resize(static_cast<size_t>(j) + 1);
  return jobs_[static_cast<size_t>(j)];
}

int LasPolicy::queue_of(int j) const {
  return static_cast<size_t>(j) < jobs_.size() ? jobs_[static_cast<size_t>(j)].queue : 0;
}

SimTime LasPolicy::promote_wait_left(const SchedContext& ctx, int j) const {
  const JobState& s = jobs_[static_cast<size_t>(j)];
  if (p_.promote_knob <= 0 || s.queue == 0 || !s.preempted) return SimTime::infinite();
  const SimTime ran = ctx.run_time(j) - s.base;
  if (ran <= SimTime{}) return SimTime::infinite();
  const SimTime due = SimTime::us(static_cast<int64_t>(std::ceil(p_.promote_knob * static_cast<double>(ran.count_us()))));
  return due - (s.waited + (ctx.now() - s.pending_since));
}

int64_t LasPolicy::service_us(const SchedContext& ctx, int j) const {
  const SimTime ran = ctx.run_time(j) - jobs_[static_cast<size_t>(j)].base;
  return service_weight(ctx, j) * ran.count_us();
}

void LasPolicy::on_begin(SchedContext& ctx) {
  (void)ctx;
  jobs_.clear();
  armed_.clear();
  promotions_ = 0;
  freed_epoch_ = 0;
  last_running_ = 0;
}

void LasPolicy::on_wake(SchedContext& ctx, uint64_t tag) {
  (void)tag;
  std::erase_if(armed_, [&](SimTime t) { return t <= ctx.now(); });
  schedule(ctx);
}

void LasPolicy::update_queues(const SchedContext& ctx, const std::vector<int>& running,
                              const std::vector<int>& pending) {
  const int last = static_cast<int>(thresholds_us_.size());
  // Demotion: service only grows while a job runs.
  for (int j : running) {
    JobState& s = st(j);
    const int64_t svc = service_us(ctx, j);
    while (s.queue < last && svc >= thresholds_us_[static_cast<size_t>(s.queue)]) ++s.queue;
  }
  // Promotion (starvation guard): only jobs that ran, were demoted and are waiting again.
  for (int j : pending) {
    if (promote_wait_left(ctx, j) <= SimTime{}) {
      JobState& s = st(j);
      s.queue = 0;
      s.base = ctx.run_time(j);
      s.waited = SimTime{};
      s.pending_since = ctx.now();
      ++promotions_;
    }
  }
}

bool LasPolicy::make_room(SchedContext& ctx, int j, const std::vector<uint8_t>& is_running, std::vector<int>& victims) {
  victims.clear();
  const int q = st(j).queue;
  const SimTime now = ctx.now();
  for (size_t r = 0; r < is_running.size(); ++r) {
    const int k = static_cast<int>(r);
    // Lower queues only; a job started at this instant stays (no zero-length runs).
    if (is_running[r] && jobs_[r].queue > q && ctx.start_time(k) < now) victims.push_back(k);
  }
  if (victims.empty()) return false;
  // Lowest queue first, then latest started, then latest in the trace.
  std::sort(victims.begin(), victims.end(), [&](int a, int b) {
    return std::tuple(jobs_[static_cast<size_t>(a)].queue, ctx.start_time(a), a) >
           std::tuple(jobs_[static_cast<size_t>(b)].queue, ctx.start_time(b), b);
  });
  // In vain even with every candidate gone: preempt nothing. (GPU count first: cheap.)
  int64_t gpus = ctx.state().free_gpus_total();
  for (int v : victims) gpus += ctx.allocation(v).gpus();
  if (gpus < ctx.shape(j).requested_gpus()) return false;
  if (!relaxed_ || relaxed_queue_ != q) {  // the state with every job below queue q gone
    relaxed_ = ctx.state();
    for (int v : victims) relaxed_->release(ctx.allocation(v));
    relaxed_queue_ = q;
  }
  if (!place(ctx, j, *relaxed_)) return false;
  // The shortest prefix of the victim order that lets it start (more victims, more room:
  // a binary search) ...
  auto without_prefix = [&](size_t m) {
    ClusterState s = ctx.state();
    for (size_t i = 0; i < m; ++i) s.release(ctx.allocation(victims[i]));
    return s;
  };
  size_t lo = 0, n = victims.size();  // n fits, lo does not (the job did not fit as things are)
  while (n - lo > 1) {
    const size_t mid = lo + (n - lo) / 2;
    if (place(ctx, j, without_prefix(mid))) n = mid;
    else lo = mid;
  }
  victims.resize(n);
  ClusterState trial = without_prefix(n);
  // ... less the victims it does not need after all (tried from the least preferred victim).
  for (size_t i = n - 1; i-- > 0;) {
    trial.allocate(ctx.allocation(victims[i]));
    if (place(ctx, j, trial)) {
      victims.erase(victims.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      trial.release(ctx.allocation(victims[i]));
    }
  }
  relaxed_.reset();
  ++freed_epoch_;
  for (int v : victims) {
    ctx.preempt(v, p_.resume_cost);
    JobState& s = st(v);
    s.preempted = true;
    s.pending_since = now;
  }
  return true;
}

void LasPolicy::schedule(SchedContext& ctx) {
  const std::vector<int> running = ctx.running();
  const std::vector<int> pending = ctx.pending();
  size_t n = jobs_.size();
  for (int j : running) n = std::max(n, static_cast<size_t>(j) + 1);
  for (int j : pending) n = std::max(n, static_cast<size_t>(j) + 1);
  jobs_.resize(n);
  update_queues(ctx, running, pending);
  relaxed_.reset();

  // Every job in the system, in priority order: queue, then submit order.
  std::vector<int> order = running;
  order.insert(order.end(), pending.begin(), pending.end());
  auto key = [&](int j) { return std::tuple(jobs_[static_cast<size_t>(j)].queue, ctx.job(j).submit, ctx.job(j).id, j); };
  std::sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
  std::vector<uint8_t> is_running(n, 0);
  for (int j : running) is_running[static_cast<size_t>(j)] = 1;

  // Between passes only job ends change the resources; in a pass, starts take and
  // preemptions free them. A job that did not fit does not fit until something is freed.
  if (running.size() != last_running_) ++freed_epoch_;
  auto place_now = [&](int j) -> std::optional<Allocation> {
    JobState& s = st(j);
    if (s.no_fit_epoch == freed_epoch_) return std::nullopt;
    auto a = place(ctx, j, ctx.state());
    if (!a) s.no_fit_epoch = freed_epoch_;
    return a;
  };
  std::vector<int> victims;
  for (int j : order) {
    if (is_running[static_cast<size_t>(j)]) continue;
    auto a = place_now(j);
    if (!a && make_room(ctx, j, is_running, victims)) {
      for (int v : victims) is_running[static_cast<size_t>(v)] = 0;
      a = place_now(j);
      if (!a) throw std::logic_error("las: job does not fit after preempting for it");
    }
    if (!a) continue;
    ctx.start(j, std::move(*a), StartedBy::kMain);
    relaxed_.reset();
    is_running[static_cast<size_t>(j)] = 1;
    JobState& s = st(j);
    if (s.preempted) {
      s.waited += ctx.now() - s.pending_since;
      s.preempted = false;
    }
  }
  const std::vector<int> now_running = ctx.running();
  last_running_ = now_running.size();
  arm_timer(ctx, now_running, ctx.pending());
}

void LasPolicy::arm_timer(SchedContext& ctx, const std::vector<int>& running, const std::vector<int>& pending) {
  // Every pass recomputes the queues, so a timer is only needed where a queue change on
  // its own lets a pending job preempt: a running job's demotion below a pending job's
  // queue, a pending job's promotion above a running job's queue. (No timer keeps firing
  // once nothing waits.)
  const SimTime now = ctx.now();
  SimTime next = SimTime::infinite();
  const int last = static_cast<int>(thresholds_us_.size());
  int top_pending = last + 1, bottom_running = -1;
  for (int j : pending) top_pending = std::min(top_pending, jobs_[static_cast<size_t>(j)].queue);
  for (int j : running) bottom_running = std::max(bottom_running, jobs_[static_cast<size_t>(j)].queue);
  for (int j : running) {  // the instant its service reaches its queue's threshold
    const JobState& s = jobs_[static_cast<size_t>(j)];
    if (s.queue >= last || s.queue < top_pending) continue;
    const int64_t need = thresholds_us_[static_cast<size_t>(s.queue)] - service_us(ctx, j);
    const int64_t w = service_weight(ctx, j);
    next = std::min(next, now + SimTime::us(std::max<int64_t>(1, (need + w - 1) / w)));
  }
  if (bottom_running > 0) {
    for (int j : pending) {  // the instant it has waited promote_knob x its run time
      const SimTime left = promote_wait_left(ctx, j);
      if (!left.is_infinite()) next = std::min(next, now + std::max(SimTime::us(1), left));
    }
  }
  if (next.is_infinite()) return;
  // A timer at or before `next` is already armed: its pass arms the next one.
  for (SimTime t : armed_)
    if (t <= next) return;
  armed_.push_back(next);
  ctx.wake_at(next, 0);
}

}  // namespace gcsim
