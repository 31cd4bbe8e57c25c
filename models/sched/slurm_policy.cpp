#include "models/sched/slurm_policy.hpp"

#include <algorithm>
#include <bit>
#include <iterator>
#include <limits>
#include <memory>
#include <set>
#include <stdexcept>
#include <utility>

#include "models/sched/backfill_nodes.hpp"

namespace gcsim {

namespace {

using bf::NodeSet;
using bf::NodeWords;
using bf::ReservationList;
using bf::add_node_range;
using bf::add_reservation;
using bf::Slot;

/// Where a running job holds cores: its nodes of one node word holding the same number
/// of its cores, so the cores it holds on a candidate set are sums of popcounts.
struct Foot {
  size_t word;
  uint64_t mask;
  int64_t cores;
};

/// A running job for backfill: planned end, index, its feet [foot_begin, foot_end)
/// (BackfillFutures::feet_of, whose buffers stay put while the job runs).
struct Run {
  SimTime end;
  int job;
  const Foot* foot_begin;
  const Foot* foot_end;
  bool operator<(const Run& o) const { return end != o.end ? end < o.end : job < o.job; }
};

/// The first of runs [from, n) with a node in `cand` (n if none), and in `*cores` the
/// cores it holds there: one call per running job on `cand`, not one per running job
/// walked (an ifunc call each, 142M in a mid-Curie run, where 3 in 4 walked are off
/// `cand`), and no branch per foot.
GCSIM_POPCNT_CLONES size_t next_on(const Run* runs, size_t from, size_t n, const NodeSet& cand, int64_t* cores) {
  for (; from < n; ++from) {
    // (each job's feet are a heap block of their own: fetched a few jobs ahead)
    if (from + 4 < n) __builtin_prefetch(runs[from + 4].foot_begin);
    int64_t on = 0;
    uint64_t any = 0;
    for (const Foot *f = runs[from].foot_begin, *e = runs[from].foot_end; f != e; ++f) {
      const uint64_t m = cand.word(f->word) & f->mask;
      any |= m;
      on += f->cores * std::popcount(m);
    }
    if (any != 0) {
      *cores = on;
      return from;
    }
  }
  return n;
}

/// The free cores of `st`'s nodes in `cand`: a word's sum where the word's open nodes
/// are all candidates.
GCSIM_POPCNT_CLONES int64_t free_cores_on(const ClusterState& st, const NodeSet& cand) {
  int64_t sum = 0;
  const uint64_t* open = st.open_bits();
  const int32_t* fc = st.free_cores_by_node();
  for (size_t w = 0; w < st.node_words(); ++w) {
    const uint64_t m = cand.word(w) & open[w];
    if (m == open[w]) {
      sum += st.word_free_cores(w);
      continue;
    }
    for (uint64_t x = m; x != 0; x &= x - 1) sum += fc[w * 64 + static_cast<size_t>(std::countr_zero(x))];
  }
  return sum;
}

/// What backfill's will-run test found for one candidate set.
struct WillRun {
  bool enough_nodes = false;  // the candidates number at least the job's minimum
  bool fit = false;
  bool now = false;           // fits on the present state
  SimTime last_end;           // else: the last end its batches removed
  std::optional<Allocation> plan;  // chosen nodes, where the test had to choose
  const ClusterState* state = nullptr;  // the state it fits on: the present with
  size_t state_k = 0;                   // the first state_k running jobs released
};

void add_feet(const Allocation& a, std::vector<Foot>& feet) {
  for (const auto& na : a.nodes) {
    const size_t w = static_cast<size_t>(na.node) >> 6;
    const uint64_t bit = uint64_t{1} << (na.node & 63);
    const auto c = static_cast<int64_t>(na.cores.size());
    if (!feet.empty() && feet.back().word == w && feet.back().cores == c) {
      feet.back().mask |= bit;
    } else {
      feet.push_back(Foot{w, bit, c});
    }
  }
}

SimTime floor_to(SimTime t, SimTime q) {
  const int64_t v = t.count_us(), s = q.count_us();
  const int64_t f = v >= 0 ? v / s : -((-v + s - 1) / s);
  return SimTime::us(f * s);
}

const SimTime kYear = SimTime::seconds(365LL * 86400);


}  // namespace

/// The open-addressing slots of a cache whose entries live in a vector: (generation,
/// entry index + 1), where only the current generation's count, so that clearing is an
/// increment (clearing a table per state change was as dear as the tests it saved).
struct StampedSlots {
  std::vector<std::pair<uint32_t, uint32_t>> slots;
  uint32_t gen = 1;
  explicit StampedSlots(size_t n) : slots(n) {}
  [[nodiscard]] size_t mask() const { return slots.size() - 1; }
  [[nodiscard]] bool live(size_t i) const { return slots[i].first == gen; }
  [[nodiscard]] size_t entry(size_t i) const { return slots[i].second - 1; }
  void set(size_t i, size_t entry) { slots[i] = {gen, static_cast<uint32_t>(entry + 1)}; }
  void clear() {
    if (++gen == 0) {
      std::fill(slots.begin(), slots.end(), std::pair<uint32_t, uint32_t>{0, 0});
      gen = 1;
    }
  }
  /// Before adding entry `used`: doubles the slots where it would fill more than half,
  /// and slots entries [0, used) again by key_of(entry). True if they moved.
  template <class KeyOf>
  bool make_room(size_t used, KeyOf key_of) {
    if (2 * (used + 1) <= slots.size()) return false;
    slots.assign(slots.size() * 2, {0, 0});
    gen = 1;
    for (size_t e = 0; e < used; ++e) {
      size_t i = key_of(e) & mask();
      while (live(i)) i = (i + 1) & mask();
      set(i, e);
    }
    return true;
  }
};

/// What the will-run caches share: entries [0, used), each with its candidate set in
/// one buffer (cands[i * words]), slotted by a key, and made on one present at one
/// changes() count. A job that leaves the queue without a state change (a cancellation)
/// leaves its entries behind, so they are bounded: 2^15 entries, fewer where their node
/// sets would pass 32 MiB (Curie's 87-word sets: 22 MiB at most); past it they start over.
struct CandidateEntries {
  size_t words;
  size_t used = 0;
  std::vector<uint64_t> cands;
  StampedSlots slots;
  const ClusterState* of = nullptr;
  uint64_t version = 0;  // of->changes() when the entries were made
  size_t max_entries;

  CandidateEntries(size_t n_words, size_t n_slots)
      : words(n_words),
        slots(n_slots),
        max_entries(std::clamp<size_t>((size_t{32} << 20) / (8 * std::max<size_t>(n_words, 1)), 64, size_t{1} << 15)) {}
  void clear() {
    used = 0;
    slots.clear();
  }
  /// Forgets everything unless the present is the one the entries were made on.
  void sync(const ClusterState& s) {
    if (of == &s && version == s.changes()) return;
    clear();
    of = &s;
    version = s.changes();
  }
  [[nodiscard]] bool cands_equal(size_t e, const NodeSet& cand) const {
    return std::equal(cand.data(), cand.data() + words, cands.begin() + static_cast<std::ptrdiff_t>(e * words));
  }
  void store_cands(size_t e, const NodeSet& cand) {
    if (cands.size() < (e + 1) * words) cands.resize((e + 1) * words);
    std::copy(cand.data(), cand.data() + words, cands.begin() + static_cast<std::ptrdiff_t>(e * words));
  }
};

/// Will-run walks by candidate set. A will-run test walks the running jobs in end
/// order, in batches, and tests the job after each batch (backfill's will_run): the
/// batches and the free cores on the candidates after each do not depend on the job,
/// only where the walk stops, nor on the cycle's time (the batches' base is a running
/// job's end on the wall clock's 30 s grid). So the jobs with the same candidates (half
/// of a mid-Curie run's will-run tests) read one walk, made as far as the furthest of
/// them needed. Valid while the present and the running jobs are those it was made on:
/// cleared when the present changes (a start, an end), kept over cycles that follow
/// no change.
struct WalkMemo : CandidateEntries {
  /// After a batch: the running jobs released (the first `next`), the last end
  /// removed, and the candidates' free cores then.
  struct Point {
    size_t next;
    SimTime last_end;
    int64_t cand_free;
  };
  struct Walk {
    uint64_t hash = 0;
    int64_t free0 = 0;  // the candidates' free cores now
    std::vector<Point> points;
    // where the walk stands: the list position after the last job reached, that job's
    // end and cores on the candidates, the batches' base and width, the free cores
    size_t next = 0;
    SimTime e, base, w;
    int64_t c = 0, cand_free = 0;
    bool begun = false, done = false;
  };
  std::vector<Walk> walks;  // [0, used) valid, slotted by hash
  uint64_t reused = 0;

