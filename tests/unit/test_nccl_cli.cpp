// `gcsim nccl` prints the table nccl-tests prints, for a pasted nvidia-smi matrix, with
// NCCL's choice of algorithm and protocol per size; bad requests exit 2.
#include <catch2/catch.hpp>

#include <cstdio>
#include <sstream>

#include "tests/unit/test_paths.hpp"

using gcsim::test::gcsim_binary;
using gcsim::test::src;

namespace {

struct Out {
  int rc;
  std::string text;
};

Out run(const std::string& args) {
  const std::string cmd = gcsim_binary() + " " + args + " 2>/dev/null";
  Out o{0, ""};
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) o.text.append(buf, n);
  const int st = pclose(p);
  o.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return o;
}

}  // namespace

TEST_CASE("gcsim nccl all_reduce on a DGX A100 matrix prints an nccl-tests table", "[nccl][cli]") {
  const Out o = run("nccl all_reduce --topo " + src("tests/data/nccl/topo/dgx-a100.txt") +
                    " --gpu-model A100-SXM4-80GB -b 8 -e 128M -f 2");
  REQUIRE(o.rc == 0);
  std::istringstream in(o.text);
  std::string line;
  int rows = 0, ranks = 0;
  double busbw_128m = 0;
  std::string proto_small, proto_big;
  while (std::getline(in, line)) {
    if (line.find("#  Rank") == 0) ++ranks;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    long long size = 0, count = 0;
    std::string type, redop, root, algo;
    double t, alg, bus, t2, alg2, bus2;
    std::string wrong, wrong2;
    f >> size >> count >> type >> redop >> root >> t >> alg >> bus >> wrong >> t2 >> alg2 >> bus2 >> wrong2 >> algo;
    REQUIRE(f);
    REQUIRE(count == size / 4);  // float
    REQUIRE(type == "float");
    REQUIRE(redop == "sum");
    // busbw = algbw x 2(n-1)/n for AllReduce on 8 ranks (nccl-tests PERFORMANCE.md).
    REQUIRE(bus == Approx(alg * 2 * 7 / 8).margin(0.02));
    if (size == 8) proto_small = algo;
    if (size == 128LL << 20) {
      busbw_128m = bus;
      proto_big = algo;
    }
    ++rows;
  }
  REQUIRE(ranks == 8);
  REQUIRE(rows == 25);  // 8 B .. 128 MiB by powers of two
  REQUIRE(proto_small.find("/LL") != std::string::npos);
  REQUIRE(proto_big.find("/Simple") != std::string::npos);
  // A100 NVSwitch: NCCL's ring plateau is about 230 GB/s busbw (nccl_model.md 3.1).
  REQUIRE(busbw_128m > 180);
  REQUIRE(busbw_128m < 260);
}

TEST_CASE("gcsim nccl rejects what it cannot model with exit status 2", "[nccl][cli]") {
  const std::string topo = " --topo " + src("tests/data/nccl/topo/dgx-a100.txt") + " --gpu-model A100-SXM4-80GB";
  REQUIRE(run("nccl all_reduse" + topo).rc == 2);
  REQUIRE(run("nccl all_reduce" + topo + " -b 8X").rc == 2);
  REQUIRE(run("nccl all_reduce" + topo + " --gpus-per-node 9").rc == 2);
  REQUIRE(run("nccl all_reduce" + topo + " --algo Rung").rc == 2);
}
