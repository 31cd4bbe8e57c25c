// Node sets of the slurm policy's backfill (models/sched/slurm_policy.cpp): node
// indices 64 to a word, the node-space table, and the cycle's reservations indexed for
// the candidates of a tested job's sliding window. In a header so that tests can compare
// them with plain set arithmetic.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/core/time.hpp"

// popcnt where the CPU has it: without -mpopcnt (not in Debian's x86-64 baseline)
// std::popcount is a libgcc call, 12% of a busy Curie week's profile. Results are the
// same either way.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__POPCNT__)
#define GCSIM_POPCNT_CLONES __attribute__((target_clones("popcnt", "default")))
#else
#define GCSIM_POPCNT_CLONES
#endif

namespace gcsim::bf {

/// Nodes as (word, mask) pairs by increasing word, each word once: a reservation's nodes.
using NodeWords = std::vector<std::pair<size_t, uint64_t>>;

/// Adds nodes [first, last] (at or after the last word already in `out`).
inline void add_node_range(NodeWords& out, int first, int last) {
  for (int n = first; n <= last;) {
    const size_t w = static_cast<size_t>(n) >> 6;
    const int hi = std::min(last, static_cast<int>(w * 64 + 63));
    const int len = hi - n + 1;
    const uint64_t m = (len == 64 ? ~uint64_t{0} : ((uint64_t{1} << len) - 1)) << (n & 63);
    if (out.empty() || out.back().first != w) out.emplace_back(w, 0);
    out.back().second |= m;
    n = hi + 1;
  }
}

/// Word `w`'s share of a node set's hash, the XOR of every word's (the will-run
/// caches' key: ReservationList keeps it for the candidates as it changes them).
inline uint64_t word_hash(size_t w, uint64_t x) {
  return (x + 0x632BE59BD9B4E019ULL * (w + 1)) * 0xD6E8FEB86659FD93ULL;
}

/// A set of node indices, 64 to a word: backfill's reservation table and candidate
/// masks (5,544 Curie nodes are 87 words, where a byte mask took 5,544 steps per test).
class NodeSet {
 public:
  NodeSet() = default;
  explicit NodeSet(size_t n) : w_((n + 63) / 64, 0) {}
  void set(int n) { w_[static_cast<size_t>(n) >> 6] |= uint64_t{1} << (n & 63); }
  [[nodiscard]] bool test(int n) const { return (w_[static_cast<size_t>(n) >> 6] >> (n & 63)) & 1U; }
  [[nodiscard]] uint64_t word(size_t i) const { return w_[i]; }
  [[nodiscard]] const uint64_t* data() const { return w_.data(); }
  void fill_from(const NodeSet& o) { std::copy(o.w_.begin(), o.w_.end(), w_.begin()); }
  void set_word(size_t i, uint64_t v) { w_[i] = v; }
  /// This set becomes a less b; returns its hash (word_hash).
  uint64_t assign_minus(const NodeSet& a, const NodeSet& b) {
    uint64_t h = 0;
    for (size_t i = 0; i < w_.size(); ++i) {
      w_[i] = a.w_[i] & ~b.w_[i];
      h ^= word_hash(i, w_[i]);
    }
    return h;
  }
  /// The XOR of every word's word_hash.
  [[nodiscard]] uint64_t hash() const {
    uint64_t h = 0;
    for (size_t i = 0; i < w_.size(); ++i) h ^= word_hash(i, w_[i]);
    return h;
  }
  /// Adds the nodes of `in`.
  void add(const NodeWords& in) {
    for (const auto& [i, m] : in) w_[i] |= m;
  }
  /// Takes out the nodes of `out`; where `hash` is given, keeps it this set's hash().
  void remove(const NodeWords& out, uint64_t* hash = nullptr) {
    for (const auto& [i, m] : out) {
      const uint64_t was = w_[i];
      w_[i] = was & ~m;
      if (hash != nullptr) *hash ^= word_hash(i, was) ^ word_hash(i, w_[i]);
    }
  }
  [[nodiscard]] int count() const;
  /// count() >= k, reading words only until it is (one word where k is 1, as for most
  /// jobs' minimum node count; counting every word per will-run test was 2% of a run).
  [[nodiscard]] bool has_at_least(int k) const;
  /// Whether every node of `ws` is in this set.
  [[nodiscard]] bool holds(const NodeWords& ws) const {
    for (const auto& [i, m] : ws)
      if ((m & ~w_[i]) != 0) return false;
    return true;
  }
  /// The set as a 0/1 byte per node, as SlurmSelector takes it.
  void to_bytes(std::vector<uint8_t>& out, size_t n) const {
    out.assign(n, 0);
    for (size_t i = 0; i < w_.size(); ++i)
      for (uint64_t x = w_[i]; x != 0; x &= x - 1) out[i * 64 + static_cast<size_t>(std::countr_zero(x))] = 1;
  }
  bool operator==(const NodeSet& o) const = default;