  explicit WalkMemo(size_t n_words) : CandidateEntries(n_words, size_t{1} << 8) {}
  /// The walk of `cand` (hash h) on present `st`, new (with free0 unset, begun false)
  /// if none was made since `st` last changed.
  Walk& of_cand(const ClusterState& st, const NodeSet& cand, uint64_t h, bool* made) {
    sync(st);
    if (used >= max_entries) clear();
    slots.make_room(used, [this](size_t i) { return walks[i].hash; });
    size_t at = h & slots.mask();
    for (; slots.live(at); at = (at + 1) & slots.mask()) {
      const size_t i = slots.entry(at);
      if (walks[i].hash == h && cands_equal(i, cand)) {
        *made = false;
        ++reused;
        return walks[i];
      }
    }
    if (used == walks.size()) walks.emplace_back();
    Walk& k = walks[used];
    k.hash = h;
    k.points.clear();
    k.next = 0;
    k.c = k.cand_free = 0;
    k.begun = k.done = false;
    store_cands(used, cand);
    slots.set(at, used++);
    *made = true;
    return k;
  }
};

/// Will-run outcomes by (job, candidate nodes), kept from cycle to cycle while the
/// present state is unchanged. The test reads only the job's shape, its candidates, the
/// present and the running jobs' ends (fixed at their starts); not the cycle's time or
/// reservations. So where no job started or ended between two cycles, the next cycle
/// asks the same questions again: 4 in 10 mid-Curie cycles do, and 99% of their tests
/// are a job and candidates the cycle before tested. (--switches jobs read their wait
/// and are not kept.)
struct WillRunCache : CandidateEntries {
  struct Entry {
    uint64_t key;
    int job;
    WillRun wr;
    bool planned = false;  // `nodes` holds plan_nodes' choice for wr.state
    std::vector<std::pair<int, int>> nodes;
  };
  std::vector<Entry> entries;  // [0, used) valid, slotted by key
  uint64_t reused = 0;  // outcomes found

  explicit WillRunCache(size_t n_words) : CandidateEntries(n_words, size_t{1} << 10) {}
  /// The key of (job, cand), from cand.hash().
  [[nodiscard]] static uint64_t key(int job, uint64_t cand_hash) {
    const uint64_t h = (0x9E3779B97F4A7C15ULL * (static_cast<uint64_t>(job) + 1)) ^ cand_hash;
    return h ^ (h >> 31);
  }
  /// The entry of (job, cand), or nullptr; `*slot` is where it belongs.
  Entry* find(uint64_t k, int job, const NodeSet& cand, size_t* slot) {
    for (size_t i = k & slots.mask();; i = (i + 1) & slots.mask()) {
      if (!slots.live(i)) {
        *slot = i;
        return nullptr;
      }
      const size_t e = slots.entry(i);
      Entry& x = entries[e];
      if (x.key == k && x.job == job && cands_equal(e, cand)) return &x;
    }
  }
  Entry& put(size_t slot, uint64_t k, int job, const NodeSet& cand, const WillRun& wr) {
    if (used >= max_entries) clear();
    const bool moved = slots.make_room(used, [this](size_t e) { return entries[e].key; });
    if (used == 0 || moved) find(k, job, cand, &slot);  // the slot moved
    if (used == entries.size()) entries.emplace_back();
    Entry& x = entries[used];
    x.key = k;
    x.job = job;
    x.wr = wr;
    x.wr.state = nullptr;  // a future state may be evicted: found again by state_k
    x.planned = false;
    store_cands(used, cand);
    slots.set(slot, used++);
    return x;
  }
};

/// Each tested job's outcome in the last backfill cycle, replayed by the next one while
/// the present is unchanged. A cycle after no start and no end asks the previous one's
/// questions again a bucket of time later: in mid-Curie 14,392 of 28,875 cycles, where
/// 9 in 10 tested jobs come out as before (a third of the run's time). A job's attempts
/// read the cycle's time `now` only in the comparisons kept here; where none of them
/// turns, and the reservations before it are the same, its outcome is the same:
///  - its first window [now, now + limit] gains no reservation: none of the list begins
///    in (now0 + limit, now + limit] (every reservation ends after now: they begin at
///    planned starts floored, and those are after now, or the job would start);
///  - each fitting attempt's planned start t = max(start_res, last_end or now + 1 s)
///    is the same and after now: now < `before`;
///  - the table's end (now + bf_window, floored) bounds what the attempts saw. Where it
///    has moved on, the job must not have looked past the old end: no later_start walk
///    reaching the table's last slot (a window that starts at or after the end walks
///    no slot, so this holds too), its reservation beginning before the old end, and no
///    reservation of the cycle beginning at or after it.
/// Jobs that started, or were refused a start, or broke at bf_window, or read their
/// wait (--switches) are not replayed. A job tested again (no record, or one not
/// valid now) whose reservation comes out as before lets the replay go on.
struct BackfillReplay {
  struct Record {
    int job = -1;
    bool replayable = false;
    bool reserved = false;
    bool walked_out = false;  // a later_start walk reached the table's last slot
    SimTime now0, te0;        // the cycle that tested it, and its table end
    SimTime before = SimTime::infinite();  // valid while now < before
    SimTime rb, re, t;        // its reservation, and planned start
    NodeWords nodes;
    [[nodiscard]] bool same_reservation(const Record& o) const {
      return reserved == o.reserved && (!reserved || (rb == o.rb && re == o.re && nodes == o.nodes));
    }
  };
  std::vector<Record> recs, next;  // the last cycle's tested jobs in test order; this cycle's
  // node buffers of dropped records, for this cycle's reservations (a heap block per
  // reservation, made and freed, was 4% of a full Curie run)
  std::vector<NodeWords> spare;
  /// Drops `next`, keeping its records' node buffers.
  void clear_next() {
    for (Record& r : next)
      if (r.nodes.capacity() != 0 && spare.size() < kSpare) spare.push_back(std::move(r.nodes));
    next.clear();
  }
  /// `nodes` copied into `r`, in a kept buffer where there is one.
  void set_nodes(Record& r, const NodeWords& nodes) {
    if (r.nodes.capacity() == 0 && !spare.empty()) {
      r.nodes = std::move(spare.back());
      spare.pop_back();
    }
    r.nodes.assign(nodes.begin(), nodes.end());
  }
  static constexpr size_t kSpare = 4096;
  // the present they were tested on, at its changes() `version`; none where that cycle
  // started a job (the records before the start were tested on another present)
  const ClusterState* of = nullptr;
  uint64_t version = 0;
  uint64_t replayed = 0;
  uint64_t checked = 0, mismatched = 0;  // check_replays_: tested anyway, and found otherwise
};

/// Backfill's future states, kept from cycle to cycle: a running job's end time is
/// fixed at its start, so "the present with every running job that ends by (end, job)
/// released" stays true under a start or an end when the state takes or gives back
/// that job's resources, where it ends after the key. Rebuilding them every cycle was
/// a third of a Curie run (2.2M state copies and 24M releases).
struct BackfillFutures {
  struct Entry {
    SimTime end;  // key: released are the running jobs with (end, job) <= (end, job)
    int job;
    std::unique_ptr<ClusterState> state;
    uint64_t used;  // the last cycle that read it
    [[nodiscard]] bool before(SimTime e, int j) const { return end != e ? end < e : job < j; }
  };
  std::vector<Entry> list;  // by key
  const ClusterState* of = nullptr;  // the present they follow, at its changes() = synced
  uint64_t synced = 0;
  uint64_t cycle = 0;
  /// Kept while read in the last kKeep cycles.
  static constexpr uint64_t kKeep = 4;
  /// The running jobs by (end, job), with where they hold cores, kept the same way
  /// (rebuilding them every cycle walked every node of every running job); valid
  /// while runs_ok, else rebuilt by the next cycle.
  std::vector<Run> runs;
  std::vector<std::vector<Foot>> feet_of;  // by job index
  bool runs_ok = false;

