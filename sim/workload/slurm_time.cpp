// Slurm's time formats. Every parser here is strict about characters (digits and
// the separators of the form only; no signs, no blanks) and returns std::nullopt
// rather than guessing. Calendar arithmetic is done by hand on the proleptic
// Gregorian calendar so results never depend on the host's time zone or libc.
#include "sim/core/input_file.hpp"
#include "sim/workload/slurm_time.hpp"

#include <array>
#include <cctype>
#include <cstdio>
#include <vector>

namespace gcsim::slurm_time {
namespace {

constexpr int64_t kSecPerMin = 60;
constexpr int64_t kSecPerHour = 3600;
constexpr int64_t kSecPerDay = 86400;

// Largest finite duration we accept, in whole seconds: anything at or above
// SimTime::infinite() would be indistinguishable from "unlimited".
constexpr int64_t kMaxSeconds = SimTime::infinite().count_us() / SimTime::kPerSecond - 1;

[[nodiscard]] bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

/// A field of one or more ASCII digits, without sign. Rejects values that would
/// not fit comfortably (more than 12 digits is already beyond any sane limit).
[[nodiscard]] std::optional<int64_t> parse_digits(std::string_view s) {
  if (s.empty() || s.size() > 12) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

/// Sum of fields (days, hours, minutes, seconds) in seconds, or nullopt when the
/// total would reach infinite().
[[nodiscard]] std::optional<int64_t> total_seconds(int64_t d, int64_t h, int64_t m, int64_t s) {
  // Each field has at most 12 digits, so every product below fits in int64.
  const int64_t t = d * kSecPerDay + h * kSecPerHour + m * kSecPerMin + s;
  if (t > kMaxSeconds) return std::nullopt;
  return t;
}

/// "D-HH:MM:SS"-style fields after the day part, as a list of numbers.
[[nodiscard]] std::optional<std::vector<int64_t>> parse_colon_fields(std::string_view s,
                                                                     size_t max_fields) {
  const auto parts = split(s, ':');
  if (parts.size() > max_fields) return std::nullopt;
  std::vector<int64_t> out;
  for (auto p : parts) {
    const auto v = parse_digits(p);
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

/// Days since 1970-01-01 of a proleptic Gregorian date. Works by shifting the
/// year to start in March, so the leap day is the last day of a "year" and the
/// month lengths March..January repeat in a fixed 153-day pattern per 5 months.
[[nodiscard]] constexpr int64_t days_from_civil(int64_t y, int m, int d) {
  y -= (m <= 2) ? 1 : 0;                                    // Jan, Feb belong to the previous March-year
  const int64_t era = (y >= 0 ? y : y - 399) / 400;         // 400-year cycles (146097 days each)
  const int64_t yoe = y - era * 400;                        // year of era, 0..399
  const int64_t mp = (m + 9) % 12;                          // March = 0 .. February = 11
  const int64_t doy = (153 * mp + 2) / 5 + d - 1;           // day of the March-year, 0..365
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;  // day of era, 0..146096
  return era * 146097 + doe - 719468;                       // 719468 = days 0000-03-01 .. 1970-01-01
}

struct Civil {
  int64_t year;
  int month;
  int day;
};

/// Inverse of days_from_civil.
[[nodiscard]] constexpr Civil civil_from_days(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;                                   // 0..146096
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // 0..399
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);             // 0..365
  const int64_t mp = (5 * doy + 2) / 153;                                  // March = 0
  const int day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  const int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return {year, month, day};
}

static_assert(days_from_civil(1970, 1, 1) == 0);
static_assert(days_from_civil(2000, 3, 1) == 11017);
static_assert(civil_from_days(11016).month == 2 && civil_from_days(11016).day == 29);

[[nodiscard]] constexpr bool is_leap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

[[nodiscard]] constexpr int days_in_month(int64_t y, int m) {
  constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return (m == 2 && is_leap(y)) ? 29 : kDays[static_cast<size_t>(m - 1)];
}

/// Exactly `n` digits.
[[nodiscard]] std::optional<int> fixed_digits(std::string_view s, size_t n) {
  if (s.size() != n) return std::nullopt;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

std::optional<SimTime> parse_time_limit(std::string_view s) {
  if (iequals(s, "UNLIMITED") || iequals(s, "INFINITE")) return SimTime::infinite();
  if (s.empty()) return std::nullopt;

  // Like Slurm, only the shape of the string is checked; the fields themselves
  // are not range-checked ("90" minutes and "1:90" are both accepted and mean
  // what they add up to). Seconds are kept exactly; Slurm itself would round a
  // limit up to whole minutes.
  int64_t d = 0, h = 0, m = 0, sec = 0;
  const size_t dash = s.find('-');
  if (dash != std::string_view::npos) {
    // days-hours, days-hours:minutes, days-hours:minutes:seconds
    const auto days = parse_digits(s.substr(0, dash));
    const auto rest = parse_colon_fields(s.substr(dash + 1), 3);
    if (!days || !rest) return std::nullopt;
    d = *days;
    h = (*rest)[0];
    if (rest->size() > 1) m = (*rest)[1];
    if (rest->size() > 2) sec = (*rest)[2];
  } else {
    // minutes, minutes:seconds, hours:minutes:seconds
    const auto f = parse_colon_fields(s, 3);
    if (!f) return std::nullopt;
    switch (f->size()) {
      case 1: m = (*f)[0]; break;
      case 2: m = (*f)[0]; sec = (*f)[1]; break;
      default: h = (*f)[0]; m = (*f)[1]; sec = (*f)[2]; break;
    }
  }
  const auto t = total_seconds(d, h, m, sec);
  if (!t) return std::nullopt;
  // Slurm: "A time limit of zero requests that no time limit be imposed." Any
  // spelling that adds up to zero ("0", "0:00", "0-0") therefore means unlimited.
  if (*t == 0) return SimTime::infinite();
  return SimTime::seconds(*t);
}

std::optional<SimTime> parse_elapsed(std::string_view s) {
  if (iequals(s, "UNLIMITED") || iequals(s, "INFINITE") || iequals(s, "Partition_Limit"))
    return SimTime::infinite();
  if (s.empty()) return std::nullopt;

  // Optional fractional seconds: up to microsecond precision is kept, further
  // digits are truncated.
  int64_t frac_us = 0;
  const size_t dot = s.find('.');
  if (dot != std::string_view::npos) {
    const std::string_view frac = s.substr(dot + 1);
    if (frac.empty() || frac.size() > 9) return std::nullopt;
    int64_t scale = 100000;
    for (char c : frac) {
      if (c < '0' || c > '9') return std::nullopt;
      frac_us += (c - '0') * scale;
      scale /= 10;
    }
    s = s.substr(0, dot);
  }

  int64_t d = 0;
  bool has_days = false;
  const size_t dash = s.find('-');
  if (dash != std::string_view::npos) {
    const auto days = parse_digits(s.substr(0, dash));
    if (!days) return std::nullopt;
    d = *days;
    has_days = true;
    s = s.substr(dash + 1);
  }
  const auto f = parse_colon_fields(s, 3);
  if (!f) return std::nullopt;
  int64_t h = 0, m = 0, sec = 0;
  if (f->size() == 3) {
    h = (*f)[0]; m = (*f)[1]; sec = (*f)[2];
  } else if (f->size() == 2 && !has_days) {
    m = (*f)[0]; sec = (*f)[1];  // MM:SS (sacct's short form, e.g. TotalCPU)
  } else {
    return std::nullopt;         // a bare number, or D-HH:MM
  }
  // sacct always normalises: minutes and seconds below 60, hours below 24 once
  // days are printed. Hours without days are left open (other tools print 36:00:00).
  if (m >= 60 || sec >= 60 || (has_days && h >= 24)) return std::nullopt;
  const auto t = total_seconds(d, h, m, sec);
  if (!t) return std::nullopt;
  return SimTime::us(*t * SimTime::kPerSecond + frac_us);
}

std::string format_elapsed(SimTime d) {
  if (d.is_infinite()) return "UNLIMITED";
  // Negative durations cannot come out of sacct; print them as zero.
  int64_t t = d.whole_seconds();
  if (t < 0) t = 0;
  const int64_t days = t / kSecPerDay;
  t %= kSecPerDay;
  const int hours = static_cast<int>(t / kSecPerHour);
  const int mins = static_cast<int>((t % kSecPerHour) / kSecPerMin);
  const int secs = static_cast<int>(t % kSecPerMin);
  char buf[48];
  if (days > 0) {
    std::snprintf(buf, sizeof buf, "%lld-%02d:%02d:%02d", static_cast<long long>(days), hours,
                  mins, secs);
  } else {
    std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", hours, mins, secs);
  }
  return buf;
}

std::string format_timelimit(SimTime d) { return format_elapsed(d); }

std::string format_iso(int64_t epoch_seconds) {
  // Floor division so that times before 1970 land on the right day.
  int64_t days = epoch_seconds / kSecPerDay;
  int64_t rem = epoch_seconds % kSecPerDay;
  if (rem < 0) {
    rem += kSecPerDay;
    --days;
  }
  const Civil c = civil_from_days(days);
  if (c.year >= 0 && c.year <= 9999) {
    // Digit by digit: a million-job sacct file formats four of these per row.
    std::string out(19, '0');
    auto put = [&](size_t at, int64_t v, int width) {
      for (int i = width - 1; i >= 0; --i, v /= 10) out[at + static_cast<size_t>(i)] = static_cast<char>('0' + v % 10);
    };
    put(0, c.year, 4);
    out[4] = '-';
    put(5, c.month, 2);
    out[7] = '-';
    put(8, c.day, 2);
    out[10] = 'T';
    put(11, rem / kSecPerHour, 2);
    out[13] = ':';
    put(14, (rem % kSecPerHour) / 60, 2);
    out[16] = ':';
    put(17, rem % 60, 2);
    return out;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02d-%02dT%02d:%02d:%02d",
                static_cast<long long>(c.year), c.month, c.day,
                static_cast<int>(rem / kSecPerHour), static_cast<int>((rem % kSecPerHour) / 60),
                static_cast<int>(rem % 60));
  return buf;
}

std::optional<int64_t> parse_iso(std::string_view s) {
  // Accepted: "YYYY-MM-DD", "YYYY-MM-DDTHH:MM:SS", "YYYY-MM-DD HH:MM:SS".
  // sacct's "Unknown"/"None" (and anything else) fall through to nullopt.
  if (s.size() != 10 && s.size() != 19) return std::nullopt;
  if (s[4] != '-' || s[7] != '-') return std::nullopt;
  const auto y = fixed_digits(s.substr(0, 4), 4);
  const auto mo = fixed_digits(s.substr(5, 2), 2);
  const auto d = fixed_digits(s.substr(8, 2), 2);
  if (!y || !mo || !d) return std::nullopt;
  if (*y < 1970 || *mo < 1 || *mo > 12 || *d < 1 || *d > days_in_month(*y, *mo))
    return std::nullopt;
  int hh = 0, mm = 0, ss = 0;
  if (s.size() == 19) {
    if ((s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':') return std::nullopt;
    const auto h = fixed_digits(s.substr(11, 2), 2);
    const auto m = fixed_digits(s.substr(14, 2), 2);
    const auto sec = fixed_digits(s.substr(17, 2), 2);
    // No leap seconds: Slurm's timestamps come from time_t, which has none.
    if (!h || !m || !sec || *h > 23 || *m > 59 || *sec > 59) return std::nullopt;
    hh = *h;
    mm = *m;
    ss = *sec;
  }
  return days_from_civil(*y, *mo, *d) * kSecPerDay + hh * kSecPerHour + mm * kSecPerMin + ss;
}

}  // namespace gcsim::slurm_time
