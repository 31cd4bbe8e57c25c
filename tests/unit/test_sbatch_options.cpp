// sbatch option strings: shell quoting, every supported option in its long and
// short spelling, and the exact diagnostics for malformed input.
#include <catch2/catch.hpp>

#include "sim/workload/sbatch_options.hpp"

using gcsim::Diagnostics;
using gcsim::GresRequest;
using gcsim::JobRequest;
using gcsim::Severity;
using gcsim::SimTime;
using gcsim::SourceLoc;

namespace {

struct Parsed {
  bool ok = false;
  JobRequest req;
  Diagnostics diags;
};

Parsed parse(std::string_view args, int col = 0) {
  Parsed p;
  p.ok = gcsim::parse_sbatch_options(args, SourceLoc{"trace.csv", 3, col}, p.req, p.diags);
  return p;
}

/// Parses input that must be valid.
JobRequest ok(std::string_view args) {
  Parsed p = parse(args);
  INFO("args: " << args << "\n" << p.diags.format());
  REQUIRE(p.ok);
  REQUIRE(p.diags.all().empty());
  return p.req;
}

std::vector<std::string> errors_of(const Diagnostics& d) {
  std::vector<std::string> out;
  for (const auto& x : d.all())
    if (x.severity == Severity::kError) out.push_back(x.message);
  return out;
}

std::vector<std::string> notes_of(const Diagnostics& d) {
  std::vector<std::string> out;
  for (const auto& x : d.all())
    if (x.severity == Severity::kNote) out.push_back(x.message);
  return out;
}

/// Parses input that must give exactly one error, and returns it.
gcsim::Diagnostic one_error(std::string_view args, int col = 0) {
  Parsed p = parse(args, col);
  INFO("args: " << args << "\n" << p.diags.format());
  REQUIRE_FALSE(p.ok);
  REQUIRE(p.diags.error_count() == 1);
  for (const auto& x : p.diags.all())
    if (x.severity == Severity::kError) return x;
  FAIL("no error");
  return {};
}

std::string err(std::string_view args) { return one_error(args).message; }

GresRequest gres(std::string name, std::string type, int64_t count) {
  GresRequest g;
  g.name = std::move(name);
  g.type = std::move(type);
  g.count = count;
  return g;
}

}  // namespace

// ---------------------------------------------------------------------------
// shell_split

TEST_CASE("shell_split: words and quoting", "[sbatch]") {
  std::vector<std::string> w;
  std::string e;
  const auto split = [&](std::string_view s) {
    REQUIRE(gcsim::shell_split(s, w, &e));
    return w;
  };
  using V = std::vector<std::string>;
  CHECK(split("") == V{});
  CHECK(split("   \t ") == V{});
  CHECK(split("a b\tc\n d") == V{"a", "b", "c", "d"});
  CHECK(split("  -n 4  ") == V{"-n", "4"});
  CHECK(split("'a b' c") == V{"a b", "c"});
  CHECK(split("'a\\b'") == V{"a\\b"});             // no escapes in single quotes
  CHECK(split("'say \"hi\"'") == V{"say \"hi\""});
  CHECK(split("\"a b\"") == V{"a b"});
  CHECK(split("\"a\\\"b\"") == V{"a\"b"});          // \" in double quotes
  CHECK(split("\"a\\\\b\"") == V{"a\\b"});          // \\ in double quotes
  CHECK(split("\"\\$HOME \\`x\\`\"") == V{"$HOME `x`"});
  CHECK(split("\"a\\nb\"") == V{"a\\nb"});          // other backslashes stay
  CHECK(split("\"it's\"") == V{"it's"});
  CHECK(split("a\\ b") == V{"a b"});               // backslash outside quotes
  CHECK(split("a\\'b") == V{"a'b"});
  CHECK(split("a\\\nb") == V{"ab"});               // line continuation
  CHECK(split("--job-name='my job'") == V{"--job-name=my job"});
  CHECK(split("x'y'\"z\"w") == V{"xyzw"});          // adjacent parts join
  CHECK(split("'' \"\"") == V{"", ""});             // empty quoted words survive
  CHECK(split("a\\") == V{"a\\"});                  // trailing backslash is literal
  CHECK(split("$HOME") == V{"$HOME"});              // no expansion
}

TEST_CASE("shell_split: unterminated quotes", "[sbatch]") {
  std::vector<std::string> w{"stale"};
  std::string e;
  CHECK_FALSE(gcsim::shell_split("-J 'abc", w, &e));
  CHECK(e == "unterminated single quote");
  CHECK(w.empty());
  CHECK_FALSE(gcsim::shell_split("-J \"abc\\\"", w, &e));
  CHECK(e == "unterminated double quote");
  CHECK_FALSE(gcsim::shell_split("\"", w, nullptr));  // error pointer is optional
}