  [[nodiscard]] bool in_sync(const ClusterState& s) const { return of == &s && synced == s.changes(); }
  void reset(const ClusterState& s) {
    list.clear();
    for (const Run& r : runs) std::vector<Foot>().swap(feet_of[static_cast<size_t>(r.job)]);
    runs.clear();
    runs_ok = false;
    of = &s;
    synced = s.changes();
  }
  void add_run(const Allocation& a, SimTime end, int j) {
    if (feet_of.size() <= static_cast<size_t>(j)) feet_of.resize(static_cast<size_t>(j) + 1);
    auto& feet = feet_of[static_cast<size_t>(j)];
    feet.clear();
    add_feet(a, feet);
    const Run r{end, j, feet.data(), feet.data() + feet.size()};
    runs.insert(std::upper_bound(runs.begin(), runs.end(), r), r);
  }
  void drop_run(SimTime end, int j) {
    const auto at = std::lower_bound(runs.begin(), runs.end(), Run{end, j, nullptr, nullptr});
    if (at == runs.end() || at->end != end || at->job != j) return;
    runs.erase(at);
    std::vector<Foot>().swap(feet_of[static_cast<size_t>(j)]);
  }
  /// After the present took (`take`) or gave back job `j`'s allocation `a`, ending at
  /// `end`: the running jobs and the states that release less than j follow it. Any
  /// other change since the last one they saw, and they are dropped (the running jobs
  /// at the next cycle: one may be going on).
  void follow(const ClusterState& s, bool take, const Allocation& a, SimTime end, int j) {
    if (take) add_run(a, end, j);
    else drop_run(end, j);
    if (of != &s || synced + 1 != s.changes()) {
      list.clear();
      runs_ok = false;
      return;
    }
    synced = s.changes();
    for (auto& f : list) {
      if (!f.before(end, j)) break;
      if (take) f.state->allocate(a);
      else f.state->release(a);
    }
  }
  /// Drops the states not read lately, and those that release nothing running (below
  /// `first`, the running job that ends first): they are the present.
  void evict(const Run* first) {
    std::erase_if(list, [&](const Entry& f) {
      return f.used + kKeep < cycle || first == nullptr || f.before(first->end, first->job);
    });
  }
};

/// Node sets every backfill cycle starts from, built once (a cycle used to set 5,544
/// bits for each, 7% of a Curie run).
struct BackfillNodeSets {
  NodeSet all;
  uint64_t all_hash;
  std::vector<NodeSet> parts;
  explicit BackfillNodeSets(const Cluster& c) : all(c.nodes.size()) {
    for (size_t n = 0; n < c.nodes.size(); ++n) all.set(static_cast<int>(n));
    all_hash = all.hash();
    for (const auto& p : c.partitions) {
      parts.emplace_back(c.nodes.size());
      for (int n : p.nodes) parts.back().set(n);
    }
  }
};

SlurmPolicy::~SlurmPolicy() = default;

void SlurmPolicy::forget_will_runs() {
  if (will_runs_) will_runs_->clear();
  if (replay_) replay_->of = nullptr;
}

uint64_t SlurmPolicy::will_runs_reused() const { return will_runs_ ? will_runs_->reused : 0; }
uint64_t SlurmPolicy::walks_shared() const { return walks_ ? walks_->reused : 0; }
uint64_t SlurmPolicy::chains_shared() const { return chains_shared_; }
uint64_t SlurmPolicy::outcomes_replayed() const { return replay_ ? replay_->replayed : 0; }
std::pair<uint64_t, uint64_t> SlurmPolicy::replays_checked() const {
  return replay_ ? std::pair{replay_->checked, replay_->mismatched} : std::pair<uint64_t, uint64_t>{0, 0};
}

SlurmPolicy::SlurmPolicy(const SlurmPolicyInputs& in, Diagnostics& warnings)
    : cluster_(in.cluster), selector_(*in.cluster, SlurmSchedConfig{}) {
  Diagnostics d;
  cfg_ = read_slurm_sched_config(*cluster_, in.overrides, d);
  PriorityConfig pc = read_priority_config(*cluster_, d);
  AccountTree tree = in.accounts_path.empty() ? make_root_account_tree() : read_sacctmgr_dump(in.accounts_path);
  if (in.accounts_path.empty() && pc.w_fairshare > 0)
    d.warning(SourceLoc{cluster_->source, 0, 0},
              "PriorityWeightFairshare is set but no --accounts file was given: every account gets Fairshare=1");
  if (d.has_errors()) throw InputError(d);
  for (const auto& x : d.all()) {
    if (x.severity == Severity::kWarning) warnings.warning(x.loc, x.message);
  }
  mf_ = std::make_unique<MultifactorPriority>(*cluster_, pc, std::move(tree));
  selector_ = SlurmSelector(*cluster_, cfg_);
  last_sched_ = last_full_ = cfg_.ctld_start;
}

std::vector<std::pair<std::string, std::string>> SlurmPolicy::parameters() const {
  auto p = cfg_.describe();
  const auto& pc = mf_->config();
  p.emplace_back("priority", pc.multifactor ? (pc.fair_tree ? "multifactor/fair_tree" : "multifactor/classic") : "basic");
  p.emplace_back("priority_calc_period", std::to_string(pc.calc_period.to_seconds()));
  return p;
}

SimTime SlurmPolicy::kill_time(SimTime start, SimTime limit) const {
  // Slurm's job_time_limit() runs every 30 s (from controller start) and kills a job
  // once now > end_time + OverTimeLimit, with end_time in whole seconds.
  const SimTime deadline = wall_s(start) + limit + cfg_.over_time_limit;
  if (deadline.is_infinite()) return SimTime::infinite();
  const SimTime p = cfg_.time_limit_check;
  SimTime t = cfg_.ctld_start + floor_to(deadline - cfg_.ctld_start, p);
  while (t <= deadline) t += p;
  return t;
}

SimTime SlurmPolicy::wall_floor(SimTime t, SimTime q) const {
  return floor_to(t + cfg_.wall_clock_zero, q) - cfg_.wall_clock_zero;
}

SimTime SlurmPolicy::wall_s(SimTime t) const { return wall_floor(t, SimTime::seconds(1)); }

SimTime SlurmPolicy::main_grid(SimTime at_least) const {
  const auto& a = cfg_.main_tick_times;
  if (a.empty()) return grid(at_least, cfg_.main_tick_phase, cfg_.main_tick_period);
  const SimTime p = cfg_.main_tick_period;
  if (at_least <= a.front()) return a.front() - floor_to(a.front() - at_least, p);
  if (at_least > a.back()) {
    const SimTime t = a.back() + floor_to(at_least - a.back(), p);
    return t < at_least ? t + p : t;
  }
  // a[i - 1] < at_least <= a[i]: the gap holds round(gap / p) equal ticks
  const size_t i = static_cast<size_t>(std::lower_bound(a.begin(), a.end(), at_least) - a.begin());
  if (a[i] == at_least) return at_least;
  const int64_t gap = (a[i] - a[i - 1]).count_us();
  const int64_t n = std::max<int64_t>(1, (gap + p.count_us() / 2) / p.count_us());
  int64_t k = (at_least - a[i - 1]).count_us() * n / gap;
  while (k < n && a[i - 1] + SimTime::us(k * gap / n) < at_least) ++k;
  return k >= n ? a[i] : a[i - 1] + SimTime::us(k * gap / n);
}

SimTime SlurmPolicy::bf_cycle_end(SimTime start, int tested) const {
  const auto& c = cfg_.bf_cycle_times;
  // the logged cycle that starts nearest `start` (they are at least 1 s apart)
  auto it = std::lower_bound(c.begin(), c.end(), start, [](const auto& x, SimTime t) { return x.first < t; });
  const SimTime near = SimTime::us(500000);
  if (it != c.end() && it->first - start <= near) return std::max(start, it->second);
  if (it != c.begin() && start - std::prev(it)->first <= near) return std::max(start, std::prev(it)->second);
  return start + cfg_.bf_cycle_base + SimTime::us(cfg_.bf_cycle_per_job.count_us() * tested);
}

SimTime SlurmPolicy::grid(SimTime at_least, SimTime phase, SimTime period) const {
  const SimTime base = cfg_.ctld_start + phase;
  if (at_least <= base) return base;
  SimTime t = base + floor_to(at_least - base, period);
  if (t < at_least) t += period;
  return t;
}

void SlurmPolicy::on_begin(SchedContext& ctx) {
  if (mf_->config().multifactor) {
    // the decay thread runs once when it starts, then every PriorityCalcPeriod
    ctx.wake_at(grid(ctx.now(), cfg_.prio_tick_phase, mf_->config().calc_period), kPrioTick);
    mf_->decay_and_charge(std::max(ctx.now(), cfg_.ctld_start), {});
  }
}

void SlurmPolicy::ensure_job(SchedContext& ctx, int j) {
  if (static_cast<size_t>(j) >= known_.size()) {
    const size_t n = static_cast<size_t>(j) + 1;
    known_.resize(n, 0);
    prio_.resize(n, 0);
    assoc_.resize(n, 0);
    charged_until_.resize(n, SimTime{});
  }
  if (known_[j]) return;
  known_[j] = 1;
  const Job& job = ctx.job(j);
  assoc_[j] = mf_->association(job.account.empty() ? job.req.account : job.account, job.user);
}

void SlurmPolicy::recompute_priorities(SchedContext& ctx) {
  for (int j : ctx.pending()) set_priority(ctx, j);
}

void SlurmPolicy::set_priority(SchedContext& ctx, int j) {
  ensure_job(ctx, j);
  const JobShape& s = ctx.shape(j);
  PriorityJob pj;
  pj.assoc = assoc_[j];
  pj.partition = s.partition;
  pj.nodes = s.nodes_min;
  pj.cpus = s.requested_cpus();
  pj.gpus = s.requested_gpus();
  pj.limit = s.time_limit;
  const int64_t p = mf_->priority(pj, ctx.now(), ctx.eligible_time(j));
  if (p != prio_[j]) ++queue_version_;
  prio_[j] = p;
}

void SlurmPolicy::on_queued(SchedContext& ctx, int j) {
  set_priority(ctx, j);
  ++sched_requests_;
  changed_ = true;
  arm_main(ctx);
  arm_bf(ctx);
}

void SlurmPolicy::on_ended(SchedContext& ctx, int j) {
  ensure_job(ctx, j);
  if (futures_) futures_->follow(ctx.state(), false, ctx.allocation(j), end_time(ctx, j), j);
  changed_ = true;
  const Job& job = ctx.job(j);
  if (job.array_task >= 0) {
    --array_running_[job.id.value];
    ++queue_version_;
  }
  // No usage is charged at the end: on the fairshare oracle, a job that ended between two
  // PriorityCalcPeriod ticks (j002, 16 CPUs for 45 s) added nothing to its account's
  // RawUsage (sshare at t = 60.7 s); the ticks charge running jobs only.
  // A job end asks for a main pass, which runs on the background thread's 1 s tick
  // once batch_sched_delay has passed since the last one, as a submission's does. In
  // the oracle logs all 175 main-loop starts of the five cases fall on that tick
  // (within 0.1 s), none at a job's end. (A pass run inside the end event also saw
  // only the first of two simultaneous ends.)
  ++sched_requests_;
  arm_main(ctx);
  arm_bf(ctx);
}

void SlurmPolicy::arm_main(SchedContext& ctx) {
  // The delays count whole seconds of the controller's clock (time_t), so a pass may
  // come up to a second earlier than the delay after the last one.
  SimTime want = SimTime::infinite();
  if (sched_requests_ > 0)
    want = main_grid(std::max(ctx.now(), wall_s(last_sched_) + cfg_.batch_sched_delay));
  if (!ctx.pending().empty() && !cfg_.sched_interval.is_infinite())
    want = std::min(want, main_grid(std::max(ctx.now(), wall_s(last_full_) + cfg_.sched_interval)));
  if (want.is_infinite()) return;
  if (want == ctx.now()) want = main_grid(ctx.now() + SimTime::us(1));
  if (want < main_armed_ || main_armed_ < ctx.now()) {
    main_armed_ = want;
    ctx.wake_at(want, kMainTick);
  }
}

void SlurmPolicy::arm_bf(SchedContext& ctx) {
  // A cycle runs even with an empty queue (it restarts the bf_interval sleep).
  if (!cfg_.backfill || cfg_.bf_interval.is_infinite() || !changed_) return;
  // The thread's first cycle is bf_interval after controller start; later cycles come
  // bf_interval after the last one ended, else on the 1 s re-check after a change.
  const SimTime anchor = bf_ran_ ? last_bf_end_ : cfg_.ctld_start + cfg_.bf_tick_phase;
  SimTime want;
  const SimTime first =
      anchor + SimTime::us(cfg_.bf_interval.count_us() / SimTime::seconds(1).count_us() * cfg_.bf_tick_period.count_us());
  if (ctx.now() < first) {
    want = first;
  } else {
    const SimTime p = cfg_.bf_tick_period;
    want = first + floor_to(ctx.now() - first, p);
    if (want <= ctx.now()) want += p;
  }
  if (want < bf_armed_ || bf_armed_ < ctx.now()) {
    bf_armed_ = want;
    ctx.wake_at(want, kBfTick);
  }
}

void SlurmPolicy::on_wake(SchedContext& ctx, uint64_t tag) {
  const SimTime now = ctx.now();
  if (tag == kMainTick) {
    if (now != main_armed_) return;  // superseded
    main_armed_ = SimTime::infinite();
    const bool full = !cfg_.sched_interval.is_infinite() && wall_s(now) - wall_s(last_full_) >= cfg_.sched_interval;
    if (full) {
      last_full_ = now;
      main_pass(ctx, true);
    } else if (sched_requests_ > 0 && wall_s(now) - wall_s(last_sched_) >= cfg_.batch_sched_delay) {
      main_pass(ctx, false);
    }
    arm_main(ctx);
    arm_bf(ctx);
  } else if (tag == kBfTick) {
    if (now != bf_armed_) return;
    bf_armed_ = SimTime::infinite();
    if (changed_) backfill(ctx);
    arm_bf(ctx);
    arm_main(ctx);
  } else if (tag == kPrioTick) {
    std::vector<MultifactorPriority::Charge> ch;
    for (int r : ctx.running()) {
      ensure_job(ctx, r);
      int64_t cpus = 0;
      for (const auto& na : ctx.allocation(r).nodes) cpus += static_cast<int64_t>(na.cores.size()) * ctx.cluster().tmpl(na.node).threads_per_core;
      const SimTime from = std::max(charged_until_[r], ctx.start_time(r));
      ch.push_back({assoc_[r], static_cast<double>(cpus), (now - from).to_seconds()});
      charged_until_[r] = now;
    }
    mf_->decay_and_charge(now, ch);
    recompute_priorities(ctx);
    ctx.wake_at(now + mf_->config().calc_period, kPrioTick);
  }
}

bool SlurmPolicy::array_capped(SchedContext& ctx, int j) const {
  const Job& job = ctx.job(j);
  if (job.array_task < 0 || job.array_max_running <= 0) return false;
  auto it = array_running_.find(job.id.value);
  return it != array_running_.end() && it->second >= job.array_max_running;
}

const std::vector<int>& SlurmPolicy::build_queue(SchedContext& ctx) {
  // The order reads the pending jobs (their order in ctx.pending() breaks full ties),
  // their priorities and the array tasks running: where none changed since the last
  // pass, it is that pass's (building and sorting it was 3.8% of a Curie run).
  const std::vector<int>& pending = ctx.pending();
  if (queue_of_ == queue_version_ && pending == queue_pending_) return queue_;
  // Sorted on keys gathered once: the comparator read four tables per comparison (2%
  // of a Curie run, whose queue reaches 4,707 jobs and is sorted 10^6 times). The keys
  // are total, so a plain sort gives the stable sort's order.
  struct Key {
    int tier;
    int64_t prio;
    SimTime submit;
    int64_t id;
    int64_t array_task;
    size_t pos;  // in ctx.pending(): the job, and the stable sort's last word
  };
  const auto& parts = ctx.cluster().partitions;
  auto key_of = [&](size_t pos) {
    const int j = pending[pos];
    const Job& job = ctx.job(j);
    return Key{parts[ctx.shape(j).partition].priority_tier, j < static_cast<int>(prio_.size()) ? prio_[j] : 0,
               job.submit, job.id.value, job.array_task, pos};
  };
  auto before = [](const Key& a, const Key& b) {
    if (a.tier != b.tier) return a.tier > b.tier;
    if (a.prio != b.prio) return a.prio > b.prio;
    if (a.submit != b.submit) return a.submit < b.submit;
    if (a.id != b.id) return a.id < b.id;
    if (a.array_task != b.array_task) return a.array_task < b.array_task;
    return a.pos < b.pos;
  };
  // Where only jobs left the queue (starts), no key of a job still pending changed
  // and ctx.pending() kept its jobs' order: the last order less the jobs gone is still
  // in order (a sort per pass was 1.7% of a Curie run). A job that joins (a submit)
  // gets a priority of at least 1 where it had 0, which bumps the version; the check
  // below (ctx.pending() a subsequence of the last one) keeps the order right should
  // one ever join without.
  bool only_left = queue_of_ == queue_version_ && pending.size() < queue_pending_.size();
  if (only_left) {
    size_t k = 0;
    for (int j : queue_pending_) k += k < pending.size() && pending[k] == j;
    only_left = k == pending.size();
  }
  if (only_left) {
    for (int j : queue_pending_)  // (the last queue's jobs, and so these)
      if (static_cast<size_t>(j) >= seen_.size()) seen_.resize(static_cast<size_t>(j) + 1, 0);
    for (int j : pending) seen_[static_cast<size_t>(j)] = 1;
    std::erase_if(queue_, [&](int j) { return seen_[static_cast<size_t>(j)] == 0; });
    for (int j : pending) seen_[static_cast<size_t>(j)] = 0;
  } else {
    std::vector<Key> keys;
    keys.reserve(pending.size());
    for (size_t pos = 0; pos < pending.size(); ++pos)
      if (!array_capped(ctx, pending[pos])) keys.push_back(key_of(pos));
    std::sort(keys.begin(), keys.end(), before);
    queue_.clear();
    for (const Key& k : keys) queue_.push_back(pending[k.pos]);
  }
  queue_of_ = queue_version_;
  queue_pending_ = pending;
  return queue_;
}

void SlurmPolicy::start(SchedContext& ctx, int j, Allocation a, StartedBy by) {
  ctx.start(j, std::move(a), by);
  if (futures_) futures_->follow(ctx.state(), true, ctx.allocation(j), end_time(ctx, j), j);
  ensure_job(ctx, j);
  charged_until_[j] = ctx.now();
  const Job& job = ctx.job(j);
  if (job.array_task >= 0) {
    ++array_running_[job.id.value];
    ++queue_version_;
  }
  changed_ = true;
}

SimTime SlurmPolicy::plan_limit(SchedContext& ctx, int j) const {
  const JobShape& s = ctx.shape(j);
  SimTime lim = std::min(s.time_limit, ctx.cluster().partitions[s.partition].max_time);
  if (lim.is_infinite()) lim = kYear;
  return lim;
}

SimTime SlurmPolicy::end_time(SchedContext& ctx, int r) const {
  const SimTime lim = ctx.shape(r).time_limit.is_infinite() ? kYear : ctx.shape(r).time_limit;
  return wall_s(ctx.start_time(r)) + lim;
}

void SlurmPolicy::main_pass(SchedContext& ctx, bool full) {
  last_sched_ = ctx.now();
  sched_requests_ = 0;
  const std::vector<int>& queue = build_queue(ctx);
  const size_t n_nodes = ctx.cluster().nodes.size();
  const auto& parts = ctx.cluster().partitions;
  std::set<int> failed_parts;  // blocked: their nodes are closed to the rest of the pass
  std::set<int64_t> rejected_arrays;
  int tested = 0, started = 0;
  // `allowed`: partition allowed_part's nodes less those of the blocked partitions,
  // built when a job of another partition comes. (Refilling it for every tested job,
  // and marking a blocked partition's nodes at once, where on Curie one partition has
  // every node and no later job is tested, kept main_pass at 3.1% self time of a
  // mid-Curie profile; 1.6% without.)
  std::vector<uint8_t> allowed(n_nodes, 0);
  int allowed_part = -1;
  for (int j : queue) {
    if (!full && tested >= cfg_.default_queue_depth) break;
    const JobShape& s = ctx.shape(j);
    const Job& job = ctx.job(j);
    if (failed_parts.count(s.partition)) continue;
    if (job.array_task >= 0 && rejected_arrays.count(job.id.value)) continue;
    if (array_capped(ctx, j)) continue;
    ++tested;
    if (allowed_part != s.partition) {
      std::fill(allowed.begin(), allowed.end(), 0);
      for (int n : parts[s.partition].nodes) allowed[n] = 1;
      for (int q : failed_parts)
        for (int n : parts[q].nodes) allowed[n] = 0;
      allowed_part = s.partition;
    }
    auto a = selector_.select(s, ctx.state(), allowed, ctx.now() - ctx.eligible_time(j));
    if (a) {
      start(ctx, j, std::move(*a), StartedBy::kMain);
      ++started;
      if (cfg_.sched_max_job_start > 0 && started >= cfg_.sched_max_job_start) break;
      continue;
    }
    if (job.array_task >= 0) rejected_arrays.insert(job.id.value);
    // exceptions to blocking the partition (1.3 step 8)
    if (cfg_.bf_min_prio_reserve > 0 && job_priority(j) < cfg_.bf_min_prio_reserve) continue;
    if (cfg_.bf_min_age_reserve > SimTime{} && ctx.now() - ctx.eligible_time(j) < cfg_.bf_min_age_reserve) continue;
    // (`allowed` is this partition's, whose later jobs are skipped: no job reads it stale)
    failed_parts.insert(s.partition);
  }
}

void SlurmPolicy::backfill(SchedContext& ctx) {
  const SimTime now = ctx.now();
  last_bf_end_ = now;  // until the cycle's length is known (below)
  bf_ran_ = true;
  changed_ = false;
  const std::vector<int>& queue = build_queue(ctx);
  const size_t n_nodes = ctx.cluster().nodes.size();
  const SimTime res = cfg_.bf_resolution;
  if (!bf_sets_) bf_sets_ = std::make_unique<BackfillNodeSets>(ctx.cluster());
  if (!futures_) futures_ = std::make_unique<BackfillFutures>();
  if (!will_runs_) will_runs_ = std::make_unique<WillRunCache>((n_nodes + 63) / 64);
  if (!replay_) replay_ = std::make_unique<BackfillReplay>();
  if (!walks_) walks_ = std::make_unique<WalkMemo>((n_nodes + 63) / 64);
  WalkMemo& walk_memo = *walks_;
  std::vector<Slot> table;
  table.push_back(Slot{wall_floor(now, res), wall_floor(now + cfg_.bf_window, res), bf_sets_->all, bf_sets_->all_hash});
  if (table[0].end <= table[0].begin) table[0].end = table[0].begin + res;
  // The same reservations as a list, clipped to the table, for the candidates of each
  // window (what the AND of the slots it overlaps gives, at the cost of the words the
  // reservations' nodes fill)
  ReservationList resvs(n_nodes, now);
  const SimTime table_begin = table[0].begin, table_end = table[0].end;
  std::map<std::string, int> per_user, per_part_user;
  std::map<int, int> per_part, part_resv;
  std::map<int64_t, int> array_resv;
  // The running jobs by (end, job) with where they hold cores (running_ends), and the
  // future states, shared by the cycle's tested jobs: the present with every running
  // job released that ends by some time (a prefix of running_ends), for the prefixes
  // will-run batches asked for (all that end by their threshold). Kept across cycles
  // (BackfillFutures) and built from the largest smaller one. A job's will-run test
  // releases only jobs on its candidate nodes, but the others change no candidate node,
  // and the cluster-wide totals select() checks first are a necessary condition either
  // way, so the plans are the same.
  auto& futs = *futures_;
  if (!futs.in_sync(ctx.state()) || !futs.runs_ok) {
    futs.reset(ctx.state());
    for (int r : ctx.running()) futs.add_run(ctx.allocation(r), end_time(ctx, r), r);
    futs.runs_ok = true;
  }
  const std::vector<Run>& running_ends = futs.runs;
  ++futs.cycle;
  futs.evict(running_ends.empty() ? nullptr : &running_ends.front());
  // The present with running_ends[0, k) released: a full state, or where `full` is
  // false, perhaps a summary (ClusterState::summary_of), for the tests free cores
  // decide. Summaries are built from the nearest state below, full ones from the
  // nearest full one below; a summary asked for in full becomes full in place.
  // (Full copies of 245 KB were 9% of a mid-Curie run, where nearly every tested shape
  // needs no more than the counters.)
  auto state_by = [&](size_t k, bool full) -> const ClusterState& {
    if (k == 0) return ctx.state();
    // a kept state whose key lies in [k-th job's, next job's) releases the same jobs
    const Run& last = running_ends[k - 1];
    auto it = std::lower_bound(futs.list.begin(), futs.list.end(), last,
                               [](const BackfillFutures::Entry& f, const Run& r) { return f.before(r.end, r.job); });
    const bool hit =
        it != futs.list.end() && (k == running_ends.size() || it->before(running_ends[k].end, running_ends[k].job));
    if (hit) {
      it->used = futs.cycle;
      if (!full || !it->state->summary()) return *it->state;
    }
    auto below = it;  // the state built from: the nearest below (full, for a full one)
    while (below != futs.list.begin() && (full && std::prev(below)->state->summary())) --below;
    const ClusterState& base = below == futs.list.begin() ? ctx.state() : *std::prev(below)->state;
    size_t from = 0;
    if (below != futs.list.begin())
      from = static_cast<size_t>(std::upper_bound(running_ends.begin(), running_ends.end(), *std::prev(below),
                                                  [](const BackfillFutures::Entry& f, const Run& r) {
                                                    return f.before(r.end, r.job);
                                                  }) -
                                 running_ends.begin());
    auto fut = std::make_unique<ClusterState>(full ? ClusterState(base) : ClusterState::summary_of(base));
    for (size_t i = from; i < k; ++i) fut->release(ctx.allocation(running_ends[i].job));
    if (hit) {
      *it->state = std::move(*fut);  // in place: pointers to it stay good
      return *it->state;
    }
    return *futs.list.insert(it, BackfillFutures::Entry{last.end, last.job, std::move(fut), futs.cycle})->state;
  };
  // per-attempt buffers, kept across the cycle's attempts
  NodeSet cand(n_nodes), memo_cand(n_nodes);
  std::vector<uint8_t> cand_bytes;  // `cand` for SlurmSelector, made when it is called
  NodeWords nodes_buf;                        // a planned reservation's nodes
  std::vector<std::pair<int, int>> ranges_buf;  // and as plan_nodes gives them
  int tested = 0, started = 0;
  auto& rp = *replay_;
  const uint64_t version0 = ctx.state().changes();
  bool replaying = replay_outcomes_ && rp.of == &ctx.state() && rp.version == version0;
  rp.clear_next();
  SimTime max_rb = SimTime::us(std::numeric_limits<int64_t>::min());  // the latest begin of a reservation of this cycle
  // Short chains: a tested job's attempts hop from window to window (start_res to
  // later_start), and where each window offers fewer candidate nodes than the job's
  // minimum the hops depend only on the partition, the time limit and the table
  // (later_start reads nothing else), until a window has no later_start and the job
  // ends with no reservation. So until the table changes (a reservation), a job of
  // the same partition and limit whose minimum is at least that of such a job finds
  // too few candidates at the same windows, and ends the same way. In mid-Curie,
  // 230,480 tested jobs ended so, mostly with no candidate left at all: whole-day
  // windows over a table reserved through.
  struct ShortChain {
    int partition;
    SimTime limit;
    size_t resvs;      // the table it was made on: the count of the cycle's reservations
    int bound;         // every window offered fewer candidates than this
    bool walked_out;   // a later_start walk reached the table's last slot (BackfillReplay)
  };
  std::vector<ShortChain> short_chains;  // one per (partition, limit)
  auto chain_of = [&short_chains](int partition, SimTime limit) -> ShortChain* {
    for (ShortChain& c : short_chains)
      if (c.partition == partition && c.limit == limit) return &c;
    return nullptr;
  };
  for (int j : queue) {
    if (cfg_.bf_max_job_test > 0 && tested >= cfg_.bf_max_job_test) break;
    if (cfg_.bf_max_job_start > 0 && started >= cfg_.bf_max_job_start) break;
    const JobShape& s = ctx.shape(j);
    const Job& job = ctx.job(j);
    if (array_capped(ctx, j)) continue;
    // the per-user and per-partition counts, kept only where a limit reads them (the
    // defaults set none; a map lookup and a string per tested job otherwise)
    if (cfg_.bf_max_job_user > 0 && per_user[job.user] >= cfg_.bf_max_job_user) continue;
    if (cfg_.bf_max_job_part > 0 && per_part[s.partition] >= cfg_.bf_max_job_part) continue;
    if (cfg_.bf_max_job_user_part > 0) {
      const std::string up = job.user + "/" + std::to_string(s.partition);
      if (per_part_user[up] >= cfg_.bf_max_job_user_part) continue;
      ++per_part_user[up];
    }
    if (cfg_.bf_max_job_user > 0) ++per_user[job.user];
    if (cfg_.bf_max_job_part > 0) ++per_part[s.partition];
    ++tested;
    const SimTime limit = plan_limit(ctx, j);
    const SimTime waited = now - ctx.eligible_time(j);
    bool no_reserve = (cfg_.bf_min_prio_reserve > 0 && job_priority(j) < cfg_.bf_min_prio_reserve) ||
                      (cfg_.bf_min_age_reserve > SimTime{} && waited < cfg_.bf_min_age_reserve) ||
                      (cfg_.bf_job_part_count_reserve > 0 && part_resv[s.partition] >= cfg_.bf_job_part_count_reserve) ||
                      (job.array_task >= 0 && array_resv[job.id.value] >= cfg_.bf_max_job_array_resv);
    const NodeSet& part = bf_sets_->parts[s.partition];
    // the last cycle's outcome, where it holds now (BackfillReplay)
    BackfillReplay::Record* rec = nullptr;
    if (replaying) {
      const size_t ti = static_cast<size_t>(tested - 1);
      if (ti < rp.recs.size() && rp.recs[ti].job == j) rec = &rp.recs[ti];
      else replaying = false;
    }
    // j's reservation, tested or replayed, into the table
    auto reserve = [&](const BackfillReplay::Record& r) {
      add_reservation(table, r.rb, r.re, r.nodes);
      if (std::max(r.rb, table_begin) < std::min(r.re, table_end))
        resvs.add(std::max(r.rb, table_begin), std::min(r.re, table_end), r.nodes);
      max_rb = std::max(max_rb, r.rb);
      ctx.reserve(j, r.t);
      // The reserved nodes become PLANNED (22.05's node state), and setting and clearing
      // that state is a node update: a cycle that reserves anything makes the next one
      // run, as a start does. The real runs cycle every bf_interval while jobs wait
      // (gpu-sockets: 89 cycles; skipping unchanged ones gave gcsim 76, now 90).
      changed_ = true;
      ++part_resv[s.partition];
      if (job.array_task >= 0) ++array_resv[job.id.value];
    };
    const bool holds =
        rec != nullptr && rec->replayable && !no_reserve && now < rec->before &&
        !resvs.begins_in(rec->now0 + limit, now + limit) &&
        (table_end == rec->te0 ||
         (!rec->walked_out && max_rb < rec->te0 && (!rec->reserved || rec->rb < rec->te0)));
    if (holds && !check_replays_) {
      ++rp.replayed;
      if (rec->reserved) reserve(*rec);
      rp.next.push_back(std::move(*rec));
      continue;
    }
    BackfillReplay::Record out;
    out.job = j;
    out.replayable = !no_reserve && s.switches == 0;
    out.now0 = now;
    out.te0 = table_end;
    bool concluded = false;  // the attempts ended by a break, not by their cap
    // per-job will-run memo (see the attempt loop)
    bool memo_ok = false, bytes_made = false;
    WillRun wr;
    WillRunCache::Entry* cached = nullptr;  // wr's cache entry, if kept
    auto cand_b = [&]() -> const std::vector<uint8_t>& {
      if (!bytes_made) cand.to_bytes(cand_bytes, n_nodes);
      bytes_made = true;
      return cand_bytes;
    };
    // will-run: earliest start on `cand` given the running jobs' end times, which are
    // removed in batches (30 s x 2^k) in end-time order. Plans are node sets
    // (place = false), chosen only where the free cores alone do not decide the test
    // (may_select exact) or the nodes are needed for a reservation.
    // One-core tasks with no per-node limit: may_select needs the candidates' free
    // cores to reach the tasks, and those grow by what each ending job holds on them,
    // so a batch short of that is refused by counting, without building its state,
    // and the count stands in for may_select's pass over the nodes.
    const bool count_cores = SlurmSelector::free_core_sum_decides_bound(s);
    // The walk's batches, as WalkMemo points: the first on `cand` sets the base (its
    // end rounded up to the next 30 s of the wall clock, a whole 30 s more if it is on
    // one); each batch goes on while the job *next in the list*, on `cand` or not, ends
    // by base + W (W = 30 s, doubling after each batch until that job is in reach).
    const size_t n_runs = running_ends.size();
    const SimTime w30 = SimTime::seconds(30);
    auto next_on_cand = [&](WalkMemo::Walk& k) {
      k.next = next_on(running_ends.data(), k.next, n_runs, cand, &k.c);
      if (k.next == n_runs) return false;
      k.e = running_ends[k.next++].end;
      return true;
    };
    // the walk's i-th point, walking on as far as needed; nullptr past its end
    auto point = [&](WalkMemo::Walk& k, size_t i) -> const WalkMemo::Point* {
      while (k.points.size() <= i) {
        if (k.done) return nullptr;
        if (!k.begun) {
          k.begun = true;
          k.cand_free = k.free0;
          if (!next_on_cand(k)) {
            k.done = true;
            return nullptr;
          }
          k.base = wall_floor(k.e, w30) + w30;
          k.w = w30;
        } else {  // the last batch left more to walk (else done)
          do k.w = k.w + k.w;
          while (running_ends[k.next].end > k.base + k.w);
          if (!next_on_cand(k)) {
            k.done = true;
            return nullptr;
          }
        }
        bool more = true;
        for (;;) {
          k.cand_free += k.c;
          if (k.next == n_runs) {
            more = false;
            break;
          }
          if (running_ends[k.next].end > k.base + k.w) break;
          if (!next_on_cand(k)) {
            more = false;
            break;
          }
        }
        k.points.push_back(WalkMemo::Point{k.next, k.e, k.cand_free});
        k.done = !more;
      }
      return &k.points[i];
    };
    uint64_t hash = 0;  // cand.hash(): set before each will_run()
    auto will_run = [&] {
      wr.enough_nodes = cand.has_at_least(s.nodes_min);
      if (!wr.enough_nodes) return;
      bool made = false;
      if (!share_walks_) walk_memo.clear();
      WalkMemo::Walk& walk = walk_memo.of_cand(ctx.state(), cand, hash, &made);
      if (made) walk.free0 = free_cores_on(ctx.state(), cand);
      // (the counters decide may_select on CPU-only shapes, and select's exact ones:
      // those are tested on summaries, and the rest on full states)
      auto fits = [&](size_t k, int64_t cand_free) {
        if (count_cores && cand_free < s.tasks) return false;
        const ClusterState& st = state_by(k, !s.cpu_only());
        bool exact = false;
        if (count_cores ? !selector_.may_select_counted(s, st, cand_free, &exact)
                        : !selector_.may_select(s, st, cand.data(), &exact))
          return false;
        wr.state = &st;
        wr.state_k = k;
        if (exact) return true;
        const ClusterState& whole = st.summary() ? state_by(k, true) : st;
        wr.state = &whole;
        wr.plan = selector_.select(s, whole, cand_b(), waited, nullptr, false);
        return wr.plan.has_value();
      };
      wr.fit = fits(0, walk.free0);
      wr.now = wr.fit;
      if (wr.fit) return;
      // Batches (cons_tres _will_run_test): the running jobs are walked in end order and
      // those with no node in `cand` skipped; after each batch the job is tested on the
      // present with the batch's jobs released. The first job on `cand` after skipped
      // ones is removed whatever its end. The plan is the last end removed.
      // - binding: j002 ended on a wall minute (64 s), so the first batch ran to 124 s and
      //   took j001 and j005 with it: Slurm planned j009 at j005's end, 123.95 s, though
      //   it fitted once j002 was gone.
      // - topo-tree, cycle at 45 s: j013's batch to 113 s reached j010 (103 s, off
      //   `cand`), skipped it and removed j012, which ends at 145 s, so the plan came out
      //   at 145 s, after later_start: Slurm retried from 113 s and planned n[05-06]
      //   there, not n[07-08] at 100 s.
      // Jobs off `cand` before the last one removed are released too (state_by): they
      // change no candidate node. No job is dropped up front for a later start_res
      // (oracle fairshare: retried at 60 s, the plan still came out at 63 s).
      wr.last_end = now;
      for (size_t i = 0;; ++i) {
        const WalkMemo::Point* p = point(walk, i);
        if (p == nullptr) return;
        wr.last_end = p->last_end;
        wr.fit = fits(p->next, p->cand_free);
        if (wr.fit) return;
      }
    };
    // A job whose hops a short chain of this table already made (ShortChain) finds
    // too few candidates at each of them too, and ends as that job did, untried.
    const ShortChain* chain = share_chains_ && !no_reserve && s.switches == 0 ? chain_of(s.partition, limit) : nullptr;
    if (chain != nullptr && (chain->resvs != resvs.size() || s.nodes_min < chain->bound)) chain = nullptr;
    bool all_short = true;  // every attempt found fewer candidates than s.nodes_min
    if (chain != nullptr) {
      ++chains_shared_;
      out.walked_out = chain->walked_out;
      concluded = true;
    }
    SimTime start_res = now;
    if (chain == nullptr) resvs.start(limit, part, cand);
    // table[si]: the first slot that ends after start_res, which only moves forward
    // over the attempts (a binary search per attempt was 2% of a run)
    size_t si = 0;
    auto slot_of_start = [&] {
      while (si < table.size() && !(start_res < table[si].end)) ++si;
    };
    size_t ends_pos = ReservationList::kNoPos;  // frees_at's walk over reservation ends
    for (int attempt = 0, attempts = chain != nullptr ? 0 : 64; attempt < attempts; ++attempt) {
      const SimTime end = start_res + limit;
      const bool changed = resvs.slide(start_res, end, part, cand);
      // later_start (_attempt_backfill): the end of the first slot from start_res on
      // whose successor offers a partition node this slot (and the window's slots
      // before it) lacks, looked for up to the first slot that begins after the
      // window. The slots a reservation begins at only take nodes away, so this is the
      // first slot end where a reservation ends and frees a partition node.
      // (topo-tree's prefix against run1: 12 jobs with the next slot's end, 28 with this.)
      std::optional<SimTime> later_start;
      slot_of_start();
      bool walked_out = true;
      for (size_t j = si; j + 1 < table.size(); ++j) {
        if (resvs.frees_at(table[j].end, part, table[j + 1].avail, &ends_pos)) {
          later_start = table[j].end;
          walked_out = false;
          break;
        }
        if (table[j].begin > end) {
          walked_out = false;
          break;
        }
      }
      out.walked_out |= walked_out;
      // The will-run test reads only `cand` (and the cycle's states, which no attempt
      // changes): a later start_res with the same candidates has the same outcome, and
      // its start is max(start_res, that outcome's), so it is kept, not recomputed.
      if (!memo_ok || (changed && !(cand == memo_cand))) {
        memo_cand.fill_from(cand);
        memo_ok = true;
        bytes_made = false;
        // (the cache is checked against the present at each use: a start in this
        // cycle changes it)
        auto& cache = *will_runs_;
        cache.sync(ctx.state());
        cached = nullptr;
        hash = resvs.cand_hash();  // cand.hash(), kept by start() and slide()
        if (keep_will_runs_ && s.switches == 0) {
          const uint64_t key = WillRunCache::key(j, hash);
          size_t slot = 0;
          if (WillRunCache::Entry* hit = cache.find(key, j, cand, &slot)) {
            ++cache.reused;
            wr = hit->wr;
            if (wr.fit) wr.state = &state_by(wr.state_k, false);
            cached = hit;
          } else {
            wr = WillRun{};
            will_run();
            cached = &cache.put(slot, key, j, cand, wr);
          }
        } else {
          wr = WillRun{};
          will_run();
        }
      }
      // the table ends at the window: beyond it nothing is reserved
      if (!wr.enough_nodes) {
        if (later_start && !no_reserve) {
          start_res = *later_start;
          continue;
        }
        concluded = true;
        break;
      }
      all_short = false;
      const bool fit = wr.fit;
      auto& plan = wr.plan;
      const ClusterState* fit_state = wr.state;
      SimTime t = std::max(now, start_res);
      if (fit && !wr.now) t = std::max({start_res, wr.last_end <= now ? now + SimTime::seconds(1) : wr.last_end});
      if (!fit) {
        if (later_start && !no_reserve) {
          start_res = *later_start;
          continue;
        }
        concluded = true;
        break;
      }
      // t as a later cycle would find it, while that cycle is before this bound
      out.before = std::min(out.before, wr.now ? start_res
                                               : std::max(wr.last_end, start_res - SimTime::seconds(1) + SimTime::us(1)));
      if (t <= now) {
        out.replayable = false;
        // start now, on the candidate nodes only, through the normal selection
        auto a = selector_.select(s, ctx.state(), cand_b(), waited);
        // Started jobs are not put in the table: later jobs of the cycle share their
        // nodes (observed: two jobs started on g02 in one cycle); the will-run test
        // sees them as running jobs.
        if (a) {
          // (start() adds j to running_ends and to the future states that end before it)
          start(ctx, j, std::move(*a), StartedBy::kBackfill);
          ++started;
        }
        concluded = true;
        break;
      }
      if (no_reserve) {
        concluded = true;
        break;
      }
      if (later_start && t > *later_start) {
        start_res = *later_start;
        continue;
      }
      if (t > now + cfg_.bf_window) {
        out.replayable = false;
        concluded = true;
        break;
      }
      // (built in buffers kept over the cycle: a reservation is copied out of them only
      // when made)
      NodeWords& nodes = nodes_buf;
      nodes.clear();
      if (plan) {
        for (const auto& na : plan->nodes) add_node_range(nodes, na.node, na.node);  // by node id
      } else {
        // only exact shapes get here without a plan: their nodes, without an Allocation
        // (kept with the will-run outcome: the same candidates on the same state)
        if (cached == nullptr || !cached->planned) {
          if (!selector_.plan_nodes(s, *fit_state, cand.data(), ranges_buf))
            throw std::logic_error("slurm backfill: may_select called a job exact but select() found no nodes");
          if (cached != nullptr) {
            cached->nodes.assign(ranges_buf.begin(), ranges_buf.end());
            cached->planned = true;
          }
        }
        for (const auto& [first, last] : cached != nullptr ? cached->nodes : ranges_buf)
          add_node_range(nodes, first, last);
      }
      const SimTime rb = wall_floor(t, res);
      const SimTime re = std::max(wall_floor(t + limit, res), rb + res);
      bool clash = false;
      for (const auto& sl : table) {
        if (sl.end <= rb || sl.begin >= re) continue;
        clash |= !sl.avail.holds(nodes);
      }
      if (clash) {
        // _test_resv_overlap: the chosen nodes overlap a reservation of the table, so
        // the job is tried again from its planned start (later_start = start_time).
        // gpu-sockets, cycle at 107 s: j032 (a whole node, 1 min) planned g01 at 222 s
        // into j021's reservation; retried from 222 s it found g02 at 242 s, as run1 did.
        start_res = t;
        continue;
      }
      out.reserved = true;
      out.rb = rb;
      out.re = re;
      out.t = t;
      rp.set_nodes(out, nodes);
      reserve(out);
      concluded = true;
      break;
    }
    if (chain == nullptr && concluded && all_short && !no_reserve && s.switches == 0) {
      // (a chain made again on the same table is the same chain: its bound is the
      // least nodes_min of the jobs that made it)
      const ShortChain made{s.partition, limit, resvs.size(), s.nodes_min, out.walked_out};
      ShortChain* same = chain_of(s.partition, limit);
      if (same == nullptr) short_chains.push_back(made);
      else if (same->resvs != made.resvs) *same = made;
      else same->bound = std::min(same->bound, made.bound);
    }
    out.replayable &= concluded;
    // a start changes the present: the rest of the cycle is tested afresh
    const bool as_recorded = rec != nullptr && ctx.state().changes() == version0 && out.same_reservation(*rec);
    if (holds) {  // check_replays_: what the replay would have done
      ++rp.checked;
      if (!as_recorded || (out.reserved && out.t != rec->t)) ++rp.mismatched;
    }
    replaying &= as_recorded;
    rp.next.push_back(std::move(out));
  }
  std::swap(rp.recs, rp.next);
  rp.version = ctx.state().changes();
  rp.of = rp.version == version0 ? &ctx.state() : nullptr;
  last_bf_end_ = bf_cycle_end(now, tested);
}

}  // namespace gcsim
