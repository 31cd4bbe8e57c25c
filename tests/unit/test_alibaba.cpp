// Alibaba readers on the real fixtures in tests/data/traces/alibaba/: the v2023 (FGD)
// pod and node lists and the PAI v2020 machine spec. Expected numbers were computed
// from the same files independently (python3 csv module), not from these readers.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "sim/cluster/inventory_alibaba.hpp"
#include "sim/core/diagnostics.hpp"
#include "sim/workload/alibaba_reader.hpp"
#include "tests/unit/test_paths.hpp"

using namespace gcsim;
using gcsim::test::src;

namespace {

const std::string kDir = "tests/data/traces/alibaba/";

int64_t gpus_of(const Job& j) { return j.req.gres.empty() ? 0 : j.req.gres.front().count; }

bool has_message(const Diagnostics& d, Severity sev, const std::string& text) {
  for (const auto& x : d.all())
    if (x.severity == sev && x.message.find(text) != std::string::npos) return true;
  return false;
}

std::string first_error(const std::string& text) {
  Diagnostics d;
  try {
    (void)parse_alibaba_v2023_pods(text, "pods.csv", d);
  } catch (const InputError& e) {
    return e.diagnostics().all().empty() ? std::string() : e.diagnostics().all().front().str();
  }
  return "no error";
}

}  // namespace

TEST_CASE("Alibaba v2023 default pod list: counts and resource mix", "[alibaba]") {
  Diagnostics d;
  const Trace t = read_alibaba_v2023_pods(src(kDir + "gpu-v2023/openb_pod_list_default.csv"), d);
  CHECK(t.format == "alibaba-v2023");
  REQUIRE(t.jobs.size() == 8152);  // every pod has a deletion_time: none skipped
  CHECK_FALSE(t.unix_start.has_value());

  std::map<int64_t, int> by_gpus;
  std::map<std::string, int> by_qos;
  int fractional = 0, completed = 0, failed = 0, with_mem = 0;
  int64_t cpus = 0, mem = 0, gpus = 0, duration_s = 0;
  double gpu_share_1gpu = 0;
  for (const Job& j : t.jobs) {
    REQUIRE(j.req.ntasks == 1);
    REQUIRE(j.req.nodes_min == 1);
    REQUIRE(j.req.nodes_max == 1);
    ++by_gpus[gpus_of(j)];
    ++by_qos[j.req.qos];
    if (j.req.gpu_fraction < 1.0) ++fractional;
    if (gpus_of(j) == 1) gpu_share_1gpu += j.req.gpu_fraction;
    if (gpus_of(j) != 1) REQUIRE(j.req.gpu_fraction == 1.0);
    REQUIRE(j.req.gpu_types_allowed.empty());  // the default list has no gpu_spec
    completed += j.recorded_state == RecordedState::kCompleted;
    failed += j.recorded_state == RecordedState::kFailed;
    cpus += *j.req.cpus_per_task;
    if (j.req.mem_per_node_mb) {
      ++with_mem;
      mem += *j.req.mem_per_node_mb;
    }
    gpus += gpus_of(j);
    duration_s += j.duration.whole_seconds();
  }
  CHECK(by_gpus == std::map<int64_t, int>{{0, 1088}, {1, 6989}, {2, 16}, {4, 15}, {8, 44}});
  CHECK(by_qos == std::map<std::string, int>{{"LS", 4647}, {"BE", 3398}, {"Burstable", 100}, {"Guaranteed", 7}});
  CHECK(fractional == 3078);  // num_gpu 1 with gpu_milli < 1000: 38% of the pods share a GPU
  CHECK(gpu_share_1gpu == Approx(5642.8));  // sum of gpu_milli over num_gpu==1 pods / 1000
  CHECK(completed == 192);
  CHECK(failed == 1870);
  CHECK(cpus == 88697);          // sum of ceil(cpu_milli/1000)
  CHECK(with_mem == 8151);       // one pod asks for 0 MiB
  CHECK(mem == 303546211);
  CHECK(gpus == 7433);
  CHECK(duration_s == 210197755);  // deletion - scheduled, or - creation for the 897 pending pods

  // File order is creation order already, so job k is openb-pod-(k-1).
  const Job& p1 = t.jobs[1];
  CHECK(p1.id == JobId(2));
  CHECK(p1.name == "openb-pod-0001");
  CHECK(p1.source_line == 3);
  CHECK(p1.req.cpus_per_task == 6);
  CHECK(p1.req.mem_per_node_mb == 12288);
  REQUIRE(p1.req.gres.size() == 1);
  CHECK(p1.req.gres[0].name == "gpu");
  CHECK(p1.req.gres[0].type.empty());
  CHECK(p1.req.gres[0].count == 1);
  CHECK(p1.req.gpu_fraction == Approx(0.46));
  CHECK(p1.req.qos == "LS");
  CHECK(p1.submit == SimTime::seconds(427061));
  CHECK(p1.duration == SimTime::seconds(12902960 - 427061));

  // Never scheduled (Pending): duration from creation. cpu_milli 11908 -> 12 CPUs.
  const Job& pend = t.jobs[61];
  CHECK(pend.name == "openb-pod-0061");
  CHECK(pend.source_line == 63);
  CHECK(pend.recorded_state == RecordedState::kUnknown);
  CHECK(pend.req.cpus_per_task == 12);
  CHECK(pend.submit == SimTime::seconds(10001278));
  CHECK(pend.duration == SimTime::seconds(10001403 - 10001278));

  const Job& nomem = t.jobs[1523];
  CHECK(nomem.name == "openb-pod-1523");
  CHECK_FALSE(nomem.req.mem_per_node_mb.has_value());

  const Job& last = t.jobs.back();
  CHECK(last.name == "openb-pod-8151");
  CHECK(last.submit == SimTime::seconds(12901761));
  CHECK(last.duration == SimTime::seconds(12901792 - 12901762));
  CHECK(last.recorded_state == RecordedState::kFailed);

  // The adjustments are reported, and said in the assumptions.
  CHECK(has_message(d, Severity::kWarning, "897 pods were never scheduled"));
  CHECK(has_message(d, Severity::kWarning, "1 pods request 0 MiB of memory"));
  CHECK_FALSE(d.has_errors());
  bool said_fraction = false, said_cpu = false;
  for (const auto& a : t.assumptions) {
    said_fraction |= a.find("3078 pods ask for part of a GPU") != std::string::npos;
    said_cpu |= a.find("5603 pods ask for fractional CPUs") != std::string::npos;
  }
  CHECK(said_fraction);
  CHECK(said_cpu);
}

