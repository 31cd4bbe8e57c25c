// Index-parallel loops for work that is independent per index (compare's variants and
// their bootstrap intervals): results are written per index, so they do not depend on
// how many workers ran them.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace gcsim {

/// Calls f(i) once for each i in [0, n) on up to `threads` workers, the calling thread
/// among them; indices are handed out in ascending order as workers become free.
/// `f` must not throw (catch inside it and record the failure per index).
inline void for_each_index(size_t n, int threads, const std::function<void(size_t)>& f) {
  if (n == 0) return;
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) f(i);
  };
  const size_t workers = std::clamp<size_t>(static_cast<size_t>(std::max(threads, 1)), 1, n);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

}  // namespace gcsim