// ---------------------------------------------------------------------------
// Helpers

TEST_CASE("parse_slurm_mem_mb", "[sbatch]") {
  CHECK(gcsim::parse_slurm_mem_mb("100") == 100);
  CHECK(gcsim::parse_slurm_mem_mb("0") == 0);
  CHECK(gcsim::parse_slurm_mem_mb("512M") == 512);
  CHECK(gcsim::parse_slurm_mem_mb("512m") == 512);
  CHECK(gcsim::parse_slurm_mem_mb("4G") == 4096);
  CHECK(gcsim::parse_slurm_mem_mb("4g") == 4096);
  CHECK(gcsim::parse_slurm_mem_mb("2T") == 2 * 1024 * 1024);
  CHECK(gcsim::parse_slurm_mem_mb("1024K") == 1);
  CHECK(gcsim::parse_slurm_mem_mb("1025k") == 2);  // rounded up to whole MB
  CHECK(gcsim::parse_slurm_mem_mb("1K") == 1);
  CHECK(gcsim::parse_slurm_mem_mb("0K") == 0);
  for (const char* bad : {"", "G", "-1", "+1", "1.5G", "4GB", "4 G", "4X", "abc", "1G1",
                          "99999999999999999999", "9999999999999999T"}) {
    INFO("input: '" << bad << "'");
    CHECK_FALSE(gcsim::parse_slurm_mem_mb(bad).has_value());
  }
}

TEST_CASE("parse_gres_spec", "[sbatch]") {
  CHECK(gcsim::parse_gres_spec("gpu:a100:2", true) == gres("gpu", "a100", 2));
  CHECK(gcsim::parse_gres_spec("gpu:2", true) == gres("gpu", "", 2));
  CHECK(gcsim::parse_gres_spec("gpu", true) == gres("gpu", "", 1));
  CHECK(gcsim::parse_gres_spec("gpu:a100", true) == gres("gpu", "a100", 1));
  CHECK(gcsim::parse_gres_spec("gpu:0", true) == gres("gpu", "", 0));
  CHECK(gcsim::parse_gres_spec("mps:100", true) == gres("mps", "", 100));
  CHECK(gcsim::parse_gres_spec("gpu:tesla_v100-sxm2:4", true) == gres("gpu", "tesla_v100-sxm2", 4));
  CHECK(gcsim::parse_gres_spec("gres/gpu:2", true) == gres("gpu", "", 2));
  CHECK(gcsim::parse_gres_spec("2", false) == gres("gpu", "", 2));
  CHECK(gcsim::parse_gres_spec("a100:8", false) == gres("gpu", "a100", 8));
  CHECK(gcsim::parse_gres_spec("0", false) == gres("gpu", "", 0));  // callers reject 0
  for (const char* bad : {"", ":", "gpu:", ":2", "gpu::2", "gpu:a100:", "gpu:a100:x", "gpu:1:2",
                          "2", "gpu:a100:2:3", "gpu:-1", "gp u:1", "gpu:a100:99999999999"}) {
    INFO("input: '" << bad << "'");
    CHECK_FALSE(gcsim::parse_gres_spec(bad, true).has_value());
  }
  for (const char* bad : {"", "a100", "gpu:a100:2", ":2", "a100:", "x:-1", "1:2", "a b:1"}) {
    INFO("input: '" << bad << "'");
    CHECK_FALSE(gcsim::parse_gres_spec(bad, false).has_value());
  }
}

// ---------------------------------------------------------------------------
// The traces' own examples

TEST_CASE("sbatch trace examples", "[sbatch]") {
  {
    const JobRequest r = ok("--nodes=1 --ntasks=16 --cpus-per-task=1 --time=4");
    CHECK(r.nodes_min == 1);
    CHECK(r.nodes_max == 1);
    CHECK(r.ntasks == 16);
    CHECK(r.cpus_per_task == 1);
    CHECK(r.time_limit == SimTime::minutes(4));
    CHECK(r.gres.empty());
    CHECK_FALSE(r.gpus.has_value());
    CHECK_FALSE(r.mem_per_node_mb.has_value());
    CHECK_FALSE(r.exclusive);
  }
  {
    const JobRequest r = ok("--ntasks=1 --cpus-per-task=4 --gres=gpu:a100:2 --time=2");
    CHECK_FALSE(r.nodes_min.has_value());
    CHECK(r.ntasks == 1);
    CHECK(r.cpus_per_task == 4);
    REQUIRE(r.gres.size() == 1);
    CHECK(r.gres[0] == gres("gpu", "a100", 2));
    CHECK(r.time_limit == SimTime::minutes(2));
  }
}

