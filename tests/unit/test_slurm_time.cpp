// Slurm time formats: sbatch --time, sacct Elapsed/Timelimit and ISO-8601 UTC.
#include <catch2/catch.hpp>

#include "sim/workload/slurm_time.hpp"

using gcsim::SimTime;
namespace st = gcsim::slurm_time;

namespace {
SimTime hms(int64_t h, int64_t m, int64_t s) { return SimTime::seconds(h * 3600 + m * 60 + s); }
}  // namespace

TEST_CASE("parse_time_limit: every sbatch --time form", "[slurm_time]") {
  // minutes
  CHECK(st::parse_time_limit("90") == SimTime::minutes(90));
  CHECK(st::parse_time_limit("4") == SimTime::minutes(4));
  CHECK(st::parse_time_limit("2") == SimTime::minutes(2));
  // minutes:seconds
  CHECK(st::parse_time_limit("1:30") == hms(0, 1, 30));
  CHECK(st::parse_time_limit("0:45") == SimTime::seconds(45));
  // hours:minutes:seconds
  CHECK(st::parse_time_limit("2:00:00") == hms(2, 0, 0));
  CHECK(st::parse_time_limit("01:02:03") == hms(1, 2, 3));
  // days-hours
  CHECK(st::parse_time_limit("1-12") == hms(36, 0, 0));
  CHECK(st::parse_time_limit("7-0") == hms(7 * 24, 0, 0));
  // days-hours:minutes
  CHECK(st::parse_time_limit("2-03:04") == hms(2 * 24 + 3, 4, 0));
  // days-hours:minutes:seconds
  CHECK(st::parse_time_limit("1-0:0:1") == hms(24, 0, 1));
  CHECK(st::parse_time_limit("1-02:03:04") == hms(26, 3, 4));
}

TEST_CASE("parse_time_limit: fields are not range-checked, like Slurm", "[slurm_time]") {
  CHECK(st::parse_time_limit("1:90") == hms(0, 2, 30));
  CHECK(st::parse_time_limit("36:00:00") == hms(36, 0, 0));
  CHECK(st::parse_time_limit("0-48") == hms(48, 0, 0));
  CHECK(st::parse_time_limit("100000") == SimTime::minutes(100000));
}

TEST_CASE("parse_time_limit: unlimited spellings and zero", "[slurm_time]") {
  CHECK(st::parse_time_limit("UNLIMITED") == SimTime::infinite());
  CHECK(st::parse_time_limit("unlimited") == SimTime::infinite());
  CHECK(st::parse_time_limit("INFINITE") == SimTime::infinite());
  CHECK(st::parse_time_limit("Infinite") == SimTime::infinite());
  // A limit of zero requests no limit.
  CHECK(st::parse_time_limit("0") == SimTime::infinite());
  CHECK(st::parse_time_limit("0:00") == SimTime::infinite());
  CHECK(st::parse_time_limit("0-0:0:0") == SimTime::infinite());
}

TEST_CASE("parse_time_limit: malformed", "[slurm_time]") {
  for (const char* bad : {"", "-1", "-5", "1:2:3:4", "1-2:3:4:5", "1-", "-1-2", "1-2-3", ":", "1:",
                          ":30", "1::2", "abc", "1h", "1.5", " 1", "1 ", "+1", "1-2:3:", "1:2:3.5",
                          "UNLIMITEDX", "9999999999999"}) {
    INFO("input: '" << bad << "'");
    CHECK_FALSE(st::parse_time_limit(bad).has_value());
  }
}

