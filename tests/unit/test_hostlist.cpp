// Slurm hostlist expressions: expansion as slurm.conf and sinfo write them, compression
// as scontrol prints it, and the bounds that keep an absurd expression from eating memory.
#include <catch2/catch.hpp>

#include "sim/core/hostlist.hpp"

using gcsim::hostlist::compress;
using gcsim::hostlist::expand;

namespace {

std::string error_of(const std::string& expr) {
  std::string err;
  if (expand(expr, &err)) return "(no error)";
  return err;
}

}  // namespace

TEST_CASE("hostlist: ranges, padding, products, lists", "[hostlist]") {
  CHECK(*expand("gpu[001-003]") == std::vector<std::string>{"gpu001", "gpu002", "gpu003"});
  CHECK(*expand("a[1-2,7],b5") == std::vector<std::string>{"a1", "a2", "a7", "b5"});
  CHECK(*expand("rack[1-2]-n[01-02]") == std::vector<std::string>{"rack1-n01", "rack1-n02", "rack2-n01", "rack2-n02"});
  CHECK(compress({"thin0002", "thin0001", "thin0003", "fat7"}) == "fat7,thin[0001-0003]");
  CHECK(compress(*expand("n[000-106]")) == "n[000-106]");
  // Groups by (prefix, width), sorted by prefix; a plain name sorts by itself, before a
  // group of the same prefix; duplicates once; past nine digits a name is plain.
  CHECK(compress({"n10", "n9", "n010", "gpu", "n011", "gpu", "a1", "n9"}) == "a1,gpu,n9,n10,n[010-011]");
  CHECK(compress({"n2", "n", "n1", "x1234567890", "n4"}) == "n,n[1-2,4],x1234567890");
}

TEST_CASE("hostlist: malformed and absurd expressions are errors", "[hostlist][invalid]") {
  CHECK(error_of("n[1-") == "unterminated '[' in host list");
  CHECK(error_of("n[3-1]") == "host range '3-1' runs backwards");
  CHECK(error_of("n[a-b]") == "host range 'a-b' is not numeric");
  CHECK(error_of("n[0-1000000]") == "host range '0-1000000' has more than a million hosts");
  CHECK(error_of("n[0-999999]") == "(no error)");
  // Each range is small; their product (what the fuzzer found: 107^3 names, minutes
  // of work under ASan) is what must be bounded.
  CHECK(error_of("n[000-106]x[000-106]y[000-106]") == "host list has more than a million hosts");
  CHECK(error_of("a[0-999],b[0-999],c[0-999999]") == "host list has more than a million hosts");
  CHECK(error_of("a,,b") == "empty host name in host list");
}