 private:
  std::vector<uint64_t> w_;
};


/// One record of backfill's node-space table: the nodes no reservation holds in
/// [begin, end).
struct Slot {
  SimTime begin, end;
  NodeSet avail;
  uint64_t hash;  // avail.hash(): neighbours are compared on it first
};

/// Takes `nodes` out of the table over [b, e), splitting the records it cuts and
/// merging neighbours left equal: no two neighbours are equal after it.
inline void add_reservation(std::vector<Slot>& table, SimTime b, SimTime e, const NodeWords& nodes) {
  auto split_at = [&](SimTime t) {
    for (size_t i = 0; i < table.size(); ++i)
      if (table[i].begin < t && t < table[i].end) {
        Slot tail = table[i];
        tail.begin = t;
        table[i].end = t;
        table.insert(table.begin() + static_cast<std::ptrdiff_t>(i) + 1, tail);
        return;
      }
  };
  split_at(b);
  split_at(e);
  size_t first = table.size(), last = 0;  // the slots within [b, e)
  for (size_t i = 0; i < table.size(); ++i)
    if (table[i].begin >= b && table[i].end <= e) {
      table[i].avail.remove(nodes, &table[i].hash);
      first = std::min(first, i);
      last = i;
    }
  if (first == table.size()) return;
  // Merge neighbours with equal bitmaps. Every earlier call left none, so only pairs
  // with a slot of [b, e) can be equal (comparing every pair was 4% of a Curie run),
  // and unequal hashes tell most unequal ones (their memcmp was 2% of a mid-Curie run).
  size_t stop = std::min(last + 2, table.size());
  for (size_t i = std::max<size_t>(first, 1); i < stop;) {
    if (table[i - 1].hash == table[i].hash && table[i - 1].avail == table[i].avail &&
        table[i - 1].end == table[i].begin) {
      table[i - 1].end = table[i].end;
      table.erase(table.begin() + static_cast<std::ptrdiff_t>(i));
      --stop;
    } else {
      ++i;
    }
  }
}

/// Backfill's reservations of one cycle, clipped to its table (all end after `now`),
/// for the candidates of a tested job's window [start, end]: the partition less the
/// nodes of the reservations the window overlaps. A reservation that begins at the
/// window's end counts: _attempt_backfill ANDs every node-space record whose
/// begin_time <= end_time.
///  - A job's first window, [now, now + limit], overlaps exactly the reservations that
///    begin by its end (a prefix by begin). Both ends of the window then only move
///    forward over its attempts: a reservation enters when the end reaches its begin,
///    and leaves when the start reaches its end.
///  - Each node counts the reservations of the window that hold it, in bit planes (bit
///    n % 64 of plane k's word n / 64 is bit k of node n's count): a reservation
///    entering or leaving is a carry or borrow chain per node word it holds, whatever
///    the number of reservations on that word.
/// Rebuilding the candidates from every reservation at each attempt was a third of a
/// Curie run (196M attempts, 32G reservation checks); recomputing a leaving
/// reservation's words from every reservation in them was 15% after that.
class ReservationList {
 public:
  /// A reservation: its nodes are pool_[first, first + count) (one buffer for the
  /// cycle: a copy of each reservation's words was a heap block of up to 1.4 KB, and
  /// the allocator 3% of a Curie run).
  struct Resv {
    SimTime begin, end;
    uint32_t first, count;
  };
  ReservationList(size_t n_nodes, SimTime now)
      : now_(now), words_((n_nodes + 63) / 64), first_(words_, n_nodes), win_(words_, n_nodes), first_end_(now) {}