TEST_CASE("empty option strings are fine", "[sbatch]") {
  const JobRequest r = ok("");
  CHECK_FALSE(r.ntasks.has_value());
  ok("   ");
}

// ---------------------------------------------------------------------------
// Every option, long and short, with '=' and with a separate value

TEST_CASE("sbatch option --nodes / -N", "[sbatch]") {
  for (const char* s : {"--nodes=4", "--nodes 4", "-N4", "-N 4"}) {
    INFO(s);
    const JobRequest r = ok(s);
    CHECK(r.nodes_min == 4);
    CHECK(r.nodes_max == 4);
  }
  const JobRequest r = ok("-N 2-8");
  CHECK(r.nodes_min == 2);
  CHECK(r.nodes_max == 8);
  CHECK(ok("--nodes=3-3").nodes_max == 3);
}

TEST_CASE("sbatch option --ntasks / -n and --ntasks-per-node and --cpus-per-task / -c", "[sbatch]") {
  for (const char* s : {"--ntasks=16", "--ntasks 16", "-n16", "-n 16"}) {
    INFO(s);
    CHECK(ok(s).ntasks == 16);
  }
  CHECK(ok("--ntasks-per-node=8").ntasks_per_node == 8);
  CHECK(ok("--ntasks-per-node 8").ntasks_per_node == 8);
  for (const char* s : {"--cpus-per-task=4", "--cpus-per-task 4", "-c4", "-c 4"}) {
    INFO(s);
    CHECK(ok(s).cpus_per_task == 4);
  }
  CHECK(ok("-n 4 -n 8").ntasks == 8);  // the last occurrence wins, as in sbatch
}

TEST_CASE("sbatch option --mem and --mem-per-cpu and --mem-per-gpu", "[sbatch]") {
  CHECK(ok("--mem=16G").mem_per_node_mb == 16384);
  CHECK(ok("--mem 2048").mem_per_node_mb == 2048);
  CHECK(ok("--mem=0").mem_per_node_mb == 0);  // all of the node's memory
  CHECK(ok("--mem-per-cpu=500M").mem_per_cpu_mb == 500);
  CHECK(ok("--mem-per-cpu 1g").mem_per_cpu_mb == 1024);
  CHECK(ok("--mem-per-gpu=80G").mem_per_gpu_mb == 80 * 1024);
  CHECK(ok("--mem-per-gpu 1T").mem_per_gpu_mb == 1024 * 1024);
}

TEST_CASE("sbatch option --gres", "[sbatch]") {
  {
    const JobRequest r = ok("--gres=gpu:a100:2,gpu:1");
    REQUIRE(r.gres.size() == 2);
    CHECK(r.gres[0] == gres("gpu", "a100", 2));
    CHECK(r.gres[1] == gres("gpu", "", 1));
  }
  {
    const JobRequest r = ok("--gres gpu");
    REQUIRE(r.gres.size() == 1);
    CHECK(r.gres[0] == gres("gpu", "", 1));
  }
  CHECK(ok("--gres=gpu:a100").gres.at(0) == gres("gpu", "a100", 1));
  CHECK(ok("--gres=gpu:0").gres.at(0) == gres("gpu", "", 0));
  CHECK(ok("--gres=gres/gpu:2").gres.at(0) == gres("gpu", "", 2));
  CHECK(ok("--gres=gpu:1 --gres=none").gres.empty());
  {
    const JobRequest r = ok("--gres=gpu:1 --gres=gpu:v100:4");  // replaced, not appended
    REQUIRE(r.gres.size() == 1);
    CHECK(r.gres[0] == gres("gpu", "v100", 4));
  }
}

TEST_CASE("sbatch option --gpus / -G and --gpus-per-node and --gpus-per-task and --cpus-per-gpu", "[sbatch]") {
  for (const char* s : {"--gpus=2", "--gpus 2", "-G2", "-G 2"}) {
    INFO(s);
    CHECK(ok(s).gpus == gres("gpu", "", 2));
  }
  CHECK(ok("-G a100:8").gpus == gres("gpu", "a100", 8));
  CHECK(ok("--gpus-per-node=h100:4").gpus_per_node == gres("gpu", "h100", 4));
  CHECK(ok("--gpus-per-node 4").gpus_per_node == gres("gpu", "", 4));
  CHECK(ok("--gpus-per-task=1").gpus_per_task == gres("gpu", "", 1));
  CHECK(ok("--gpus-per-task a100:1").gpus_per_task == gres("gpu", "a100", 1));
  CHECK(ok("--cpus-per-gpu=8").cpus_per_gpu == 8);
  CHECK(ok("--cpus-per-gpu 8").cpus_per_gpu == 8);
}

