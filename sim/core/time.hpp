// Simulated time: a strong integer type counting microseconds.
// Cost models may compute in double seconds; turning such a result into
// simulated time goes through SimTime::from_seconds_ceil, the one rounding point.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>

namespace gcsim {

class SimTime {
 public:
  static constexpr int64_t kPerSecond = 1'000'000;

  constexpr SimTime() = default;
  [[nodiscard]] static constexpr SimTime us(int64_t v) { return SimTime(v); }
  [[nodiscard]] static constexpr SimTime seconds(int64_t s) { return SimTime(s * kPerSecond); }
  [[nodiscard]] static constexpr SimTime minutes(int64_t m) { return seconds(m * 60); }
  /// Rounds up to the next microsecond; negative inputs clamp to zero.
  [[nodiscard]] static SimTime from_seconds_ceil(double s);
  /// The largest representable time, used for "UNLIMITED" limits.
  [[nodiscard]] static constexpr SimTime infinite() {
    return SimTime(std::numeric_limits<int64_t>::max() / 4);
  }

  [[nodiscard]] constexpr int64_t count_us() const { return v_; }
  /// Whole seconds, rounded down (sacct prints whole seconds).
  [[nodiscard]] constexpr int64_t whole_seconds() const {
    return v_ >= 0 ? v_ / kPerSecond : -((-v_ + kPerSecond - 1) / kPerSecond);
  }
  [[nodiscard]] constexpr double to_seconds() const { return static_cast<double>(v_) / kPerSecond; }
  [[nodiscard]] constexpr bool is_infinite() const { return v_ >= infinite().v_; }

  constexpr auto operator<=>(const SimTime&) const = default;
  constexpr SimTime operator+(SimTime o) const {
    return (is_infinite() || o.is_infinite()) ? infinite() : SimTime(v_ + o.v_);
  }
  constexpr SimTime operator-(SimTime o) const { return SimTime(v_ - o.v_); }
  constexpr SimTime& operator+=(SimTime o) { return *this = *this + o; }
  constexpr SimTime& operator-=(SimTime o) { return *this = *this - o; }

 private:
  constexpr explicit SimTime(int64_t v) : v_(v) {}
  int64_t v_ = 0;
};

}  // namespace gcsim