  void add(SimTime begin, SimTime end, const NodeWords& words) {
    if (!(end > now_)) throw std::logic_error("slurm backfill: a reservation that ends before the cycle");
    const size_t id = resvs_.size();
    by_begin_.insert(std::upper_bound(by_begin_.begin(), by_begin_.end(), begin,
                                      [this](SimTime v, size_t i) { return v < resvs_[i].begin; }),
                     id);
    by_end_.insert(std::upper_bound(by_end_.begin(), by_end_.end(), end,
                                    [this](SimTime v, size_t i) { return v < resvs_[i].end; }),
                   id);
    resvs_.push_back(Resv{begin, end, static_cast<uint32_t>(pool_.size()), static_cast<uint32_t>(words.size())});
    pool_.insert(pool_.end(), words.begin(), words.end());
    win_.in.push_back(0);
    first_.in.push_back(0);
    if (begin <= first_end_) first_.enter(id, words_of(id));
  }

  /// A tested job's first window, [now, now + limit]: sets `cand`. The first-window
  /// counts change by the reservations that begin between the last job's window end
  /// and this one's; the sliding window starts as their copy. (Undoing the last job's
  /// slides as well, reservation by reservation, was three times the word updates.)
  void start(SimTime limit, const NodeSet& part, NodeSet& cand) {
    const SimTime end = now_ + limit;
    const size_t was = count_begun_by(first_end_);
    entered_ = count_begun_by(end);
    left_ = 0;
    for (size_t pos = was; pos < entered_; ++pos) first_.enter(by_begin_[pos], words_of(by_begin_[pos]));
    for (size_t pos = entered_; pos < was; ++pos) first_.leave(by_begin_[pos], words_of(by_begin_[pos]));
    first_end_ = end;
    win_.copy_from(first_);
    hash_ = cand.assign_minus(part, win_.held);
  }
  /// cand.hash() of the `cand` last set by start() and slide(), kept as they change it
  /// (hashing all 87 words of a Curie set after each change was 2.6% of a run).
  [[nodiscard]] uint64_t cand_hash() const { return hash_; }
  /// Moves the window to [start, end], neither end before the last window's. False
  /// when `cand` is as it was (no reservation entered or left, or none that changed a
  /// candidate: the caller's 87-word compare of candidate sets was 3% of a run).
  bool slide(SimTime start, SimTime end, const NodeSet& part, NodeSet& cand) {
    bool changed = false;
    auto update = [&](size_t w) {
      const uint64_t v = part.word(w) & ~win_.held.word(w), was = cand.word(w);
      if (v == was) return;
      changed = true;
      hash_ ^= word_hash(w, was) ^ word_hash(w, v);
      cand.set_word(w, v);
    };
    for (; left_ < by_end_.size() && resvs_[by_end_[left_]].end <= start; ++left_) {
      const size_t id = by_end_[left_];
      if (win_.in[id] == 0) continue;
      win_.in[id] = 0;
      for (const auto& [w, m] : words_of(id)) {
        win_.count_out(w, m);
        update(w);
      }
    }
    for (; entered_ < by_begin_.size() && resvs_[by_begin_[entered_]].begin <= end; ++entered_) {
      const size_t id = by_begin_[entered_];
      if (!(resvs_[id].end > start) || win_.in[id] != 0) continue;
      win_.in[id] = 1;
      for (const auto& [w, m] : words_of(id)) {
        win_.count_in(w, m);
        update(w);
      }
    }
    return changed;
  }
  /// Whether a reservation ending at `b` frees a node of `part` that `after` (the free
  /// nodes of the table record from `b` on) holds: whether `b` can be backfill's
  /// `later_start`. `*pos` walks the reservations by end over calls with growing `b`;
  /// start it at npos for each tested job.
  [[nodiscard]] bool frees_at(SimTime b, const NodeSet& part, const NodeSet& after, size_t* pos) const {
    if (*pos == kNoPos)
      *pos = static_cast<size_t>(std::lower_bound(by_end_.begin(), by_end_.end(), b,
                                                  [this](size_t i, SimTime v) { return resvs_[i].end < v; }) -
                                 by_end_.begin());
    while (*pos < by_end_.size() && resvs_[by_end_[*pos]].end < b) ++*pos;
    for (size_t i = *pos; i < by_end_.size() && resvs_[by_end_[i]].end == b; ++i)
      for (const auto& [w, m] : words_of(by_end_[i]))
        if ((part.word(w) & m & after.word(w)) != 0) return true;
    return false;
  }
  static constexpr size_t kNoPos = static_cast<size_t>(-1);
  /// The reservations added so far.
  [[nodiscard]] size_t size() const { return resvs_.size(); }
  /// Whether a reservation begins in (a, b].
  [[nodiscard]] bool begins_in(SimTime a, SimTime b) const { return count_begun_by(b) != count_begun_by(a); }