TEST_CASE("sbatch option --time / -t in every Slurm form", "[sbatch]") {
  const auto hms = [](int64_t h, int64_t m, int64_t s) {
    return SimTime::seconds(h * 3600 + m * 60 + s);
  };
  CHECK(ok("--time=1-12").time_limit == hms(36, 0, 0));
  CHECK(ok("--time=90").time_limit == SimTime::minutes(90));
  CHECK(ok("--time=1:30").time_limit == hms(0, 1, 30));
  CHECK(ok("--time=2:00:00").time_limit == hms(2, 0, 0));
  CHECK(ok("--time=1-0:0:1").time_limit == hms(24, 0, 1));
  CHECK(ok("--time=3-04:05").time_limit == hms(76, 5, 0));
  CHECK(ok("--time 10").time_limit == SimTime::minutes(10));
  CHECK(ok("-t10").time_limit == SimTime::minutes(10));
  CHECK(ok("-t 1-12").time_limit == hms(36, 0, 0));
  CHECK(ok("-t 0:30").time_limit == SimTime::seconds(30));
  CHECK(ok("--time=UNLIMITED").time_limit == SimTime::infinite());
  CHECK(ok("-t infinite").time_limit == SimTime::infinite());
  CHECK(ok("--time=0").time_limit == SimTime::infinite());
}

TEST_CASE("sbatch option --partition / -p and --qos / -q and --account / -A and --job-name / -J", "[sbatch]") {
  CHECK(ok("--partition=gpu").partition == "gpu");
  CHECK(ok("--partition gpu,debug").partition == "gpu,debug");
  CHECK(ok("-pgpu").partition == "gpu");
  CHECK(ok("-p gpu").partition == "gpu");
  CHECK(ok("--qos=high").qos == "high");
  CHECK(ok("--qos high").qos == "high");
  CHECK(ok("-qhigh").qos == "high");
  CHECK(ok("-q high").qos == "high");
  CHECK(ok("--account=proj1").account == "proj1");
  CHECK(ok("--account proj1").account == "proj1");
  CHECK(ok("-Aproj1").account == "proj1");
  CHECK(ok("-A proj1").account == "proj1");
  CHECK(ok("--job-name=train").job_name == "train");
  CHECK(ok("--job-name train").job_name == "train");
  CHECK(ok("-Jtrain").job_name == "train");
  CHECK(ok("-J train").job_name == "train");
  CHECK(ok("-J 'my job'").job_name == "my job");
  CHECK(ok("--job-name=\"a \\\"b\\\"\"").job_name == "a \"b\"");
  CHECK(ok("-J a=b").job_name == "a=b");
}

TEST_CASE("sbatch option --exclusive", "[sbatch]") {
  {
    const JobRequest r = ok("--exclusive");
    CHECK(r.exclusive);
    CHECK(r.exclusive_mode.empty());
  }
  for (const char* mode : {"user", "mcs", "topo"}) {
    const JobRequest r = ok(std::string("--exclusive=") + mode);
    CHECK(r.exclusive);
    CHECK(r.exclusive_mode == mode);
  }
  CHECK(ok("--exclusive=USER").exclusive_mode == "user");
  // An optional value must be attached; a following option is read normally.
  const JobRequest r = ok("--exclusive -n 2");
  CHECK(r.exclusive);
  CHECK(r.ntasks == 2);
}

TEST_CASE("sbatch option --gres-flags", "[sbatch]") {
  for (const char* f : {"enforce-binding", "disable-binding", "one-task-per-sharing",
                        "multiple-tasks-per-sharing"}) {
    CHECK(ok(std::string("--gres-flags=") + f).gres_flags == f);
    CHECK(ok(std::string("--gres-flags ") + f).gres_flags == f);
  }
  CHECK(ok("--gres-flags=enforce-binding,one-task-per-sharing").gres_flags ==
        "enforce-binding,one-task-per-sharing");
}

TEST_CASE("sbatch option --cpu-bind", "[sbatch]") {
  for (const char* b : {"none", "no", "rank", "rank_ldom", "sockets", "cores", "threads", "ldoms",
                        "boards", "verbose", "quiet", "verbose,cores", "quiet,sockets",
                        "map_cpu:0,1,2,3", "mask_cpu:0x3,0xC", "mask_cpu:f", "map_ldom:0,1",
                        "mask_ldom:0x1,0x2", "verbose,map_cpu:0,4", "map_cpu:0*4,1*4", "Cores"}) {
    INFO(b);
    CHECK(ok(std::string("--cpu-bind=") + b).cpu_bind == b);
  }
  CHECK(ok("--cpu-bind cores").cpu_bind == "cores");
}