TEST_CASE("parse_elapsed: sacct forms", "[slurm_time]") {
  CHECK(st::parse_elapsed("00:00:05") == SimTime::seconds(5));
  CHECK(st::parse_elapsed("01:02:03") == hms(1, 2, 3));
  CHECK(st::parse_elapsed("1-02:03:04") == hms(26, 3, 4));
  CHECK(st::parse_elapsed("12-00:00:00") == hms(288, 0, 0));
  CHECK(st::parse_elapsed("02:03") == hms(0, 2, 3));
  CHECK(st::parse_elapsed("00:00:00") == SimTime::seconds(0));
  CHECK(st::parse_elapsed("00:00:01.234") == SimTime::us(1'234'000));
  CHECK(st::parse_elapsed("00:01.5") == SimTime::us(1'500'000));
  CHECK(st::parse_elapsed("02:01.5") == SimTime::us(121'500'000));
  CHECK(st::parse_elapsed("00:00:00.1234567") == SimTime::us(123'456));
  CHECK(st::parse_elapsed("1-00:00:00.000001") == SimTime::us(86'400'000'001));
  CHECK(st::parse_elapsed("UNLIMITED") == SimTime::infinite());
  CHECK(st::parse_elapsed("INFINITE") == SimTime::infinite());
  CHECK(st::parse_elapsed("Partition_Limit") == SimTime::infinite());
}

TEST_CASE("parse_elapsed: malformed", "[slurm_time]") {
  for (const char* bad : {"", "5", "1-02:03", "1-02", "00:60", "00:00:60", "00:60:00", "1-24:00:00",
                          "-00:00:01", "00:00:01.", "00:00:.5", "00:00:01.x", "1:2:3:4", "a:b",
                          "00:00:01.1234567890", "None", "Unknown", "00:00:01 "}) {
    INFO("input: '" << bad << "'");
    CHECK_FALSE(st::parse_elapsed(bad).has_value());
  }
}

TEST_CASE("format_elapsed / format_timelimit", "[slurm_time]") {
  CHECK(st::format_elapsed(SimTime::seconds(5)) == "00:00:05");
  CHECK(st::format_elapsed(SimTime::seconds(0)) == "00:00:00");
  CHECK(st::format_elapsed(hms(23, 59, 59)) == "23:59:59");
  CHECK(st::format_elapsed(hms(24, 0, 0)) == "1-00:00:00");
  CHECK(st::format_elapsed(hms(26, 3, 4)) == "1-02:03:04");
  CHECK(st::format_elapsed(hms(1000 * 24 + 5, 6, 7)) == "1000-05:06:07");
  CHECK(st::format_elapsed(SimTime::us(5'999'999)) == "00:00:05");  // rounded down
  CHECK(st::format_elapsed(SimTime::seconds(-3)) == "00:00:00");
  CHECK(st::format_elapsed(SimTime::infinite()) == "UNLIMITED");
  CHECK(st::format_timelimit(SimTime::infinite()) == "UNLIMITED");
  CHECK(st::format_timelimit(SimTime::minutes(90)) == "01:30:00");
  CHECK(st::format_timelimit(hms(36, 0, 0)) == "1-12:00:00");
}

TEST_CASE("format_elapsed and parse_elapsed round-trip", "[slurm_time]") {
  for (int64_t s : {int64_t{0}, int64_t{1}, int64_t{59}, int64_t{60}, int64_t{3599},
                    int64_t{3600}, int64_t{86399}, int64_t{86400}, int64_t{93784},
                    int64_t{864000 + 7}, int64_t{365} * 86400 * 30}) {
    INFO("seconds: " << s);
    const auto t = SimTime::seconds(s);
    CHECK(st::parse_elapsed(st::format_elapsed(t)) == t);
  }
  CHECK(st::parse_elapsed(st::format_elapsed(SimTime::infinite())) == SimTime::infinite());
  for (const char* text : {"00:00:05", "1-02:03:04", "23:59:59", "10-00:00:00"}) {
    CHECK(st::format_elapsed(*st::parse_elapsed(text)) == text);
  }
  // A time limit parsed from sbatch's forms prints in sacct's form.
  CHECK(st::format_timelimit(*st::parse_time_limit("1-12")) == "1-12:00:00");
  CHECK(st::format_timelimit(*st::parse_time_limit("0")) == "UNLIMITED");
}

TEST_CASE("format_iso: epoch seconds in UTC (checked against date -u)", "[slurm_time]") {
  CHECK(st::format_iso(0) == "1970-01-01T00:00:00");
  CHECK(st::format_iso(86399) == "1970-01-01T23:59:59");
  CHECK(st::format_iso(820447200) == "1995-12-31T22:00:00");
  CHECK(st::format_iso(951782400) == "2000-02-29T00:00:00");
  CHECK(st::format_iso(951868799) == "2000-02-29T23:59:59");
  CHECK(st::format_iso(1704067200) == "2024-01-01T00:00:00");
  CHECK(st::format_iso(1709164800) == "2024-02-29T00:00:00");
  CHECK(st::format_iso(4107542399) == "2100-02-28T23:59:59");
  CHECK(st::format_iso(4107542400) == "2100-03-01T00:00:00");  // 2100 is not a leap year
  CHECK(st::format_iso(253402300799) == "9999-12-31T23:59:59");
  CHECK(st::format_iso(-1) == "1969-12-31T23:59:59");
}

TEST_CASE("parse_iso: forms and values", "[slurm_time]") {
  CHECK(st::parse_iso("1970-01-01T00:00:00") == 0);
  CHECK(st::parse_iso("1970-01-01") == 0);
  CHECK(st::parse_iso("1995-12-31T22:00:00") == 820447200);
  CHECK(st::parse_iso("1995-12-31 22:00:00") == 820447200);
  CHECK(st::parse_iso("2000-02-29") == 951782400);
  CHECK(st::parse_iso("2024-02-29T12:34:56") == 1709210096);
  CHECK(st::parse_iso("2100-03-01T00:00:00") == 4107542400);
  CHECK(st::parse_iso("9999-12-31T23:59:59") == 253402300799);
}

TEST_CASE("parse_iso: leap years and invalid dates", "[slurm_time]") {
  CHECK(st::parse_iso("2000-02-29").has_value());  // divisible by 400
  CHECK(st::parse_iso("2024-02-29").has_value());
  CHECK_FALSE(st::parse_iso("2100-02-29").has_value());  // divisible by 100 only
  CHECK_FALSE(st::parse_iso("2023-02-29").has_value());
  CHECK_FALSE(st::parse_iso("1900-01-01").has_value());  // before 1970
  for (const char* bad : {"", "Unknown", "None", "2024-00-01", "2024-13-01", "2024-01-00",
                          "2024-01-32", "2024-04-31", "2024-06-31", "2024-01-01T24:00:00",
                          "2024-01-01T23:60:00", "2024-01-01T23:59:60", "2024-1-01",
                          "2024-01-01T1:00:00", "2024-01-01X00:00:00", "2024/01/01",
                          "2024-01-01T00:00", "2024-01-01T00:00:00Z", "+024-01-01",
                          "2024-01-01T00:00:0a", " 2024-01-01"}) {
    INFO("input: '" << bad << "'");
    CHECK_FALSE(st::parse_iso(bad).has_value());
  }
}

TEST_CASE("ISO round-trip over many days", "[slurm_time]") {
  // Every day from 1970 to 2400 plus an odd time of day: format then parse back.
  for (int64_t day = 0; day < 157'000; day += 7) {
    const int64_t t = day * 86400 + 12345;
    const std::string s = st::format_iso(t);
    INFO(s);
    REQUIRE(st::parse_iso(s) == t);
  }
  CHECK(st::format_iso(*st::parse_iso("2038-01-19T03:14:08")) == "2038-01-19T03:14:08");
}