 private:
  [[nodiscard]] size_t count_begun_by(SimTime t) const {
    return static_cast<size_t>(std::upper_bound(by_begin_.begin(), by_begin_.end(), t,
                                                [this](SimTime v, size_t i) { return v < resvs_[i].begin; }) -
                               by_begin_.begin());
  }
  /// Bit planes per node word: counts up to 2^32 - 1, more than a cycle's reservations.
  static constexpr size_t kPlanes = 32;
  /// The reservations of one window, counted per node.
  struct Counts {
    // The counts' bit planes, plane by plane: word w of plane k is planes[k * words + w]
    // (so a copy is one block of the planes in use; per word, with each word's planes
    // together, copying was a quarter of start()'s time).
    std::vector<uint64_t> planes;
    size_t words;
    std::vector<uint8_t> top;      // per node word: planes that were in use since the cycle or the last copy (all above are 0)
    size_t used = 0;               // the most of top
    NodeSet held;                  // nodes with a count above zero
    std::vector<uint8_t> in;       // by reservation index: in the window
    Counts(size_t n_words, size_t n_nodes)
        : planes(n_words * kPlanes, 0), words(n_words), top(n_words, 0), held(n_nodes) {}

    void enter(size_t id, std::span<const std::pair<size_t, uint64_t>> ws) {
      in[id] = 1;
      for (const auto& [w, m] : ws) count_in(w, m);
    }
    void leave(size_t id, std::span<const std::pair<size_t, uint64_t>> ws) {
      in[id] = 0;
      for (const auto& [w, m] : ws) count_out(w, m);
    }
    /// +1 on the nodes `m` of word `w` (a carry chain through the planes).
    void count_in(size_t w, uint64_t m) {
      uint64_t* p = planes.data() + w;
      size_t k = 0;
      for (uint64_t carry = m; carry != 0; ++k) {
        const uint64_t next = p[k * words] & carry;
        p[k * words] ^= carry;
        carry = next;
      }
      if (k > top[w]) {
        top[w] = static_cast<uint8_t>(k);
        used = std::max(used, k);
      }
      held.set_word(w, held.word(w) | m);
    }
    /// -1 on the nodes `m` of word `w`, each counted at least once.
    void count_out(size_t w, uint64_t m) {
      uint64_t* p = planes.data() + w;
      // the nodes at an odd count: those at 1 fall to 0, where no higher plane is set
      const uint64_t odd = m & p[0];
      for (uint64_t borrow = m, k = 0; borrow != 0; ++k) {
        const uint64_t next = ~p[k * words] & borrow;
        p[k * words] ^= borrow;
        borrow = next;
      }
      if (odd == 0) return;  // every node of m was at 2 or more (ORing the planes each time was a fifth of slide)
      // (top stays: a plane that falls to 0 costs an OR until the next copy, where
      // lowering top past the zero planes was 16% of slide's time)
      uint64_t higher = 0;
      for (size_t k = 1, t = top[w]; k < t; ++k) higher |= p[k * words];
      held.set_word(w, held.word(w) & ~(odd & ~higher));
    }
    /// Becomes `o`: the planes either has in use, in one block.
    void copy_from(const Counts& o) {
      const size_t n = std::max(used, o.used) * words;
      std::copy(o.planes.begin(), o.planes.begin() + static_cast<std::ptrdiff_t>(n), planes.begin());
      std::copy(o.top.begin(), o.top.end(), top.begin());
      used = o.used;
      held.fill_from(o.held);
      std::copy(o.in.begin(), o.in.end(), in.begin());
    }
  };

  [[nodiscard]] std::span<const std::pair<size_t, uint64_t>> words_of(size_t id) const {
    return {pool_.data() + resvs_[id].first, resvs_[id].count};
  }

  SimTime now_;
  size_t words_;
  std::vector<Resv> resvs_;
  NodeWords pool_;  // the reservations' nodes
  std::vector<size_t> by_begin_, by_end_;  // indices into resvs_, sorted
  Counts first_;      // the reservations that begin before first_end_: the last job's first window
  Counts win_;        // the window last slid to
  SimTime first_end_;
  size_t entered_ = 0, left_ = 0;          // the window: by_begin_[0, entered_) begun, by_end_[0, left_) ended
  uint64_t hash_ = 0;                      // the candidates' hash
};

}  // namespace gcsim::bf