TEST_CASE("sbatch option --gpu-bind", "[sbatch]") {
  for (const char* b : {"closest", "none", "verbose", "single:1", "per_task:2", "map_gpu:0,1",
                        "mask_gpu:0x1,0x2", "verbose,closest", "verbose,single:2",
                        "verbose,map_gpu:1,0"}) {
    INFO(b);
    CHECK(ok(std::string("--gpu-bind=") + b).gpu_bind == b);
  }
  CHECK(ok("--gpu-bind closest").gpu_bind == "closest");
}

TEST_CASE("sbatch option --distribution / -m", "[sbatch]") {
  for (const char* d : {"block", "cyclic", "arbitrary", "plane=4", "fcyclic", "block:cyclic",
                        "cyclic:block:fcyclic", "block:block,Pack", "cyclic,NoPack", "*:block",
                        "*:*:cyclic", "Block:Cyclic"}) {
    INFO(d);
    CHECK(ok(std::string("--distribution=") + d).distribution == d);
  }
  CHECK(ok("--distribution block").distribution == "block");
  CHECK(ok("-mcyclic").distribution == "cyclic");
  CHECK(ok("-m plane=2").distribution == "plane=2");
}

TEST_CASE("sbatch option --switches", "[sbatch]") {
  {
    const JobRequest r = ok("--switches=2");
    CHECK(r.switches == 2);
    CHECK_FALSE(r.switches_wait.has_value());
  }
  {
    const JobRequest r = ok("--switches 1@1:00:00");
    CHECK(r.switches == 1);
    CHECK(r.switches_wait == SimTime::seconds(3600));
  }
  CHECK(ok("--switches=4@10").switches_wait == SimTime::minutes(10));
}

TEST_CASE("sbatch option --dependency / -d", "[sbatch]") {
  for (const char* d : {"afterok:123", "afterok:123:456", "after:12+30", "afterany:1,afterok:2",
                        "afternotok:5?afterany:6", "aftercorr:7", "afterburstbuffer:8",
                        "singleton", "afterok:100_3", "singleton,afterok:9"}) {
    INFO(d);
    CHECK(ok(std::string("--dependency=") + d).dependency == d);
  }
  CHECK(ok("--dependency afterok:1").dependency == "afterok:1");
  CHECK(ok("-dafterok:1").dependency == "afterok:1");
  CHECK(ok("-d singleton").dependency == "singleton");
}

TEST_CASE("sbatch option --array / -a", "[sbatch]") {
  for (const char* a : {"1-10", "1,3,5", "0-15:4", "0-99%10", "1,3,5%2", "7", "1-3,10-20:2%4"}) {
    INFO(a);
    CHECK(ok(std::string("--array=") + a).array == a);
  }
  CHECK(ok("--array 1-4").array == "1-4");
  CHECK(ok("-a1-4").array == "1-4");
  CHECK(ok("-a 1-4").array == "1-4");
}

TEST_CASE("a full option string", "[sbatch]") {
  const JobRequest r =
      ok("-J 'llm train' -A proj -p gpu -q normal -N 2-4 -n 8 --ntasks-per-node=4 -c 8 "
         "--mem=0 --gpus-per-node=a100:4 --cpus-per-gpu=8 -t 2-00:00:00 --exclusive "
         "--gres-flags=enforce-binding --cpu-bind=cores --gpu-bind=closest -m block:cyclic "
         "--switches=1@30 -d afterok:42 -a 0-3%1");
  CHECK(r.job_name == "llm train");
  CHECK(r.account == "proj");
  CHECK(r.partition == "gpu");
  CHECK(r.qos == "normal");
  CHECK(r.nodes_min == 2);
  CHECK(r.nodes_max == 4);
  CHECK(r.ntasks == 8);
  CHECK(r.ntasks_per_node == 4);
  CHECK(r.cpus_per_task == 8);
  CHECK(r.mem_per_node_mb == 0);
  CHECK(r.gpus_per_node == gres("gpu", "a100", 4));
  CHECK(r.cpus_per_gpu == 8);
  CHECK(r.time_limit == SimTime::seconds(2 * 86400));
  CHECK(r.exclusive);
  CHECK(r.gres_flags == "enforce-binding");
  CHECK(r.cpu_bind == "cores");
  CHECK(r.gpu_bind == "closest");
  CHECK(r.distribution == "block:cyclic");
  CHECK(r.switches == 1);
  CHECK(r.switches_wait == SimTime::minutes(30));
  CHECK(r.dependency == "afterok:42");
  CHECK(r.array == "0-3%1");
}

// ---------------------------------------------------------------------------
// Diagnostics: exact text, one error per bad option, columns

