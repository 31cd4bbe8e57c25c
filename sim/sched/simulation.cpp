#include "sim/sched/simulation.hpp"

#include <algorithm>

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
  // Eligibility: immediately (begin times and dependencies come with the slurm policy).
  push(now_, Phase::kState, EventKind::kJobEligible, j);
}

void Simulation::on_eligible(int j) {
  out_[j].eligible = now_;
  const Job& job = trace_->jobs[j];
  auto key = [&](int k) { return std::pair(trace_->jobs[k].submit, trace_->jobs[k].id); };
  auto pos = std::upper_bound(pending_.begin(), pending_.end(), j,
                              [&](int a, int b) { return key(a) < key(b); });
  (void)job;
  pending_.insert(pos, j);
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
  state_.allocate(a);
  o.alloc = a;
  o.status = JobStatus::kRunning;
  o.start = now_;
  o.started_by = by;
  const SimTime run = trace_->jobs[j].duration;
  o.timed_out = run > o.shape.time_limit;
  o.end = now_ + (o.timed_out ? o.shape.time_limit : run);
  is_running_[j] = 1;
  running_.push_back(j);
  started_this_pass_.push_back(j);
  fp_.add(0xfeedULL << 48 | static_cast<uint64_t>(j));
  push(o.end, Phase::kRelease, EventKind::kJobEnd, j);
}

void Simulation::reserve(int j, SimTime planned) {
  auto& o = out_[j];
  if (!o.first_reservation || planned < *o.first_reservation) o.first_reservation = planned;
}

}  // namespace gcsim