TEST_CASE("Alibaba v2023 gpuspec33 pod list: GPU type constraints", "[alibaba]") {
  Diagnostics d;
  const Trace t = read_alibaba_v2023_pods(src(kDir + "gpu-v2023/openb_pod_list_gpuspec33.csv"), d);
  REQUIRE(t.jobs.size() == 8152);
  int constrained = 0, single = 0;
  std::map<std::string, int> allowing;
  for (const Job& j : t.jobs) {
    if (j.req.gpu_types_allowed.empty()) continue;
    ++constrained;
    for (const auto& ty : j.req.gpu_types_allowed) ++allowing[ty];
    if (j.req.gpu_types_allowed.size() == 1) {
      ++single;
      REQUIRE(j.req.gres.size() == 1);
      CHECK(j.req.gres[0].type == j.req.gpu_types_allowed[0]);
    } else {
      CHECK(j.req.gres[0].type.empty());
    }
  }
  CHECK(constrained == 2388);
  CHECK(single == 2010);
  // Pods allowing each type; "V100M16|V100M32|V100M32" (22 pods) counts v100m32 once.
  CHECK(allowing == std::map<std::string, int>{{"t4", 1399},
                                               {"p100", 461},
                                               {"v100m32", 388},
                                               {"g2", 397},
                                               {"v100m16", 375},
                                               {"g3", 86},
                                               {"a10", 33}});
  const Job& p41 = t.jobs[41];
  CHECK(p41.name == "openb-pod-0041");
  CHECK(p41.req.gpu_types_allowed == std::vector<std::string>{"p100", "v100m16", "v100m32"});
}