TEST_CASE("unknown options", "[sbatch][errors]") {
  CHECK(err("--foo") == "unknown sbatch option '--foo'");
  CHECK(err("--foo=bar") == "unknown sbatch option '--foo'");
  CHECK(err("-x 4") == "unknown sbatch option '-x'");
  // The separate value of an unknown option is skipped, so it adds no second error...
  CHECK(err("--output out.log") == "unknown sbatch option '--output'");
  {
    const Parsed p = parse("--foo bar -n 2");
    CHECK(p.diags.error_count() == 1);
    CHECK(p.req.ntasks == 2);
  }
  // ...but a following option is never swallowed.
  {
    const Parsed p = parse("--requeue -n 2");
    CHECK(p.diags.error_count() == 1);
    CHECK(p.req.ntasks == 2);
  }
  // An attached value means the next word is not the unknown option's.
  CHECK(parse("--foo=1 bar").diags.error_count() == 2);
  CHECK(parse("-x1 bar").diags.error_count() == 2);
  // Only whole long names count (no getopt-style abbreviations).
  CHECK(err("--ntask=4") == "unknown sbatch option '--ntask'");
  CHECK(err("--part=gpu") == "unknown sbatch option '--part'");
}

TEST_CASE("did-you-mean notes", "[sbatch][errors]") {
  const auto note = [](std::string_view args) {
    const Parsed p = parse(args);
    const auto n = notes_of(p.diags);
    return n.empty() ? std::string() : n.front();
  };
  CHECK(note("--ntask=4") == "did you mean '--ntasks'?");
  CHECK(note("--ntaks=4") == "did you mean '--ntasks'?");
  CHECK(note("--cpus_per_task=2") == "did you mean '--cpus-per-task'?");
  CHECK(note("--Nodes=2") == "did you mean '--nodes'?");
  CHECK(note("--tiem=5") == "did you mean '--time'?");
  CHECK(note("--gpus-per-nod=1") == "did you mean '--gpus-per-node'?");
  CHECK(note("--partion=gpu") == "did you mean '--partition'?");
  CHECK(note("--foo") == "");
  CHECK(note("--completely-different") == "");
  // A long name written with one dash reads as a short option plus a value.
  CHECK(err("-ntasks=4") ==
        "invalid value 'tasks=4' for '-n': expected a positive integer");
  CHECK(note("-ntasks=4") == "did you mean '--ntasks'?");
  // The note sits at the same place as its error.
  const Parsed p = parse("-n 1 --ntask=4", 7);
  REQUIRE(p.diags.all().size() == 2);
  CHECK(p.diags.all()[1].severity == Severity::kNote);
  CHECK(p.diags.all()[1].loc.col == 12);
  CHECK(p.diags.all()[0].loc.col == 12);
}

TEST_CASE("missing values", "[sbatch][errors]") {
  CHECK(err("--time") == "option '--time' needs a value");
  CHECK(err("--time=") == "option '--time' needs a value");
  CHECK(err("-n 2 -t") == "option '-t' needs a value");
  CHECK(err("-J ''") == "option '-J' needs a value");
  CHECK(err("--partition=") == "option '--partition' needs a value");
}

