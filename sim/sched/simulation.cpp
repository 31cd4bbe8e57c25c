#include "sim/sched/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "sim/core/input_file.hpp"

namespace gcsim {

Simulation::Simulation(const Cluster& cluster, const Trace& trace, Policy& policy, const Allocator& allocator,
                       SimulationOptions options)
    : cluster_(&cluster),
      trace_(&trace),
      policy_(&policy),
      allocator_(&allocator),
      opt_(std::move(options)),
      queue_(opt_.reverse_ties != kReversedTiesBuild),
      state_(cluster) {
  out_.resize(trace.jobs.size());
  is_running_.assign(trace.jobs.size(), 0);
  end_key_.assign(trace.jobs.size(), SimTime{});
  held_.assign(trace.jobs.size(), {0, 0});
  self_driven_ = !policy.pass_on_change();
  parse_dependencies();
}

// --dependency=type:id[:id...][,type:...] (all must hold) or with '?' (any may hold),
// resolved once to trace indices; the syntax was checked by the sbatch option parser.
void Simulation::parse_dependencies() {
  std::vector<std::vector<int>> by_id;  // job id value -> trace indices (array tasks share one)
  for (size_t j = 0; j < trace_->jobs.size(); ++j) {
    const int64_t id = trace_->jobs[j].id.value;
    if (id < 0) continue;
    if (static_cast<size_t>(id) >= by_id.size()) by_id.resize(static_cast<size_t>(id) + 1);
    by_id[static_cast<size_t>(id)].push_back(static_cast<int>(j));
  }
  deps_.resize(trace_->jobs.size());
  for (size_t j = 0; j < trace_->jobs.size(); ++j) {
    const std::string& d = trace_->jobs[j].req.dependency;
    if (d.empty()) continue;
    Dependency& dep = deps_[j];
    dep.any = d.find('?') != std::string::npos;
    for (std::string_view item : split(d, dep.any ? '?' : ',')) {
      const auto parts = split(item, ':');
      DepClause c;
      c.type = to_lower(trim(parts[0]));
      for (size_t i = 1; i < parts.size(); ++i) {
        std::string_view ref = trim(parts[i]);
        DepRef r;
        if (auto plus = ref.find('+'); plus != std::string_view::npos) {
          r.delay = SimTime::seconds(60 * parse_integer(ref.substr(plus + 1)).value_or(0));
          ref = ref.substr(0, plus);
        }
        int64_t task = -1;
        if (auto us = ref.find('_'); us != std::string_view::npos) {
          task = parse_integer(ref.substr(us + 1)).value_or(-1);
          ref = ref.substr(0, us);
        }
        const int64_t id = parse_integer(ref).value_or(-1);
        if (id < 0 || static_cast<size_t>(id) >= by_id.size() || by_id[static_cast<size_t>(id)].empty()) {
          c.invalid = true;  // Slurm refuses the job: invalid dependency
          continue;
        }
        for (int k : by_id[static_cast<size_t>(id)])
          if (task < 0 || trace_->jobs[k].array_task == task) r.jobs.push_back(k);
        c.refs.push_back(std::move(r));
      }
      dep.clauses.push_back(std::move(c));
    }
  }
}

void Simulation::push(SimTime t, Phase p, EventKind k, int64_t subject, uint64_t token) {
  Event e;
  e.time = t;
  e.phase = p;
  e.kind = k;
  e.subject = subject;
  e.token = token;
  queue_.push(e);
}

void Simulation::request_pass() {
  if (self_driven_) return;
  if (pass_pending_at_ == now_) return;
  pass_pending_at_ = now_;
  push(now_, Phase::kSchedule, EventKind::kSchedPass, -1);
}

void Simulation::prime() {
  if (primed_) return;
  primed_ = true;
  queue_.reserve(trace_->jobs.size() * 2 + 16);
  empty_ = std::make_unique<ClusterState>(*cluster_);
  for (size_t j = 0; j < trace_->jobs.size(); ++j)
    push(trace_->jobs[j].submit, Phase::kArrival, EventKind::kJobSubmit, static_cast<int64_t>(j));
  policy_->on_begin(*this);
  set_deferred_ends();
}

void Simulation::wake_at(SimTime t, uint64_t tag) {
  push(std::max(t, now_), Phase::kSchedule, EventKind::kWake, -1, tag);
}

void Simulation::process(const Event& e) {
  now_ = e.time;
  ++events_;
  fp_.add(static_cast<uint64_t>(e.time.count_us()));
  fp_.add(static_cast<uint64_t>(e.kind) << 56 | static_cast<uint64_t>(e.subject + 1));
  switch (e.kind) {
    case EventKind::kJobSubmit: {
      const int j = static_cast<int>(e.subject);
      std::string why;
      auto shape = make_job_shape(trace_->jobs[j], *cluster_, &why);
      if (shape) {
        out_[j].shape = *shape;
        // A job no node set can ever hold is rejected at submission, as sbatch does.
        // Answered once per distinct shape less its time limit, which no fit reads (a
        // generated 300k-job trace has 42k distinct shapes, a few hundred without it).
        JobShape key = *shape;
        key.time_limit = SimTime();
        auto [it, fresh] = ever_fits_.try_emplace(std::move(key), false);
        if (fresh) it->second = allocator_->fits(*shape, *empty_, empty_->partition_order(shape->partition));
        if (!it->second) why = "requested node configuration is not available";
      }
      if (!shape || !why.empty()) {
        out_[j].status = JobStatus::kRejected;
        out_[j].reject_reason = why;
        ++finished_;
        break;
      }
      on_submit(j);
      break;
    }
    case EventKind::kJobEligible: on_eligible(static_cast<int>(e.subject)); break;
    case EventKind::kJobEnd:
      // A job whose speed changed has a newer end event; this one is stale.
      if (e.token != out_[static_cast<size_t>(e.subject)].end_token) break;
      on_end(static_cast<int>(e.subject));
      break;
    case EventKind::kSchedPass: schedule_once(); break;
    case EventKind::kWake:
      ++passes_;
      call_policy([&] { policy_->on_wake(*this, e.token); });
      break;
    case EventKind::kSample: break;
  }
}

void Simulation::schedule_once() {
  ++passes_;
  call_policy([&] { policy_->schedule(*this); });
}

void Simulation::run_pass(const std::function<void(SchedContext&)>& f) {
  ++passes_;
  call_policy([&] { f(*this); });
}

void Simulation::call_policy(const std::function<void()>& f) {
  started_this_pass_.clear();
  preempted_this_pass_.clear();
  f();
  set_deferred_ends();
  // Started jobs leave the queue; is_running_ already marks them, so no per-pass allocation.
  if (!started_this_pass_.empty()) std::erase_if(pending_, [&](int j) { return is_running_[j] != 0; });
  // Preempted jobs the pass did not start again rejoin the queue (once, in queue order).
  for (int j : preempted_this_pass_)
    if (!is_running_[j] && std::find(pending_.begin(), pending_.end(), j) == pending_.end()) insert_pending(j);
}

void Simulation::set_deferred_ends() {
  const auto together = static_cast<int>(ends_to_set_.size());
  for (int j : ends_to_set_) push_end(j, policy_->exit_latency_started_with(together));
  ends_to_set_.clear();
}

void Simulation::push_end(int j, SimTime latency) {
  auto& o = out_[j];
  const SimTime done = o.start + trace_->jobs[j].duration + latency;
  o.timed_out = o.kill_at != SimTime::infinite() && done > o.kill_at;
  o.end = o.timed_out ? o.kill_at : done;
  push(o.end, Phase::kRelease, EventKind::kJobEnd, j);
}

void Simulation::advance_to(SimTime t) {
  prime();
  while (!queue_.empty() && queue_.top().time <= t) process(queue_.pop());
}

SimulationResult Simulation::run() {
  prime();
  SimulationResult res;
  const size_t total = trace_->jobs.size();
  res.completed = true;
  while (!queue_.empty()) {
    // A self-driven policy's timers never run dry; the run is over once every job is.
    if (self_driven_ && finished_ == total) break;
    if (opt_.stop && opt_.stop->load(std::memory_order_relaxed)) {
      res.completed = false;
      break;
    }
    process(queue_.pop());
    if (opt_.progress && (events_ & 0x3fff) == 0) opt_.progress(finished_, total);
  }
  if (opt_.progress && res.completed) opt_.progress(finished_, total);
  res.fingerprint = fp_.value();
  res.events = events_;
  res.passes = passes_;
  res.end_time = now_;
  return res;
}

void Simulation::on_submit(int j) {
  out_[j].status = JobStatus::kPending;
  if (route_by_dependency(j)) waiting_.push_back(j);
}

Simulation::DepState Simulation::dependency_state(int j) const {
  const Dependency& dep = deps_[j];
  if (dep.clauses.empty()) return DepState::kMet;
  auto one = [&](const DepClause& c) -> DepState {
    if (c.invalid) return DepState::kNever;
    if (c.type == "singleton") {  // every earlier job of the same name and user has ended
      const Job& me = trace_->jobs[j];
      for (int k = 0; k < j; ++k) {
        const Job& o = trace_->jobs[k];
        if (o.name != me.name || o.user != me.user) continue;
        const auto st = out_[k].status;
        if (st == JobStatus::kFuture || st == JobStatus::kPending || st == JobStatus::kRunning) return DepState::kUnmet;
      }
      return DepState::kMet;
    }
    DepState all = DepState::kMet;
    for (const DepRef& r : c.refs)
      for (int k : r.jobs) {
        const auto& o = out_[k];
        DepState s = DepState::kUnmet;
        if (o.status == JobStatus::kRejected) {
          s = DepState::kNever;
        } else if (c.type == "after") {
          // Has begun execution (a preempted job, pending again, has).
          if (o.status == JobStatus::kRunning || o.status == JobStatus::kDone || o.preemptions > 0)
            s = now_ >= o.start + r.delay ? DepState::kMet : DepState::kUnmet;
        } else if (o.status == JobStatus::kDone) {
          if (c.type == "afterok") s = o.failed ? DepState::kNever : DepState::kMet;
          else if (c.type == "afternotok") s = o.failed ? DepState::kMet : DepState::kNever;
          else s = DepState::kMet;  // afterany, aftercorr, afterburstbuffer
        }
        if (s == DepState::kNever) return DepState::kNever;
        if (s == DepState::kUnmet) all = DepState::kUnmet;
      }
    return all;
  };
  bool unmet = false, never_all = true;
  for (const auto& c : dep.clauses) {
    const DepState s = one(c);
    if (dep.any) {
      if (s == DepState::kMet) return DepState::kMet;
      if (s != DepState::kNever) never_all = false;
    } else {
      if (s == DepState::kNever) return DepState::kNever;
      if (s == DepState::kUnmet) unmet = true;
    }
  }
  if (dep.any) return never_all ? DepState::kNever : DepState::kUnmet;
  return unmet ? DepState::kUnmet : DepState::kMet;
}

bool Simulation::route_by_dependency(int j) {
  switch (dependency_state(j)) {
    case DepState::kMet: push(now_, Phase::kState, EventKind::kJobEligible, j); return false;
    case DepState::kUnmet: return true;
    case DepState::kNever:
      out_[j].status = JobStatus::kRejected;
      out_[j].reject_reason = "DependencyNeverSatisfied";
      ++finished_;
      return false;
  }
  return false;
}

void Simulation::recheck_dependencies() {
  if (waiting_.empty()) return;
  std::erase_if(waiting_, [&](int j) { return !route_by_dependency(j); });
}

void Simulation::insert_pending(int j) {
  auto key = [&](int k) { return std::pair(trace_->jobs[k].submit, trace_->jobs[k].id); };
  auto pos = std::upper_bound(pending_.begin(), pending_.end(), j,
                              [&](int a, int b) { return key(a) < key(b); });
  pending_.insert(pos, j);
}

void Simulation::on_eligible(int j) {
  out_[j].eligible = now_;
  insert_pending(j);
  if (self_driven_) call_policy([&] { policy_->on_queued(*this, j); });
  request_pass();
}

void Simulation::leave_running(int j) {
  state_.release(out_[j].alloc);
  is_running_[j] = 0;
  auto it = std::find(running_.begin(), running_.end(), j);
  if (it != running_.end()) {
    *it = running_.back();
    running_.pop_back();
    const auto key = std::make_pair(end_key_[j], j);
    const auto at = std::lower_bound(by_end_.begin(), by_end_.end(), key);
    if (at == by_end_.end() || *at != key) throw std::logic_error("running job missing from the end order");
    by_end_.erase(at);
  }
  if (opt_.runtime) {
    opt_.runtime->job_ended(j);
    apply_speeds();
  }
}

void Simulation::on_end(int j) {
  auto& o = out_[j];
  o.status = JobStatus::kDone;
  if (o.timed_out) o.failed = true;  // a runtime model may have slowed it past its limit
  ++finished_;
  leave_running(j);
  recheck_dependencies();
  if (self_driven_) call_policy([&] { policy_->on_ended(*this, j); });
  // Kept to the end of the run for the outputs: packed, unless its task bindings are.
  if (!opt_.keep_task_bindings) {
    o.packed = PackedAllocation(o.alloc);
    o.alloc = Allocation{};
  }
  request_pass();
}

void Simulation::schedule_end(int j) {
  auto& o = out_[j];
  // Whole microseconds, rounded up: a job is never done before its work is.
  const double left_us = o.remaining_ref_us / o.speed;
  const SimTime work_done = o.progress_at + SimTime::us(static_cast<int64_t>(std::ceil(left_us - 1e-6))) +
                            policy_->exit_latency();
  o.timed_out = o.kill_at != SimTime::infinite() && work_done > o.kill_at;
  o.end = o.timed_out ? o.kill_at : work_done;
  o.end_token = next_end_token_++;
  push(o.end, Phase::kRelease, EventKind::kJobEnd, j, o.end_token);
}

void Simulation::apply_speeds() {
  speed_changes_.clear();
  opt_.runtime->changed_speeds(speed_changes_);
  for (const auto& [j, v] : speed_changes_) {
    auto& o = out_[j];
    if (!is_running_[j] || !(v > 0)) continue;
    // Bank the work done at the old speed, then continue at the new one.
    o.remaining_ref_us = std::max(0.0, o.remaining_ref_us - static_cast<double>((now_ - o.progress_at).count_us()) * o.speed);
    o.progress_at = now_;
    o.speed = v;
    o.speed_min = std::min(o.speed_min, v);
    o.speed_max = std::max(o.speed_max, v);
    fp_.add(0x5eedULL << 48 | static_cast<uint64_t>(j));
    schedule_end(j);
  }
}

std::vector<int> Simulation::running() const {
  std::vector<int> r = running_;
  std::sort(r.begin(), r.end());
  return r;
}

const std::vector<int>& Simulation::node_order(int j) const {
  return state_.partition_order(out_[j].shape.partition);
}

// The limit is on total run time: a resumed job may run for what its earlier segments left.
SimTime Simulation::expected_end(int j) const {
  const auto& o = out_[j];
  return (o.segment_start - o.run_before) + o.shape.time_limit;
}

SimTime Simulation::run_time(int j) const {
  const auto& o = out_[j];
  if (is_running_[j]) return o.run_before + (now_ - o.segment_start);
  if (o.status == JobStatus::kDone) return o.run_before + (o.end - o.segment_start);
  return o.run_before;
}

void Simulation::start(int j, Allocation a, StartedBy by) {
  auto& o = out_[j];
  if (o.status != JobStatus::kPending || is_running_[j])
    throw std::logic_error("policy started job " + std::to_string(j) + " that is not pending");
  const bool resumed = o.preemptions > 0;
  state_.allocate(a);
  o.alloc = std::move(a);
  held_[j] = {o.alloc.cores(), o.alloc.gpus()};
  o.gpu_tasks_numa_local = o.alloc.gpu_tasks_numa_local(*cluster_);
  o.status = JobStatus::kRunning;
  o.segment_start = now_;
  if (!resumed) {
    o.start = now_;
    o.started_by = by;
  } else {
    o.preempted_time += now_ - o.preempted_at;
  }
  const SimTime run = trace_->jobs[j].duration;
  // A resumed job is killed once its total run time passes the limit: as if it had
  // started run_before earlier and never stopped.
  const SimTime kill = o.shape.time_limit == SimTime::infinite()
                           ? SimTime::infinite()
                           : policy_->kill_time(now_ - o.run_before, o.shape.time_limit);
  o.kill_at = kill;
  if (!resumed) {
    o.remaining_ref_us = static_cast<double>(run.count_us());
    o.speed_min = o.speed_max = 1;
  } else {
    // The restore is extra work (reference work with a RuntimeModel: at speed 1, exactly resume_cost).
    o.remaining_ref_us += static_cast<double>(o.resume_cost.count_us());
    o.resume_cost = SimTime{};
  }
  o.progress_at = now_;
  o.speed = 1;
  is_running_[j] = 1;
  running_.push_back(j);
  end_key_[j] = expected_end(j);
  const auto key = std::make_pair(end_key_[j], j);
  by_end_.insert(std::lower_bound(by_end_.begin(), by_end_.end(), key), key);
  started_this_pass_.push_back(j);
  fp_.add(0xfeedULL << 48 | static_cast<uint64_t>(j));
  if (opt_.runtime) {
    opt_.runtime->job_started(j, trace_->jobs[j], o.shape, o.alloc);
    apply_speeds();  // lists j itself, so its end event is scheduled there
  } else if (resumed) {
    schedule_end(j);  // from the remaining work at speed 1, with a fresh end token
  } else if (policy_->exit_latency_grows()) {
    ends_to_set_.push_back(j);  // set_deferred_ends, once the call's starts are counted
  } else {
    push_end(j, policy_->exit_latency());
  }
  const auto rs = trace_->jobs[j].recorded_state;
  o.failed = o.timed_out || rs == RecordedState::kFailed || rs == RecordedState::kCancelled;
  if (!waiting_.empty()) recheck_dependencies();  // "after" dependencies
}

void Simulation::preempt(int j, SimTime resume_cost) {
  auto& o = out_[j];
  if (o.status != JobStatus::kRunning || !is_running_[j])
    throw std::logic_error("policy preempted job " + std::to_string(j) + " that is not running");
  if (resume_cost < SimTime{} || resume_cost.is_infinite())
    throw std::logic_error("policy preempted job " + std::to_string(j) + " with an invalid resume cost");
  // Bank the work done in this segment (speed 1 without a RuntimeModel).
  o.remaining_ref_us =
      std::max(0.0, o.remaining_ref_us - static_cast<double>((now_ - o.progress_at).count_us()) * o.speed);
  o.progress_at = now_;
  o.preempted_segments.push_back({o.segment_start, now_, o.alloc});
  for (auto& na : o.preempted_segments.back().alloc.nodes) na.bindings = {};  // resources only: keeps it small
  o.run_before += now_ - o.segment_start;
  o.preempted_at = now_;
  o.resume_cost = resume_cost;
  ++o.preemptions;
  o.status = JobStatus::kPending;
  o.timed_out = false;
  o.kill_at = SimTime::infinite();
  o.end = now_;
  o.end_token = next_end_token_++;  // its scheduled end event is stale now
  preempted_this_pass_.push_back(j);
  fp_.add(0xdeadULL << 48 | static_cast<uint64_t>(j));
  leave_running(j);
}

void Simulation::reserve(int j, SimTime planned) {
  auto& o = out_[j];
  if (!o.first_reservation || planned < *o.first_reservation) o.first_reservation = planned;
}

}  // namespace gcsim
