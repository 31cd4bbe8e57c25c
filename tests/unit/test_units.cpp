#include <catch2/catch.hpp>

#include "sim/core/units.hpp"

using namespace gcsim;

TEST_CASE("parse_bytes: decimal, binary and bare", "[units]") {
  CHECK(units::parse_bytes("0") == 0);
  CHECK(units::parse_bytes("512") == 512);
  CHECK(units::parse_bytes("512B") == 512);
  CHECK(units::parse_bytes("1kB") == 1000);
  CHECK(units::parse_bytes("1KB") == 1000);
  CHECK(units::parse_bytes("80GB") == 80'000'000'000);
  CHECK(units::parse_bytes("2TB") == 2'000'000'000'000);
  CHECK(units::parse_bytes("1KiB") == 1024);
  CHECK(units::parse_bytes("4MiB") == 4 * 1024 * 1024);
  CHECK(units::parse_bytes("80GiB") == 80LL << 30);
  CHECK(units::parse_bytes("1TiB") == 1LL << 40);
  CHECK(units::parse_bytes("1.5GiB") == 3LL << 29);
  CHECK(units::parse_bytes(".5KiB") == 512);
  CHECK(units::parse_bytes("1e3") == 1000);
  CHECK(units::parse_bytes("1.5B") == 2);  // rounds to nearest
}

TEST_CASE("parse_bytes: one optional space", "[units]") {
  CHECK(units::parse_bytes("64 GiB") == 64LL << 30);
  CHECK_FALSE(units::parse_bytes("64  GiB"));
  CHECK_FALSE(units::parse_bytes("64 "));
  CHECK_FALSE(units::parse_bytes(" 64GiB"));
  CHECK_FALSE(units::parse_bytes("64GiB "));
  CHECK_FALSE(units::parse_bytes("64\tGiB"));
}

TEST_CASE("parse_bytes: rejects malformed input", "[units]") {
  for (const char* s : {"", "GiB", "-1", "-1GiB", "+1GiB", "1gb", "1Gb", "1gib", "1GIB", "1 G", "1GiBs",
                        "1GiB/s", "1.2.3", "nan", "inf", "NaN", "1e", "1e+", "0x10", "1,5GiB", "1_000",
                        "1K", "1M", ".", "1e400", "10000PiB", "9223372036854775808"}) {
    INFO(s);
    CHECK_FALSE(units::parse_bytes(s));
  }
}

TEST_CASE("bytes_to_mib", "[units]") {
  CHECK(units::bytes_to_mib(1LL << 40) == 1'048'576);
  CHECK(units::bytes_to_mib(80'000'000'000) == 76'293);
  CHECK(units::bytes_to_mib(1024 * 1024 - 1) == 0);
}

TEST_CASE("parse_bandwidth_bps: bits and bytes", "[units]") {
  CHECK(units::parse_bandwidth_bps("1bps") == Approx(1));
  CHECK(units::parse_bandwidth_bps("10Kbps") == Approx(1e4));
  CHECK(units::parse_bandwidth_bps("100Mbps") == Approx(1e8));
  CHECK(units::parse_bandwidth_bps("200Gbps") == Approx(200e9));
  CHECK(units::parse_bandwidth_bps("200 Gbps") == Approx(200e9));
  CHECK(units::parse_bandwidth_bps("1.6Tbps") == Approx(1.6e12));
  CHECK(units::parse_bandwidth_bps("1B/s") == Approx(8));
  CHECK(units::parse_bandwidth_bps("1KB/s") == Approx(8e3));
  CHECK(units::parse_bandwidth_bps("1MB/s") == Approx(8e6));
  CHECK(units::parse_bandwidth_bps("25GB/s") == Approx(200e9));
  CHECK(units::parse_bandwidth_bps("1TB/s") == Approx(8e12));
  CHECK(units::parse_bandwidth_bps("1KiB/s") == Approx(8192));
  CHECK(units::parse_bandwidth_bps("1MiB/s") == Approx(8.0 * 1024 * 1024));
  CHECK(units::parse_bandwidth_bps("1GiB/s") == Approx(8.0 * 1024 * 1024 * 1024));
  CHECK(units::parse_bandwidth_bps("0Gbps") == Approx(0));
}

TEST_CASE("parse_bandwidth_bps: rejects malformed input", "[units]") {
  for (const char* s : {"", "100", "-1Gbps", "Gbps", "1gbps", "1GBps", "1Gb", "1GB", "1Gbit/s", "1 Gbps ",
                        "1  Gbps", "nanGbps", "infGbps", "1Gbps/s", "25GB/s/s"}) {
    INFO(s);
    CHECK_FALSE(units::parse_bandwidth_bps(s));
  }
}

TEST_CASE("parse_duration", "[units]") {
  CHECK(units::parse_duration("30") == SimTime::seconds(30));
  CHECK(units::parse_duration("30s") == SimTime::seconds(30));
  CHECK(units::parse_duration("1.5us") == SimTime::us(2));  // rounds up
  CHECK(units::parse_duration("1us") == SimTime::us(1));
  CHECK(units::parse_duration("1 us") == SimTime::us(1));
  CHECK(units::parse_duration("130ns") == SimTime::us(1));
  CHECK(units::parse_duration("2000ns") == SimTime::us(2));
  CHECK(units::parse_duration("5ms") == SimTime::us(5000));
  CHECK(units::parse_duration("90min") == SimTime::minutes(90));
  CHECK(units::parse_duration("1.5h") == SimTime::minutes(90));
  CHECK(units::parse_duration("7d") == SimTime::seconds(7 * 86400));
  CHECK(units::parse_duration("0") == SimTime::us(0));
  for (const char* s : {"", "-1s", "1m", "1sec", "1H", "1D", "1 d ", "nan", "infs", "s", "1hour", "1:00"}) {
    INFO(s);
    CHECK_FALSE(units::parse_duration(s));
  }
}
