// The pending-event set: a binary heap with a total order (time, phase, insertion
// counter). Equal events never tie, so the processing order never depends on
// pointers, hashing or the heap's internal layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/core/time.hpp"

namespace gcsim {

/// True in a build configured with -DGCSIM_REVERSED_TIES=ON: simulations then invert the
/// tie order by default (SimulationOptions::reverse_ties inverts it back).
#ifdef GCSIM_REVERSED_TIES
inline constexpr bool kReversedTiesBuild = true;
#else
inline constexpr bool kReversedTiesBuild = false;
#endif

/// Stages inside one instant, in the order they run (see sim/README.md).
enum class Phase : uint8_t {
  kRelease = 0,   // job ends and kills free resources first
  kArrival = 1,   // submissions
  kState = 2,     // eligibility changes (dependencies, begin times)
  kSchedule = 3,  // one scheduling pass sees the whole batch
  kMetrics = 4,   // samplers and observers
};

enum class EventKind : uint8_t { kJobEnd, kJobSubmit, kJobEligible, kSchedPass, kSample, kWake };

struct Event {
  SimTime time;
  Phase phase = Phase::kRelease;
  EventKind kind = EventKind::kJobEnd;
  uint64_t seq = 0;      // insertion counter, assigned by the queue
  int64_t subject = -1;  // job index (or -1)
  uint64_t token = 0;    // lets owners ignore events they have superseded
};

class EventQueue {
 public:
  /// `reverse_ties` inverts the insertion-counter tie break (a determinism test
  /// uses it to expose hidden order dependence between simultaneous events).
  explicit EventQueue(bool reverse_ties = false) : reverse_ties_(reverse_ties) {}

  void push(Event e) {
    e.seq = next_seq_++;
    heap_.push_back(e);
    sift_up(heap_.size() - 1);
  }
  [[nodiscard]] bool empty() const { return heap_.empty(); }
  [[nodiscard]] size_t size() const { return heap_.size(); }
  [[nodiscard]] const Event& top() const { return heap_.front(); }
  Event pop() {
    Event e = heap_.front();
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
    return e;
  }
  void reserve(size_t n) { heap_.reserve(n); }

 private:
  [[nodiscard]] bool before(const Event& a, const Event& b) const {
    if (a.time != b.time) return a.time < b.time;
    if (a.phase != b.phase) return a.phase < b.phase;
    return reverse_ties_ ? a.seq > b.seq : a.seq < b.seq;
  }
  void sift_up(size_t i) {
    Event e = heap_[i];
    while (i > 0) {
      size_t p = (i - 1) / 2;
      if (!before(e, heap_[p])) break;
      heap_[i] = heap_[p];
      i = p;
    }
    heap_[i] = e;
  }
  void sift_down(size_t i) {
    const size_t n = heap_.size();
    Event e = heap_[i];
    while (true) {
      size_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && before(heap_[c + 1], heap_[c])) ++c;
      if (!before(heap_[c], e)) break;
      heap_[i] = heap_[c];
      i = c;
    }
    heap_[i] = e;
  }

  std::vector<Event> heap_;
  uint64_t next_seq_ = 0;
  bool reverse_ties_ = false;
};

/// FNV-1a over the processed event stream: two runs that made the same decisions
/// in the same order have the same fingerprint.
class Fingerprint {
 public:
  void add(uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h_ ^= (v >> (8 * i)) & 0xff;
      h_ *= 0x100000001b3ULL;
    }
  }
  [[nodiscard]] uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

}  // namespace gcsim
