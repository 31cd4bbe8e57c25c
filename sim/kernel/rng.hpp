// Named random streams from one master seed: each consumer draws from its own
// stream, so adding a consumer never shifts another's draws. SplitMix64 seeding,
// xoshiro256** generation, and our own distribution functions (std::*_distribution
// differ between standard libraries).
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

namespace gcsim {

class RngStream {
 public:
  RngStream(uint64_t master_seed, std::string_view name) {
    uint64_t x = master_seed ^ 0x9e3779b97f4a7c15ULL;
    for (char c : name) x = (x ^ static_cast<uint8_t>(c)) * 0x100000001b3ULL;
    for (auto& s : s_) s = splitmix(x);
  }
  uint64_t next() {
    const uint64_t r = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return r;
  }
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform integer in [0, n).
  uint64_t below(uint64_t n) { return n == 0 ? 0 : next() % n; }
  double exponential(double mean) { return -mean * std::log1p(-uniform()); }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t splitmix(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t s_[4];
};

}  // namespace gcsim
