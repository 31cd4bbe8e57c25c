// Faults during a run: SIGINT/SIGTERM stop a long run with the results so far
// (manifest `completed: false`, exit 130/143); a run killed outright leaves the previous
// run directory as it was; --out never replaces a directory gcsim did not write.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tests/unit/test_paths.hpp"

extern char** environ;

namespace fs = std::filesystem;
using gcsim::test::run_shell;
using gcsim::test::slurp;

namespace {

// What this test process writes under the temp directory, removed when it exits.
struct TempFiles {
  fs::path dir = fs::temp_directory_path() / ("gcsim-int-" + std::to_string(::getpid()));
  fs::path trace = fs::temp_directory_path() / ("gcsim-interrupt-" + std::to_string(::getpid()) + ".csv");
  TempFiles() = default;
  TempFiles(const TempFiles&) = delete;
  TempFiles& operator=(const TempFiles&) = delete;
  ~TempFiles() {
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::remove(trace, ec);
  }
};

const TempFiles& temp_files() {
  static const TempFiles t;
  return t;
}

// A trace that keeps the 32-node pod busy for minutes: 40k generated jobs arriving 20x
// faster than the Philly fit (made once per test binary run).
const fs::path& long_trace() {
  static const fs::path p = [] {
    const fs::path t = temp_files().trace;
    const auto r = run_shell("cd '" + std::string(GCSIM_SOURCE_DIR) + "' && '" + gcsim::test::gcsim_binary() +
                             "' trace gen --fit traces/philly-d07-d21.csv --jobs 40000 --seed 3 --scale-arrivals 20 "
                             "--out '" + t.string() + "' 2>&1");
    REQUIRE(r.status == 0);
    return t;
  }();
  return p;
}

struct Child {
  pid_t pid = -1;
};

// gcsim COMMAND on the long trace, output to `log`; `extra` ends the command line.
Child spawn_gcsim(const std::string& command, const fs::path& out, const fs::path& log,
                  const std::vector<std::string>& extra = {}) {
  const std::string bin = gcsim::test::gcsim_binary();
  std::vector<std::string> args = {bin,          command,     "--no-progress",
                                   "--cluster",  std::string(GCSIM_SOURCE_DIR) + "/configs/dgx-a100-pod.yaml",
                                   "--trace",    long_trace().string(),
                                   "--policy",   "easy",
                                   "--out",      out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  Child c;
  REQUIRE(posix_spawn(&c.pid, bin.c_str(), &fa, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&fa);
  return c;
}

Child spawn_run(const fs::path& out, const fs::path& log) { return spawn_gcsim("run", out, log); }

// Waits until the run has started simulating (a manifest exists in its staging
// directory), then a bit.
void wait_until_simulating(const fs::path& out) {
  const fs::path parent = out.parent_path();
  const std::string prefix = "." + out.filename().string() + ".partial-";
  for (int i = 0; i < 600; ++i) {
    for (const auto& e : fs::directory_iterator(parent))
      if (e.path().filename().string().rfind(prefix, 0) == 0) try {
          for (const auto& f : fs::recursive_directory_iterator(e.path()))
            if (f.path().filename() == "manifest.json") {  // a run's, or a sweep point's
              std::this_thread::sleep_for(std::chrono::milliseconds(500));
              return;
            }
        } catch (const fs::filesystem_error&) {  // published while we looked
        }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  FAIL("the run never started simulating");
}

int wait_exit(pid_t pid) {
  int st = 0;
  REQUIRE(::waitpid(pid, &st, 0) == pid);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

fs::path fresh_dir(const std::string& name) {
  const fs::path d = temp_files().dir / name;
  fs::remove_all(d.parent_path() / name);
  fs::create_directories(d.parent_path());
  return d;
}

}  // namespace

TEST_CASE("SIGINT and SIGTERM stop a long run and keep what was simulated", "[interrupt][cli]") {
  for (const auto& [sig, want] : {std::pair{SIGINT, 130}, std::pair{SIGTERM, 143}}) {
    DYNAMIC_SECTION("signal " << sig) {
      const fs::path out = fresh_dir("sig" + std::to_string(sig));
      const fs::path log = out.string() + ".log";
      Child c = spawn_run(out, log);
      wait_until_simulating(out);
      const auto t0 = std::chrono::steady_clock::now();
      REQUIRE(::kill(c.pid, sig) == 0);
      const int rc = wait_exit(c.pid);
      const double stop_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      INFO(slurp(log.string()));
      CHECK(rc == want);
      // A generous bound for a loaded 2-core machine; the note quotes the measured figure.
      CHECK(stop_s < 10.0);
      WARN("stopped and wrote its outputs " << stop_s << " s after signal " << sig);
      const std::string manifest = slurp((out / "manifest.json").string());
      CHECK(manifest.find("\"completed\": false") != std::string::npos);
      const std::string sacct = slurp((out / "jobs.sacct").string());
      REQUIRE(lines(sacct) >= 2);         // header and at least one finished job
      CHECK(lines(sacct) < 40000 + 1);    // not the whole trace
      CHECK(fs::exists(out / "summary.json"));
      CHECK(slurp(log.string()).find("interrupted by") != std::string::npos);
      // Nothing staged is left beside it.
      for (const auto& e : fs::directory_iterator(out.parent_path()))
        CHECK(e.path().filename().string().find(".partial-") == std::string::npos);
    }
  }
}

TEST_CASE("a run killed outright leaves the previous run directory whole", "[interrupt][cli]") {
  const fs::path out = fresh_dir("killed");
  const std::string bin = "'" + gcsim::test::gcsim_binary() + "'";
  const std::string small = "cd '" + std::string(GCSIM_SOURCE_DIR) + "' && " + bin +
                            " run --no-progress --cluster configs/dgx-a100-pod.yaml --trace traces/philly-d07-d21.csv "
                            "--policy easy --out '" + out.string() + "' >/dev/null 2>&1";
  REQUIRE(run_shell(small).status == 0);
  const std::string before_manifest = slurp((out / "manifest.json").string());
  const std::string before_sacct = slurp((out / "jobs.sacct").string());
  REQUIRE(before_manifest.find("\"completed\": true") != std::string::npos);

  Child c = spawn_run(out, out.string() + ".log");
  wait_until_simulating(out);
  REQUIRE(::kill(c.pid, SIGKILL) == 0);
  CHECK(wait_exit(c.pid) == 128 + SIGKILL);
  CHECK(slurp((out / "manifest.json").string()) == before_manifest);
  CHECK(slurp((out / "jobs.sacct").string()) == before_sacct);

  // A later complete run replaces it as a whole: no file of the old run survives.
  { std::ofstream(out / "stale.txt") << "from an older run\n"; }
  REQUIRE(run_shell(small).status == 0);
  CHECK_FALSE(fs::exists(out / "stale.txt"));
  CHECK(slurp((out / "jobs.sacct").string()) == before_sacct);
  fs::remove_all(out.parent_path());
}

TEST_CASE("gcsim run: --out never replaces a directory gcsim did not write", "[interrupt][invalid][cli]") {
  const fs::path out = fresh_dir("notours");
  fs::create_directories(out);
  { std::ofstream(out / "thesis.tex") << "precious\n"; }
  const auto r = run_shell("cd '" + std::string(GCSIM_SOURCE_DIR) + "' && '" + gcsim::test::gcsim_binary() +
                           "' run --no-progress --cluster configs/dgx-a100-pod.yaml --trace traces/philly-d07-d21.csv "
                           "--out '" + out.string() + "' 2>&1");
  CHECK(r.status == 2);
  CHECK(r.output == out.string() + ": error: output directory exists and is not a gcsim output (no manifest.json); "
                                   "gcsim replaces only its own outputs: choose another --out\n");
  CHECK(slurp((out / "thesis.tex").string()) == "precious\n");
  CHECK_FALSE(fs::exists(out / "manifest.json"));
  fs::remove_all(out.parent_path());
}

// compare and sweep run their variants on worker threads; a signal stops them all, and
// the report covers what was simulated under manifests that say so.
TEST_CASE("SIGINT stops compare and sweep with every variant's results so far", "[interrupt][cli]") {
  struct Case {
    std::string command;
    std::vector<std::string> extra;
    std::vector<std::string> runs;  // run directories inside --out
  };
  const std::vector<Case> cases = {
      {"compare", {"--variant", "bound:binding=numa-bound", "--variant", "unbound:binding=unbound", "--threads", "2"},
       {"bound", "unbound"}},
      {"sweep", {"--grid", "binding=numa-bound,unbound", "--threads", "2"}, {"points/p0", "points/p1"}}};
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.command) {
      const fs::path out = fresh_dir("int-" + c.command);
      const fs::path log = out.string() + ".log";
      Child child = spawn_gcsim(c.command, out, log, c.extra);
      wait_until_simulating(out);
      const auto t0 = std::chrono::steady_clock::now();
      REQUIRE(::kill(child.pid, SIGINT) == 0);
      const int rc = wait_exit(child.pid);
      const double stop_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      INFO(slurp(log.string()));
      CHECK(rc == 130);
      CHECK(stop_s < 10.0);
      WARN(c.command << " stopped and wrote its outputs " << stop_s << " s after SIGINT");
      CHECK(slurp((out / "manifest.json").string()).find("\"completed\": false") != std::string::npos);
      for (const auto& r : c.runs) {
        CHECK(slurp((out / r / "manifest.json").string()).find("\"completed\": false") != std::string::npos);
        CHECK(lines(slurp((out / r / "jobs.sacct").string())) < 40000 + 1);
      }
      CHECK(slurp(log.string()).find("interrupted by") != std::string::npos);
      for (const auto& e : fs::directory_iterator(out.parent_path()))
        CHECK(e.path().filename().string().find(".partial-") == std::string::npos);
    }
  }
}
