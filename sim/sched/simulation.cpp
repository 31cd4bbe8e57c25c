#include "sim/sched/simulation.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "sim/core/input_file.hpp"

namespace gcsim {

Simulation::Simulation(const Cluster& cluster, const Trace& trace, Policy& policy, const Allocator& allocator,
                       SimulationOptions options)
    : cluster_(&cluster),
      trace_(&trace),
      policy_(&policy),
      allocator_(&allocator),
      opt_(std::move(options)),
      queue_(opt_.reverse_ties),
      state_(cluster) {
  out_.resize(trace.jobs.size());
  is_running_.assign(trace.jobs.size(), 0);
  for (size_t p = 0; p < cluster.partitions.size(); ++p)
    partition_order_.push_back(partition_node_order(cluster, static_cast<int>(p)));
  self_driven_ = !policy.pass_on_change();
  for (size_t j = 0; j < trace.jobs.size(); ++j) {
    const int64_t id = trace.jobs[j].id.value;
    if (id < 0) continue;
    if (static_cast<size_t>(id) >= jobs_by_id_.size()) jobs_by_id_.resize(static_cast<size_t>(id) + 1);
    jobs_by_id_[static_cast<size_t>(id)].push_back(static_cast<int>(j));
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
        if (!allocator_->allocate(*shape, *empty_, partition_order_[shape->partition]))
          why = "requested node configuration is not available";
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
    case EventKind::kJobEnd: on_end(static_cast<int>(e.subject)); break;
    case EventKind::kSchedPass: schedule_once(); break;
    case EventKind::kWake:
      ++passes_;
      started_this_pass_.clear();
      policy_->on_wake(*this, e.token);
      if (!started_this_pass_.empty()) std::erase_if(pending_, [&](int j) { return is_running_[j] != 0; });
      break;
    case EventKind::kSample: break;
  }
}

void Simulation::schedule_once() {
  ++passes_;
  started_this_pass_.clear();
  policy_->schedule(*this);
  // Started jobs leave the queue; is_running_ already marks them, so no per-pass allocation.
  if (!started_this_pass_.empty()) std::erase_if(pending_, [&](int j) { return is_running_[j] != 0; });
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
  switch (dependency_state(j)) {
    case DepState::kMet: push(now_, Phase::kState, EventKind::kJobEligible, j); break;
    case DepState::kUnmet: waiting_.push_back(j); break;
    case DepState::kNever:
      out_[j].status = JobStatus::kRejected;
      out_[j].reject_reason = "DependencyNeverSatisfied";
      ++finished_;
      break;
  }
}

// --dependency=type:id[:id...][,type:...] (all must hold) or with '?' (any may hold);
// singleton: every earlier job of the same name and user has ended.
Simulation::DepState Simulation::dependency_state(int j) const {
  const std::string& d = trace_->jobs[j].req.dependency;
  if (d.empty()) return DepState::kMet;
  const bool any = d.find('?') != std::string::npos;
  auto one = [&](std::string_view item) -> DepState {
    const auto parts = split(item, ':');
    const std::string type = to_lower(trim(parts[0]));
    if (type == "singleton") {
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
    for (size_t i = 1; i < parts.size(); ++i) {
      std::string_view ref = trim(parts[i]);
      int64_t delay_min = 0;
      if (auto plus = ref.find('+'); plus != std::string_view::npos) {
        delay_min = std::atoll(std::string(ref.substr(plus + 1)).c_str());
        ref = ref.substr(0, plus);
      }
      int64_t task = -1;
      if (auto us = ref.find('_'); us != std::string_view::npos) {
        task = std::atoll(std::string(ref.substr(us + 1)).c_str());
        ref = ref.substr(0, us);
      }
      const int64_t id = std::atoll(std::string(ref).c_str());
      if (id < 0 || static_cast<size_t>(id) >= jobs_by_id_.size() || jobs_by_id_[static_cast<size_t>(id)].empty())
        return DepState::kNever;  // Slurm refuses the job: invalid dependency
      for (int k : jobs_by_id_[static_cast<size_t>(id)]) {
        if (task >= 0 && trace_->jobs[k].array_task != task) continue;
        const auto& o = out_[k];
        DepState s = DepState::kUnmet;
        if (o.status == JobStatus::kRejected) {
          s = DepState::kNever;
        } else if (type == "after") {
          if (o.status == JobStatus::kRunning || o.status == JobStatus::kDone)
            s = now_ >= o.start + SimTime::seconds(60 * delay_min) ? DepState::kMet : DepState::kUnmet;
        } else if (o.status == JobStatus::kDone) {
          if (type == "afterany" || type == "aftercorr") s = DepState::kMet;
          else if (type == "afterok") s = o.failed ? DepState::kNever : DepState::kMet;
          else if (type == "afternotok") s = o.failed ? DepState::kMet : DepState::kNever;
          else s = DepState::kMet;
        }
        if (s == DepState::kNever) return DepState::kNever;
        if (s == DepState::kUnmet) all = DepState::kUnmet;
      }
    }
    return all;
  };
  const auto items = split(d, any ? '?' : ',');
  bool unmet = false, never_all = true;
  for (const auto& it : items) {
    const DepState s = one(it);
    if (any) {
      if (s == DepState::kMet) return DepState::kMet;
      if (s != DepState::kNever) never_all = false;
    } else {
      if (s == DepState::kNever) return DepState::kNever;
      if (s == DepState::kUnmet) unmet = true;
    }
  }
  if (any) return never_all ? DepState::kNever : DepState::kUnmet;
  return unmet ? DepState::kUnmet : DepState::kMet;
}

void Simulation::recheck_dependencies() {
  if (waiting_.empty()) return;
  std::vector<int> still;
  for (int j : waiting_) {
    switch (dependency_state(j)) {
      case DepState::kMet: push(now_, Phase::kState, EventKind::kJobEligible, j); break;
      case DepState::kUnmet: still.push_back(j); break;
      case DepState::kNever:
        out_[j].status = JobStatus::kRejected;
        out_[j].reject_reason = "DependencyNeverSatisfied";
        ++finished_;
        break;
    }
  }
  waiting_ = std::move(still);
}

void Simulation::on_eligible(int j) {
  out_[j].eligible = now_;
  const Job& job = trace_->jobs[j];
  auto key = [&](int k) { return std::pair(trace_->jobs[k].submit, trace_->jobs[k].id); };
  auto pos = std::upper_bound(pending_.begin(), pending_.end(), j,
                              [&](int a, int b) { return key(a) < key(b); });
  (void)job;
  pending_.insert(pos, j);
  if (self_driven_) {
    started_this_pass_.clear();
    policy_->on_queued(*this, j);
    if (!started_this_pass_.empty()) std::erase_if(pending_, [&](int k) { return is_running_[k] != 0; });
  }
  request_pass();
}

void Simulation::on_end(int j) {
  auto& o = out_[j];
  state_.release(o.alloc);
  o.status = JobStatus::kDone;
  is_running_[j] = 0;
  auto it = std::find(running_.begin(), running_.end(), j);
  if (it != running_.end()) {
    *it = running_.back();
    running_.pop_back();
  }
  ++finished_;
  recheck_dependencies();
  if (self_driven_) {
    started_this_pass_.clear();
    policy_->on_ended(*this, j);
    if (!started_this_pass_.empty()) std::erase_if(pending_, [&](int k) { return is_running_[k] != 0; });
  }
  request_pass();
}

std::vector<int> Simulation::running() const {
  std::vector<int> r = running_;
  std::sort(r.begin(), r.end());
  return r;
}

const std::vector<int>& Simulation::node_order(int j) const { return partition_order_[out_[j].shape.partition]; }

SimTime Simulation::expected_end(int j) const { return out_[j].start + out_[j].shape.time_limit; }

void Simulation::start(int j, const Allocation& a, StartedBy by) {
  auto& o = out_[j];
  if (o.status != JobStatus::kPending || is_running_[j])
    throw std::logic_error("policy started job " + std::to_string(j) + " that is not pending");
  state_.allocate(a);
  o.alloc = a;
  o.status = JobStatus::kRunning;
  o.start = now_;
  o.started_by = by;
  const SimTime run = trace_->jobs[j].duration;
  const SimTime kill = o.shape.time_limit == SimTime::infinite() ? SimTime::infinite()
                                                                 : policy_->kill_time(now_, o.shape.time_limit);
  const SimTime done = now_ + run + policy_->exit_latency();
  o.timed_out = kill != SimTime::infinite() && done > kill;
  o.end = o.timed_out ? kill : done;
  const auto rs = trace_->jobs[j].recorded_state;
  o.failed = o.timed_out || rs == RecordedState::kFailed || rs == RecordedState::kCancelled;
  is_running_[j] = 1;
  running_.push_back(j);
  started_this_pass_.push_back(j);
  fp_.add(0xfeedULL << 48 | static_cast<uint64_t>(j));
  push(o.end, Phase::kRelease, EventKind::kJobEnd, j);
  if (!waiting_.empty()) recheck_dependencies();  // "after" dependencies
}

void Simulation::reserve(int j, SimTime planned) {
  auto& o = out_[j];
  if (!o.first_reservation || planned < *o.first_reservation) o.first_reservation = planned;
}

}  // namespace gcsim