TEST_CASE("Alibaba v2023 pod list: malformed input is reported with its position", "[alibaba]") {
  const std::string hdr =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
      "scheduled_time\n";
  CHECK(first_error("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,1,1,1000\n") ==
        "pods.csv:1:1: error: missing required column 'creation_time': this pod list has no times (the multigpu50 "
        "resampling is such a list), so it cannot be replayed");
  CHECK(first_error(hdr + "p,1000,64,1,0,,LS,Running,0,10,0\n") ==
        "pods.csv:2:13: error: a pod with num_gpu 1 needs gpu_milli in 1..1000 (its share of the GPU), found '0'");
  CHECK(first_error(hdr + "p,x,64,1,500,,LS,Running,0,10,0\n") ==
        "pods.csv:2:3: error: cpu_milli 'x' is not a non-negative number");
  CHECK(first_error(hdr + "p,1000,64,1,500,,LS,Running,20,10,20\n") ==
        "pods.csv:2:32: error: deletion_time is before scheduled_time");
  CHECK(first_error(hdr + "p,1000,64,1,500,,LS,Running,0,10,0\np,1000,64,0,0,,LS,Running,0,10,0\n") ==
        "pods.csv:3:1: error: duplicate pod name 'p'");
  CHECK(first_error(hdr + "p,1000,64,1,500,,LS\n") == "pods.csv:2:1: error: expected 11 fields, found 7");

  // A pod never deleted has no known run time: skipped with a warning.
  Diagnostics d;
  const Trace t = parse_alibaba_v2023_pods(
      hdr + "a,1500,64,2,1000,T4|nan,BE,Running,5,,5\nb,250,64,0,0,nan,BE,Succeeded,7,9,8\n", "pods.csv", d);
  REQUIRE(t.jobs.size() == 1);
  CHECK(t.jobs[0].name == "b");
  CHECK(t.jobs[0].req.cpus_per_task == 1);  // 250 milli-CPUs round up to one
  CHECK(t.jobs[0].duration == SimTime::seconds(1));
  CHECK(has_message(d, Severity::kWarning, "skipped 1 pods without a deletion_time"));
}

TEST_CASE("Alibaba v2023 GPU node list as a cluster", "[alibaba]") {
  Diagnostics d;
  const Cluster c = read_alibaba_v2023_nodes(src(kDir + "gpu-v2023/openb_node_list_gpu_node.csv"), d);
  CHECK_FALSE(d.has_errors());
  CHECK(has_message(d, Severity::kNote, "assumed 2 sockets per node"));
  REQUIRE(c.nodes.size() == 1213);
  CHECK(c.total_gpus() == 6212);
  CHECK(c.total_cpus() == 107018);
  CHECK(c.templates.size() == 15);  // distinct (cpu, memory, gpus, model) rows
  int64_t mem = 0;
  std::map<std::string, int> gpus_by_type, nodes_by_type;
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    const NodeTemplate& t = c.tmpl(static_cast<int>(i));
    mem += t.memory_mb;
    REQUIRE_FALSE(t.gpus.empty());
    ++nodes_by_type[t.gpus[0].gres_type];
    for (const auto& g : t.gpus) ++gpus_by_type[g.gres_type];
  }
  CHECK(mem == 503828480);
  CHECK(nodes_by_type ==
        std::map<std::string, int>{{"g2", 549}, {"t4", 404}, {"p100", 134}, {"v100m16", 55}, {"g3", 39},
                                   {"v100m32", 30}, {"a10", 2}});
  CHECK(gpus_by_type ==
        std::map<std::string, int>{{"g2", 4392}, {"t4", 842}, {"p100", 265}, {"v100m16", 195}, {"g3", 312},
                                   {"v100m32", 204}, {"a10", 2}});
  CHECK(c.gpu_types() == std::vector<std::string>{"a10", "g2", "g3", "p100", "t4", "v100m16", "v100m32"});
  REQUIRE(c.partitions.size() == 1);
  CHECK(c.partitions[0].nodes.size() == 1213);
  CHECK(c.default_partition() == 0);

  // openb-node-0000: 64 CPUs, 256 GiB, 2 x P100 -> 2 sockets of 32 cores, one GPU each.
  const int n0 = c.find_node("openb-node-0000");
  REQUIRE(n0 == 0);
  const NodeTemplate& p100 = c.tmpl(n0);
  CHECK(p100.name == "p100x2-64c-256g");
  CHECK(p100.total_sockets() == 2);
  CHECK(p100.cores_per_numa == 32);
  CHECK(p100.memory_mb == 262144);
  REQUIRE(p100.gpus.size() == 2);
  CHECK(p100.gpus[0].numa == 0);
  CHECK(p100.gpus[1].numa == 1);
  CHECK(p100.gpus[0].model == "P100");
  CHECK(p100.gpus[0].memory_bytes == 0);  // not stated by the model name
  CHECK(c.nodes[n0].features == std::vector<std::string>{"p100"});

  // The 8-CPU single-V100M16 nodes: 2 sockets of 4 cores, the GPU on socket 0, 16 GiB.
  bool seen = false;
  for (const auto& t : c.templates) {
    if (t.name != "v100m16x1-8c-32g") continue;
    seen = true;
    CHECK(t.cpus() == 8);
    CHECK(t.cores_per_numa == 4);
    REQUIRE(t.gpus.size() == 1);
    CHECK(t.gpus[0].numa == 0);
    CHECK(t.gpus[0].memory_bytes == int64_t{16} << 30);
  }
  CHECK(seen);
}

