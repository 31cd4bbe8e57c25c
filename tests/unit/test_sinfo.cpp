#include <catch2/catch.hpp>

#include "sim/cluster/cluster_yaml.hpp"
#include "sim/cluster/sinfo.hpp"
#include "sim/core/input_file.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;

namespace {
std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  for (auto l : split_lines(s)) out.emplace_back(l);
  return out;
}
}  // namespace

TEST_CASE("sinfo: DGX A100 pod", "[sinfo]") {
  const Cluster c = load_cluster_yaml(test::src("configs/dgx-a100-pod.yaml"));
  const auto lines = lines_of(format_sinfo(c));
  REQUIRE(lines.size() == 33);
  CHECK(lines[0] == "NODELIST PARTITION CPUS MEMORY  GRES");
  CHECK(lines[1] == "dgx001   gpu*      256  2097152 gpu:a100_80gb:8(S:0-1)");
  CHECK(lines[2] == "dgx002   gpu*      256  2097152 gpu:a100_80gb:8(S:0-1)");
  CHECK(lines[32] == "dgx032   gpu*      256  2097152 gpu:a100_80gb:8(S:0-1)");
}

TEST_CASE("sinfo: one row per node and partition, (null) GRES, socket ranges", "[sinfo]") {
  const Cluster c = load_cluster_yaml(test::src("configs/mixed.yaml"));
  const auto lines = lines_of(format_sinfo(c));
  REQUIRE(lines.size() == 1 + 32);
  CHECK(lines[0] == "NODELIST PARTITION CPUS MEMORY  GRES");
  CHECK(lines[1] == "v100-01  gpu       80   393216  gpu:v100:4(S:0-1)");
  CHECK(lines[9] == "a100-01  gpu       256  1048576 gpu:a100:4(S:0-1)");
  CHECK(lines[17] == "cpu-001  cpu*      128  524288  (null)");
}

TEST_CASE("sinfo: widths, several partitions, several GPU types", "[sinfo]") {
  const std::string yaml = R"(schema_version: 1
name: t
node_templates:
  odd:
    sockets: 4
    cores_per_numa: 2
    memory: 4GiB
    gpus:
      - {type: big, memory: 1GiB, numa: 3, count: 2}
      - {type: small, memory: 1GiB, numa: 0}
      - {type: big, memory: 1GiB, numa: 1}
      - {type: small, memory: 1GiB, numa: 2}
  bare:
    sockets: 1
    cores_per_numa: 1
    memory: 1GiB
nodes:
  - {names: "a1", template: odd}
  - {names: "longer-node-name", template: bare}
  - {names: "lonely", template: bare}
partitions:
  - {name: first, nodes: "a1,longer-node-name"}
  - {name: second-partition, nodes: "a1", default: true}
)";
  const Cluster c = parse_cluster_yaml(yaml, "inline.yaml");
  CHECK(format_sinfo(c) ==
        "NODELIST         PARTITION         CPUS MEMORY GRES\n"
        "a1               first             8    4096   gpu:big:3(S:1,3),gpu:small:2(S:0,2)\n"
        "a1               second-partition* 8    4096   gpu:big:3(S:1,3),gpu:small:2(S:0,2)\n"
        "longer-node-name first             1    1024   (null)\n");
}
