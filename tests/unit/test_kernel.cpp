// The event queue's total order and the simulator's independence from globals.
#include <catch2/catch.hpp>

#include "sim/kernel/event_queue.hpp"
#include "sim/kernel/rng.hpp"

using namespace gcsim;

namespace {
Event ev(int64_t t, Phase p, int64_t subject) {
  Event e;
  e.time = SimTime::seconds(t);
  e.phase = p;
  e.subject = subject;
  return e;
}
}  // namespace

TEST_CASE("event queue orders by time, then phase, then insertion", "[kernel]") {
  EventQueue q;
  q.push(ev(5, Phase::kArrival, 1));
  q.push(ev(5, Phase::kRelease, 2));
  q.push(ev(1, Phase::kSchedule, 3));
  q.push(ev(5, Phase::kArrival, 4));
  q.push(ev(5, Phase::kSchedule, 5));
  q.push(ev(5, Phase::kRelease, 6));
  std::vector<int64_t> order;
  while (!q.empty()) order.push_back(q.pop().subject);
  CHECK(order == std::vector<int64_t>{3, 2, 6, 1, 4, 5});
}

TEST_CASE("reversed tie order only changes equal (time, phase) events", "[kernel]") {
  EventQueue q(true);
  q.push(ev(5, Phase::kArrival, 1));
  q.push(ev(5, Phase::kRelease, 2));
  q.push(ev(5, Phase::kArrival, 4));
  q.push(ev(5, Phase::kRelease, 6));
  q.push(ev(2, Phase::kMetrics, 7));
  std::vector<int64_t> order;
  while (!q.empty()) order.push_back(q.pop().subject);
  CHECK(order == std::vector<int64_t>{7, 6, 2, 4, 1});
}

TEST_CASE("hold model keeps the heap ordered over many operations", "[kernel]") {
  EventQueue q;
  RngStream rng(42, "hold");
  for (int i = 0; i < 1000; ++i) q.push(ev(static_cast<int64_t>(rng.below(1000)), Phase::kArrival, i));
  SimTime last;
  for (int i = 0; i < 20000; ++i) {
    Event e = q.pop();
    REQUIRE(e.time >= last);
    last = e.time;
    e.time = e.time + SimTime::seconds(static_cast<int64_t>(1 + rng.below(100)));
    q.push(e);
  }
  CHECK(q.size() == 1000);
}

TEST_CASE("named RNG streams are independent and reproducible", "[kernel]") {
  RngStream a1(7, "arrivals"), a2(7, "arrivals"), b(7, "durations");
  const uint64_t x = a1.next();
  CHECK(x == a2.next());
  CHECK(x != b.next());
  RngStream u(7, "u");
  for (int i = 0; i < 1000; ++i) {
    const double v = u.uniform();
    REQUIRE(v >= 0.0);
    REQUIRE(v < 1.0);
  }
}

TEST_CASE("SimTime rounds model results up to the next microsecond", "[kernel]") {
  CHECK(SimTime::from_seconds_ceil(1.5e-6).count_us() == 2);
  CHECK(SimTime::from_seconds_ceil(2e-6).count_us() == 2);
  CHECK(SimTime::from_seconds_ceil(-3).count_us() == 0);
  CHECK(SimTime::from_seconds_ceil(552.21).count_us() == 552'210'000);
  CHECK((SimTime::infinite() + SimTime::seconds(5)).is_infinite());
  CHECK(SimTime::us(-1).whole_seconds() == -1);
}