TEST_CASE("invalid values: exact messages", "[sbatch][errors]") {
  CHECK(err("--ntasks=abc") == "invalid value 'abc' for '--ntasks': expected a positive integer");
  CHECK(err("--ntasks=0") == "invalid value '0' for '--ntasks': expected a positive integer");
  CHECK(err("-n -1") == "invalid value '-1' for '-n': expected a positive integer");
  CHECK(err("-n4x") == "invalid value '4x' for '-n': expected a positive integer");
  CHECK(err("--ntasks=99999999999") ==
        "invalid value '99999999999' for '--ntasks': expected a positive integer");
  CHECK(err("--ntasks-per-node=0") ==
        "invalid value '0' for '--ntasks-per-node': expected a positive integer");
  CHECK(err("-c 0") == "invalid value '0' for '-c': expected a positive integer");
  CHECK(err("--cpus-per-gpu=x") ==
        "invalid value 'x' for '--cpus-per-gpu': expected a positive integer");
  CHECK(err("--nodes=0") ==
        "invalid value '0' for '--nodes': expected a positive node count N or a range N-M");
  CHECK(err("-N 2-") ==
        "invalid value '2-' for '-N': expected a positive node count N or a range N-M");
  CHECK(err("-N 4-2") ==
        "invalid value '4-2' for '-N': the minimum node count exceeds the maximum");
  CHECK(err("--mem=4GB") ==
        "invalid value '4GB' for '--mem': expected a size with an optional K, M, G or T suffix");
  CHECK(err("--mem-per-cpu=-1") ==
        "invalid value '-1' for '--mem-per-cpu': expected a size with an optional K, M, G or T "
        "suffix");
  CHECK(err("--mem-per-gpu=1.5G") ==
        "invalid value '1.5G' for '--mem-per-gpu': expected a size with an optional K, M, G or T "
        "suffix");
  CHECK(err("--gres=gpu:a100:") ==
        "invalid value 'gpu:a100:' for '--gres': expected a comma list of name[:type][:count]");
  CHECK(err("--gres=gpu:1,") ==
        "invalid value 'gpu:1,' for '--gres': expected a comma list of name[:type][:count]");
  CHECK(err("--gpus=0") ==
        "invalid value '0' for '--gpus': expected [type:]count with a positive count");
  CHECK(err("-G a100") ==
        "invalid value 'a100' for '-G': expected [type:]count with a positive count");
  CHECK(err("--gpus-per-node=a100:0") ==
        "invalid value 'a100:0' for '--gpus-per-node': expected [type:]count with a positive "
        "count");
  CHECK(err("--gpus-per-task=x") ==
        "invalid value 'x' for '--gpus-per-task': expected [type:]count with a positive count");
  CHECK(err("--time=1:2:3:4") ==
        "invalid value '1:2:3:4' for '--time': expected minutes, minutes:seconds, "
        "hours:minutes:seconds, days-hours, days-hours:minutes, days-hours:minutes:seconds or "
        "UNLIMITED");
  CHECK(err("-t -5") ==
        "invalid value '-5' for '-t': expected minutes, minutes:seconds, hours:minutes:seconds, "
        "days-hours, days-hours:minutes, days-hours:minutes:seconds or UNLIMITED");
  CHECK(err("--exclusive=node") ==
        "invalid value 'node' for '--exclusive': expected user, mcs or topo");
  CHECK(err("--exclusive=") == "invalid value '' for '--exclusive': expected user, mcs or topo");
  CHECK(err("--gres-flags=enforce") ==
        "invalid value 'enforce' for '--gres-flags': expected enforce-binding, disable-binding, "
        "one-task-per-sharing or multiple-tasks-per-sharing");
  CHECK(err("--cpu-bind=core") ==
        "invalid value 'core' for '--cpu-bind': expected none, rank, map_cpu:<list>, "
        "mask_cpu:<list>, rank_ldom, map_ldom:<list>, mask_ldom:<list>, sockets, cores, threads, "
        "ldoms, boards, verbose or quiet");
  CHECK(err("--gpu-bind=single:0") ==
        "invalid value 'single:0' for '--gpu-bind': expected closest, none, single:N, "
        "per_task:N, map_gpu:<list> or mask_gpu:<list>, optionally with verbose");
  CHECK(err("-m plane") ==
        "invalid value 'plane' for '-m': expected block, cyclic, arbitrary, plane=N or fcyclic, "
        "optionally followed by :block|:cyclic|:fcyclic levels and ,Pack or ,NoPack");
  CHECK(err("--switches=1@x") ==
        "invalid value '1@x' for '--switches': expected a switch count N or N@max-time");
  CHECK(err("--dependency=afterfoo:1") ==
        "invalid value 'afterfoo:1' for '--dependency': expected type:jobid[:jobid...] with type "
        "after, afterany, afterok, afternotok, aftercorr or afterburstbuffer, or singleton, "
        "separated by ',' or '?'");
  CHECK(err("-d afterok:1,afterok:2?afterany:3") ==
        "invalid value 'afterok:1,afterok:2?afterany:3' for '-d': ',' (all of) and '?' (any of) "
        "cannot be mixed");
  CHECK(err("--array=1-") ==
        "invalid value '1-' for '--array': expected indexes such as 1-10, 1,3,5 or 0-15:4, "
        "optionally followed by %N");
  CHECK(err("-a 10-1") == "invalid value '10-1' for '-a': the range start exceeds its end");
}

TEST_CASE("invalid values: other malformed forms are rejected", "[sbatch][errors]") {
  for (const char* s :
       {"--gres=", "--gres=:2", "--gres=gpu:a100:2:1", "--gpus=a100:2:1", "--gpus=-1",
        "--cpu-bind=map_cpu:", "--cpu-bind=map_cpu:x", "--cpu-bind=mask_cpu:0xZ",
        "--cpu-bind=verbose,", "--cpu-bind=cores,bogus", "--gpu-bind=per_task:x",
        "--gpu-bind=map_gpu:", "--gpu-bind=closer", "--distribution=block:plane=2",
        "--distribution=arbitrary:block", "--distribution=block:block:block:block",
        "--distribution=block,Packed", "--distribution=plane=0", "--distribution=",
        "--switches=0", "--switches=@5", "--switches=x", "--dependency=afterok",
        "--dependency=afterok:", "--dependency=afterok:x", "--dependency=afterok:1+5",
        "--dependency=afterok:1,,afterok:2", "--dependency=after:1+x", "--array=1-10:0",
        "--array=5:2", "--array=1,,2", "--array=%4", "--array=1-4%0", "--array=1-4%",
        "--array=a", "--gres-flags=", "--gres-flags=enforce-binding,", "--mem=M",
        "--nodes=1-2-3", "--nodes=x-2"}) {
    INFO(s);
    const Parsed p = parse(s);
    CHECK_FALSE(p.ok);
    CHECK(p.diags.error_count() == 1);
  }
}