TEST_CASE("Alibaba v2023 full node list keeps the CPU-only nodes", "[alibaba]") {
  Diagnostics d;
  const Cluster c = read_alibaba_v2023_nodes(src(kDir + "gpu-v2023/openb_node_list_all_node.csv"), d);
  REQUIRE(c.nodes.size() == 1523);
  CHECK(c.total_gpus() == 6212);
  CHECK(c.total_cpus() == 125514);
  CHECK(c.templates.size() == 27);
  int cpu_only = 0;
  for (size_t i = 0; i < c.nodes.size(); ++i) cpu_only += c.tmpl(static_cast<int>(i)).gpus.empty();
  CHECK(cpu_only == 310);

  Diagnostics e;
  try {
    (void)parse_alibaba_v2023_nodes("sn,cpu_milli,memory_mib,gpu,model\nn1,8000,1024,2,nan\n", "nodes.csv", e);
    FAIL("accepted GPUs without a model");
  } catch (const InputError& err) {
    CHECK(err.diagnostics().all().front().str() == "nodes.csv:2:16: error: a node with 2 GPUs needs a GPU model");
  }
}

TEST_CASE("PAI v2020 machine spec as a cluster", "[alibaba]") {
  Diagnostics d;
  const Cluster c = read_pai_v2020_machines(src(kDir + "gpu-v2020/pai_machine_spec.csv"),
                                            src(kDir + "gpu-v2020/pai_machine_spec.header"), d);
  CHECK_FALSE(d.has_errors());
  REQUIRE(c.nodes.size() == 1897);
  CHECK(c.total_gpus() == 6742);
  CHECK(c.total_cores() == 156576);
  CHECK(c.templates.size() == 7);
  int64_t mem_gib = 0;
  int cpu_only = 0;
  std::map<std::string, int> gpus_by_type;
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    const NodeTemplate& t = c.tmpl(static_cast<int>(i));
    mem_gib += t.memory_mb / 1024;
    cpu_only += t.gpus.empty();
    for (const auto& g : t.gpus) ++gpus_by_type[g.gres_type];
  }
  CHECK(mem_gib == 948224);
  CHECK(cpu_only == 83);
  CHECK(gpus_by_type == std::map<std::string, int>{
                            {"misc", 2240}, {"p100", 1596}, {"v100m32", 1080}, {"t4", 994}, {"v100", 832}});
  const int last = c.find_node("a12e33726524543425a94398");
  REQUIRE(last == 1896);
  CHECK(c.tmpl(last).name == "v100m32x8-96c-384g");
  CHECK(c.tmpl(last).gpus[0].memory_bytes == int64_t{32} << 30);
  CHECK(c.tmpl(0).name == "cpu-96c-512g");

  // Only the machine spec table is held; the job and task tables are headers only.
  CHECK(read_pai_v2020_header(src(kDir + "gpu-v2020/pai_job_table.header")) ==
        std::vector<std::string>{"job_name", "inst_id", "user", "status", "start_time", "end_time"});
  CHECK(read_pai_v2020_header(src(kDir + "gpu-v2020/pai_task_table.header")).size() == 10);

  Diagnostics e;
  try {
    (void)parse_pai_v2020_machines("m1,CPU,96,512,4\n", {"machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu"},
                                   "spec.csv", e);
    FAIL("accepted a CPU machine with GPUs");
  } catch (const InputError& err) {
    CHECK(err.diagnostics().all().front().str() ==
          "spec.csv:1:4: error: machine has 4 GPUs but gpu_type 'CPU' names no GPU model");
  }
}
