// Event queue under the classic hold model: with N events pending, pop the
// earliest and push it back a random increment later. Cost per hold vs N.
#include <benchmark/benchmark.h>

#include "sim/kernel/event_queue.hpp"
#include "sim/kernel/rng.hpp"

using namespace gcsim;

static void BM_EventQueueHold(benchmark::State& state) {
  const int64_t n = state.range(0);
  EventQueue q;
  RngStream rng(1, "hold");
  q.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    Event e;
    e.time = SimTime::us(static_cast<int64_t>(rng.below(1'000'000)));
    e.phase = static_cast<Phase>(rng.below(5));
    e.subject = i;
    q.push(e);
  }
  for (auto _ : state) {
    Event e = q.pop();
    e.time = e.time + SimTime::us(static_cast<int64_t>(1 + rng.below(1'000'000)));
    q.push(e);
    benchmark::DoNotOptimize(e);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EventQueueHold)->RangeMultiplier(10)->Range(1000, 1'000'000);