TEST_CASE("getopt semantics: a required value is the next word whatever it is", "[sbatch]") {
  // `--ntasks --nodes=2` gives --ntasks the value "--nodes=2", as getopt_long does.
  CHECK(err("--ntasks --nodes=2") ==
        "invalid value '--nodes=2' for '--ntasks': expected a positive integer");
  CHECK(ok("-J -n").job_name == "-n");
  // `-n=4`: the value of a short option is everything after the letter.
  CHECK(err("-n=4") == "invalid value '=4' for '-n': expected a positive integer");
}

TEST_CASE("positional words and --", "[sbatch][errors]") {
  CHECK(err("job.sh") == "unexpected argument 'job.sh': sbatch options start with '-'");
  CHECK(err("-n 2 4") == "unexpected argument '4': sbatch options start with '-'");
  CHECK(err("-") == "unexpected argument '-': sbatch options start with '-'");
  CHECK(err("--exclusive user") == "unexpected argument 'user': sbatch options start with '-'");
  // After `--` everything is an argument, even option-looking words.
  const Parsed p = parse("-n 2 -- -N 1");
  CHECK(errors_of(p.diags) ==
        std::vector<std::string>{"unexpected argument '-N': sbatch options start with '-'",
                                 "unexpected argument '1': sbatch options start with '-'"});
  CHECK(p.req.ntasks == 2);
  CHECK_FALSE(p.req.nodes_min.has_value());
}

TEST_CASE("errors are collected, one per bad option, with columns", "[sbatch][errors]") {
  // offsets:       0         1         2         3         4
  //                0123456789012345678901234567890123456789012345
  const std::string args = "-N 2 --ntasks=abc --foo -t 1-2-3 --mem=4 -c";
  JobRequest req;
  Diagnostics d;
  CHECK_FALSE(gcsim::parse_sbatch_options(args, SourceLoc{"t.csv", 7, 20}, req, d));
  const auto e = errors_of(d);
  REQUIRE(e.size() == 4);
  CHECK(e[0] == "invalid value 'abc' for '--ntasks': expected a positive integer");
  CHECK(e[1] == "unknown sbatch option '--foo'");
  CHECK(e[2].rfind("invalid value '1-2-3' for '-t': ", 0) == 0);
  CHECK(e[3] == "option '-c' needs a value");
  std::vector<int> cols;
  for (const auto& x : d.all())
    if (x.severity == Severity::kError) cols.push_back(x.loc.col);
  CHECK(cols == std::vector<int>{20 + 5, 20 + 18, 20 + 24, 20 + 41});
  for (const auto& x : d.all()) {
    CHECK(x.loc.file == "t.csv");
    CHECK(x.loc.line == 7);
  }
  // The good options were still applied.
  CHECK(req.nodes_min == 2);
  CHECK(req.mem_per_node_mb == 4);
  CHECK_FALSE(req.ntasks.has_value());
  CHECK(d.all()[0].str() == "t.csv:7:25: error: invalid value 'abc' for '--ntasks': expected a "
                            "positive integer");
}

TEST_CASE("columns stay 0 when the location has none", "[sbatch][errors]") {
  const auto e = one_error("-n 2 --foo", 0);
  CHECK(e.loc.col == 0);
  CHECK(e.loc.line == 3);
  CHECK(one_error("-n 2 --foo", 1).loc.col == 6);
  // Offsets count bytes of the raw string, quotes included.
  CHECK(one_error("-J 'a b' --foo", 1).loc.col == 10);
}

TEST_CASE("unterminated quotes in an option string", "[sbatch][errors]") {
  const auto e = one_error("-n 2 -J 'abc", 1);
  CHECK(e.message == "unterminated single quote in sbatch options");
  CHECK(e.loc.col == 9);
  CHECK(err("-J \"abc") == "unterminated double quote in sbatch options");
}

TEST_CASE("a failed value leaves the field untouched", "[sbatch][errors]") {
  JobRequest req;
  Diagnostics d;
  CHECK(gcsim::parse_sbatch_options("-n 4", SourceLoc{}, req, d));
  CHECK_FALSE(gcsim::parse_sbatch_options("-n x --gres=gpu:", SourceLoc{}, req, d));
  CHECK(req.ntasks == 4);
  CHECK(req.gres.empty());
  CHECK(d.error_count() == 2);
}
