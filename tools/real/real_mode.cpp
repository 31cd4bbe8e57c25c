#include "tools/real/real_mode.hpp"

#include <fcntl.h>
#include <numa.h>
#include <poll.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>

#include "sim/cluster/import_hwloc.hpp"
#include "sim/cluster/import_nvidia_smi.hpp"  // parse_cpu_list
#include "sim/core/hostlist.hpp"
#include "sim/core/input_file.hpp"
#include "sim/placement/job_shape.hpp"
#include "sim/placement/node_state.hpp"
#include "sim/workload/sbatch_options.hpp"

namespace gcsim::real {

namespace {

const SourceLoc kCli{"<command line>", 0, 0};

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "localhost";
  std::string h(buf);
  if (auto dot = h.find('.'); dot != std::string::npos) h.resize(dot);  // Slurm's short name
  return h;
}

std::vector<int> intersect(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

std::string join(const std::vector<int>& v, const char* sep = ",") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

Machine make_machine(HwlocImport imp, const std::string& name, const std::string& source) {
  Machine m;
  const int gpus = static_cast<int>(imp.node.gpus.size());
  m.cluster = make_homogeneous_cluster(name, std::move(imp.node), 1, source);
  m.cluster.nodes[0].name = name;
  m.cluster.index();
  m.source = source;
  const NodeTemplate& t = m.tmpl();
  for (int c = 0; c < t.cpus(); ++c) m.allowed_pus.push_back(t.cpu_os_ids.empty() ? c : t.cpu_os_ids[c]);
  std::sort(m.allowed_pus.begin(), m.allowed_pus.end());
  for (int g = 0; g < gpus; ++g) m.allowed_gpus.push_back(g);
  return m;
}

int64_t parse_int(const std::map<std::string, std::string>& env, const std::string& key, bool required,
                  int64_t fallback) {
  auto it = env.find(key);
  if (it == env.end() || it->second.empty()) {
    if (required) throw InputError(kCli, key + " is not set: run 'gcsim real bind' under srun");
    return fallback;
  }
  const auto v = parse_integer(it->second);
  if (!v || *v < 0) throw InputError(kCli, key + "='" + it->second + "' is not a non-negative integer");
  return *v;
}

}  // namespace

std::vector<int> Machine::allowed_pus_of_core(int core) const {
  const NodeTemplate& t = tmpl();
  std::vector<int> out;
  for (int th = 0; th < t.threads_per_core; ++th) {
    const int abstract = core * t.threads_per_core + th;
    const int os = t.cpu_os_ids.empty() ? abstract : t.cpu_os_ids[abstract];
    if (std::binary_search(allowed_pus.begin(), allowed_pus.end(), os)) out.push_back(os);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> current_affinity() {
  std::vector<int> out;
  for (int n = CPU_SETSIZE;; n *= 2) {
    cpu_set_t* set = CPU_ALLOC(n);
    const size_t size = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(size, set);
    if (sched_getaffinity(0, size, set) == 0) {
      for (int i = 0; i < n; ++i)
        if (CPU_ISSET_S(i, size, set)) out.push_back(i);
      CPU_FREE(set);
      return out;
    }
    CPU_FREE(set);
    if (errno != EINVAL || n > (1 << 20)) return out;
  }
}

std::string format_id_ranges(const std::vector<int>& ids) {
  const std::string s = format_id_list(ids);
  return s.empty() ? "-" : s;
}

Machine load_machine(const std::string& topology_file, Diagnostics& warnings) {
  if (!topology_file.empty()) {
    HwlocImport imp = import_hwloc_xml_detailed(topology_file, warnings);
    const std::string name = imp.node.name;
    Machine m = make_machine(std::move(imp), name, topology_file);
    m.live = false;
    if (m.tmpl().gpus.empty()) m.notes.push_back("no GPUs in the topology: CPU-only placement");
    return m;
  }
  const std::string host = hostname();
  std::vector<int> allowed;
  HwlocImport imp = discover_this_machine(host, warnings, &allowed);
  Machine m = make_machine(std::move(imp), host, "hwloc discovery of " + host);
  m.live = true;
  const std::vector<int> all = m.allowed_pus;
  std::vector<int> aff = current_affinity();
  m.allowed_pus = intersect(intersect(m.allowed_pus, allowed), aff);
  if (m.allowed_pus.size() < all.size())
    m.notes.push_back("this process may use CPUs " + format_id_ranges(m.allowed_pus) + " of " +
                      format_id_ranges(all) + " (cpuset and affinity)");
  if (m.tmpl().gpus.empty()) {
    m.notes.push_back("no GPUs found: CPU-only placement");
  } else if (const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES")) {
    if (auto ids = parse_cpu_list(cvd)) {
      restrict_gpus(m, *ids);
      m.notes.push_back(std::string("CUDA_VISIBLE_DEVICES=") + cvd + ": only those GPUs are used");
    }
  }
  return m;
}

void restrict_pus(Machine& m, const std::vector<int>& pus) {
  std::vector<int> p = pus;
  std::sort(p.begin(), p.end());
  m.allowed_pus = intersect(m.allowed_pus, p);
}

void restrict_gpus(Machine& m, const std::vector<int>& gpus) {
  std::vector<int> g = gpus;
  std::sort(g.begin(), g.end());
  m.allowed_gpus = intersect(m.allowed_gpus, g);
}

std::optional<Job> job_from_options(const std::vector<std::string>& options, Diagnostics& diags) {
  std::string args;
  for (const auto& o : options) {
    if (!args.empty()) args += ' ';
    // Keep an option's value one word for the sbatch parser's shell split.
    if (o.find_first_of(" \t'\"") != std::string::npos) {
      args += '\'';
      for (char ch : o) args += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
      args += '\'';
    } else {
      args += o;
    }
  }
  Job j;
  j.name = "real";
  j.duration = SimTime::seconds(1);
  if (!parse_sbatch_options(args, kCli, j.req, diags)) return std::nullopt;
  return j;
}

Plan plan_job(const Machine& m, const Job& job, PlacementMode mode) {
  Plan p;
  p.mode = mode;
  std::string why;
  const auto shape = make_job_shape(job, m.cluster, &why);
  if (!shape) {
    p.reason = why;
    return p;
  }
  if (shape->nodes_min > 1) {
    p.reason = "the real mode places on this machine only; the request asks for " +
               std::to_string(shape->nodes_min) + " nodes";
    return p;
  }
  const NodeTemplate& t = m.tmpl();
  ClusterState state(m.cluster);
  // Take what this process may not use, so that the allocator never offers it.
  NodeAlloc taken;
  taken.node = 0;
  for (int c = 0; c < t.cores(); ++c)
    if (m.allowed_pus_of_core(c).empty()) taken.cores.push_back(c);
  for (int g = 0; g < static_cast<int>(t.gpus.size()); ++g)
    if (!std::binary_search(m.allowed_gpus.begin(), m.allowed_gpus.end(), g)) taken.gpus.push_back(g);
  if (!taken.cores.empty() || !taken.gpus.empty()) {
    Allocation a;
    a.nodes.push_back(taken);
    state.allocate(a);
  }
  if (static_cast<int>(taken.cores.size()) == t.cores()) {
    p.reason = "this process may use none of the machine's cores";
    return p;
  }
  PlacementAllocator alloc(mode);
  auto a = alloc.allocate(*shape, state, partition_node_order(m.cluster, shape->partition));
  if (!a) {
    const int gpus = static_cast<int>(shape->requested_gpus());
    const NodePlacement np = place_on_node(state, 0, node_request(*shape, t, shape->tasks, gpus), mode);
    p.reason = np.fits ? std::string("the request does not fit on this machine") : np.reason;
    if (p.reason.empty()) p.reason = "the request does not fit on this machine";
    p.reason += " (" + std::to_string(t.cores() - static_cast<int>(taken.cores.size())) + " usable cores, " +
                std::to_string(m.allowed_gpus.size()) + " usable GPUs, binding " + placement_mode_name(mode) + ")";
    return p;
  }
  p.fits = true;
  p.alloc = *a;
  const NodeAlloc& na = p.alloc.nodes.front();
  for (int k = 0; k < na.tasks; ++k) {
    TaskPlan tp;
    tp.task = k;
    if (k < static_cast<int>(na.bindings.size())) {
      tp.cores = na.bindings[k].cores;
      tp.gpus = na.bindings[k].gpus;
      tp.mem_numa = na.bindings[k].mem_numa;
    } else {
      tp.cores = na.cores;
      tp.gpus = na.gpus;
    }
    if (tp.cores.empty()) tp.cores = na.cores;
    if (tp.mem_numa < 0 && !tp.cores.empty()) tp.mem_numa = t.numa_of_core(tp.cores.front());
    for (int c : tp.cores)
      for (int os : m.allowed_pus_of_core(c)) tp.os_cpus.push_back(os);
    std::sort(tp.os_cpus.begin(), tp.os_cpus.end());
    p.tasks.push_back(std::move(tp));
  }
  p.env = srun_environment(m.cluster, p.alloc, false);
  return p;
}

std::string format_plan(const Machine& m, const Plan& p) {
  const NodeTemplate& t = m.tmpl();
  std::string out = "# " + m.source + ": " + std::to_string(t.total_sockets()) + " socket(s), " +
                    std::to_string(t.numa_domains()) + " NUMA domain(s), " + std::to_string(t.cores()) + " cores, " +
                    std::to_string(t.cpus()) + " CPUs, " + std::to_string(t.gpus.size()) + " GPU(s)\n";
  for (const auto& n : m.notes) out += "# " + n + "\n";
  out += "# binding " + placement_mode_name(p.mode) + ", " + std::to_string(p.tasks.size()) + " task(s)\n";
  out += "TASK  CPUS                  CORES                 GPUS      GPU_NUMA  MEM_NUMA\n";
  for (const auto& tp : p.tasks) {
    std::string gpus = "-", gpu_numa = "-";
    if (!tp.gpus.empty()) {
      gpus = join(tp.gpus);
      std::vector<int> d;
      for (int g : tp.gpus) d.push_back(t.gpus[g].numa);
      std::sort(d.begin(), d.end());
      d.erase(std::unique(d.begin(), d.end()), d.end());
      gpu_numa = join(d);
    }
    char buf[512];
    std::snprintf(buf, sizeof buf, "%-5d %-21s %-21s %-9s %-9s %d\n", tp.task, format_id_ranges(tp.os_cpus).c_str(),
                  format_id_ranges(tp.cores).c_str(), gpus.c_str(), gpu_numa.c_str(), tp.mem_numa);
    out += buf;
  }
  return out;
}

void exec_bound(const TaskPlan& t, const std::map<std::string, std::string>& env, const std::vector<std::string>& cmd,
                std::string& error) {
  if (cmd.empty()) {
    error = "no command to run";
    return;
  }
  if (!t.os_cpus.empty()) {
    const int top = t.os_cpus.back() + 1;
    cpu_set_t* set = CPU_ALLOC(top);
    const size_t size = CPU_ALLOC_SIZE(top);
    CPU_ZERO_S(size, set);
    for (int c : t.os_cpus) CPU_SET_S(c, size, set);
    const int rc = sched_setaffinity(0, size, set);
    CPU_FREE(set);
    if (rc != 0) {
      error = std::string("sched_setaffinity(") + format_id_ranges(t.os_cpus) + "): " + std::strerror(errno);
      return;
    }
  }
  // --mem-bind=local: pages on the NUMA node of the CPU that touches them, which the
  // affinity above keeps on the task's domain.
  if (numa_available() >= 0) numa_set_localalloc();
  for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
  std::vector<char*> argv;
  for (const auto& a : cmd) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  error = "cannot execute '" + cmd.front() + "': " + std::strerror(errno);
}

namespace {

struct Child {
  pid_t pid = -1;
  int task = 0;
  int out = -1, err = -1;     // read ends
  std::string out_buf, err_buf;
  int status = 0;
  bool done = false;
};

void emit(std::string& buf, int task, bool label, bool flush, FILE* to) {
  size_t start = 0;
  for (;;) {
    const size_t nl = buf.find('\n', start);
    if (nl == std::string::npos) break;
    if (label) std::fprintf(to, "%d: ", task);
    std::fwrite(buf.data() + start, 1, nl + 1 - start, to);
    start = nl + 1;
  }
  buf.erase(0, start);
  if (flush && !buf.empty()) {
    if (label) std::fprintf(to, "%d: ", task);
    std::fwrite(buf.data(), 1, buf.size(), to);
    std::fputc('\n', to);
    buf.clear();
  }
  std::fflush(to);
}

}  // namespace

int exec_tasks(const Machine& m, const Plan& p, const std::vector<std::string>& cmd, const ExecOptions& o) {
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<Child> kids;
  for (size_t k = 0; k < p.tasks.size(); ++k) {
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    std::map<std::string, std::string> env = p.env[k];
    env["SLURM_JOB_NODELIST"] = m.cluster.nodes[0].name;
    env["SLURM_NNODES"] = "1";
    env["SLURM_TASKS_PER_NODE"] = std::to_string(p.tasks.size());
    env["SLURM_STEP_TASKS_PER_NODE"] = std::to_string(p.tasks.size());
    if (!p.tasks[k].gpus.empty()) {
      env["ROCR_VISIBLE_DEVICES"] = env["CUDA_VISIBLE_DEVICES"];
      env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";  // indices as nvidia-smi and hwloc order them
    }
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
    if (pid == 0) {
      dup2(po[1], STDOUT_FILENO);
      dup2(pe[1], STDERR_FILENO);
      if (k > 0) {
        const int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, STDIN_FILENO);
      }
      std::string error;
      exec_bound(p.tasks[k], env, cmd, error);
      std::fprintf(stderr, "gcsim real exec: error: task %zu: %s\n", k, error.c_str());
      _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    Child c;
    c.pid = pid;
    c.task = static_cast<int>(k);
    c.out = po[0];
    c.err = pe[0];
    kids.push_back(std::move(c));
  }
  // Forward whole lines as they come, as srun does.
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<std::pair<size_t, bool>> who;  // child, is_stderr
    for (size_t i = 0; i < kids.size(); ++i) {
      if (kids[i].out >= 0) {
        fds.push_back({kids[i].out, POLLIN, 0});
        who.push_back({i, false});
      }
      if (kids[i].err >= 0) {
        fds.push_back({kids[i].err, POLLIN, 0});
        who.push_back({i, true});
      }
    }
    if (fds.empty()) break;
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (size_t f = 0; f < fds.size(); ++f) {
      if (!(fds[f].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Child& c = kids[who[f].first];
      const bool is_err = who[f].second;
      char buf[65536];
      const ssize_t n = read(fds[f].fd, buf, sizeof buf);
      std::string& acc = is_err ? c.err_buf : c.out_buf;
      if (n > 0) {
        acc.append(buf, static_cast<size_t>(n));
        emit(acc, c.task, o.label, false, is_err ? stderr : stdout);
      } else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        emit(acc, c.task, o.label, true, is_err ? stderr : stdout);
        close(fds[f].fd);
        (is_err ? c.err : c.out) = -1;
      }
    }
  }
  int rc = 0;
  for (auto& c : kids) {
    while (waitpid(c.pid, &c.status, 0) < 0 && errno == EINTR) {
    }
    int code = 0;
    if (WIFEXITED(c.status)) {
      code = WEXITSTATUS(c.status);
      if (code) std::fprintf(stderr, "gcsim real exec: error: task %d: Exited with exit code %d\n", c.task, code);
    } else if (WIFSIGNALED(c.status)) {
      code = 128 + WTERMSIG(c.status);
      std::fprintf(stderr, "gcsim real exec: error: task %d: %s\n", c.task, strsignal(WTERMSIG(c.status)));
    }
    rc = std::max(rc, code);
  }
  return rc;
}

int master_port(int64_t job_id) { return 10000 + static_cast<int>(job_id % 20000); }

std::optional<std::vector<int>> expand_tasks_per_node(const std::string& s) {
  std::vector<int> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    if (j == i || j - i > 7) return std::nullopt;
    const int n = std::stoi(s.substr(i, j - i));
    int rep = 1;
    if (j < s.size() && s[j] == '(') {
      if (j + 1 >= s.size() || s[j + 1] != 'x') return std::nullopt;
      size_t k = j + 2, e = k;
      while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
      if (e == k || e >= s.size() || s[e] != ')' || e - k > 7) return std::nullopt;
      rep = std::stoi(s.substr(k, e - k));
      j = e + 1;
    }
    for (int r = 0; r < rep; ++r) out.push_back(n);
    if (j < s.size()) {
      if (s[j] != ',' || j + 1 == s.size()) return std::nullopt;
      ++j;
    }
    i = j;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

BindDecision decide_bind(const Machine& m, const std::map<std::string, std::string>& env, PlacementMode mode) {
  BindDecision d;
  const int64_t procid = parse_int(env, "SLURM_PROCID", true, 0);
  const int64_t localid = parse_int(env, "SLURM_LOCALID", true, 0);
  const int64_t ntasks = parse_int(env, "SLURM_NTASKS", true, 1);
  const int64_t nodeid = parse_int(env, "SLURM_NODEID", false, 0);
  const int64_t cpus_per_task = std::max<int64_t>(1, parse_int(env, "SLURM_CPUS_PER_TASK", false, 1));
  const int64_t job_id = parse_int(env, "SLURM_JOB_ID", false, parse_int(env, "SLURM_JOBID", false, 0));
  if (procid >= ntasks)
    throw InputError(kCli, "SLURM_PROCID=" + std::to_string(procid) + " is not below SLURM_NTASKS=" + std::to_string(ntasks));

  // Tasks on this node: srun's per-step list, else the job's.
  int64_t local_tasks = 1;
  std::string tpn_key = env.count("SLURM_STEP_TASKS_PER_NODE") ? "SLURM_STEP_TASKS_PER_NODE" : "SLURM_TASKS_PER_NODE";
  if (auto it = env.find(tpn_key); it != env.end() && !it->second.empty()) {
    auto per = expand_tasks_per_node(it->second);
    if (!per) throw InputError(kCli, tpn_key + "='" + it->second + "' is not a Slurm task count list");
    if (nodeid >= static_cast<int64_t>(per->size()))
      throw InputError(kCli, "SLURM_NODEID=" + std::to_string(nodeid) + " is beyond " + tpn_key + "=" + it->second);
    local_tasks = (*per)[nodeid];
  } else {
    local_tasks = ntasks;  // one node
    d.notes.push_back("SLURM_TASKS_PER_NODE is not set: all tasks taken to be on this node");
  }
  if (localid >= local_tasks)
    throw InputError(kCli, "SLURM_LOCALID=" + std::to_string(localid) + " is not below the node's " +
                               std::to_string(local_tasks) + " tasks");

  // The GPUs Slurm gave: physical indices, and what CUDA_VISIBLE_DEVICES calls them.
  std::vector<int> physical;
  std::vector<std::string> visible;
  std::string gpu_key;
  for (const char* k : {"SLURM_STEP_GPUS", "SLURM_JOB_GPUS"})
    if (auto it = env.find(k); gpu_key.empty() && it != env.end() && !it->second.empty()) {
      auto ids = parse_cpu_list(it->second);
      if (!ids) throw InputError(kCli, std::string(k) + "='" + it->second + "' is not a list of GPU indices");
      physical = *ids;
      gpu_key = k;
    }
  if (auto it = env.find("CUDA_VISIBLE_DEVICES"); it != env.end() && !it->second.empty()) {
    const std::string& v = it->second;
    for (std::string_view x : split(v, ',')) visible.emplace_back(trim(x));
    if (gpu_key.empty()) {
      for (const auto& x : visible) {
        const auto g = parse_integer(x);
        if (!g || *g < 0 || *g > 63) throw InputError(kCli, "CUDA_VISIBLE_DEVICES='" + v + "' is not a list of GPU indices");
        physical.push_back(static_cast<int>(*g));
      }
      gpu_key = "CUDA_VISIBLE_DEVICES";
    }
  }
  if (visible.empty())
    for (int g : physical) visible.push_back(std::to_string(g));
  if (visible.size() != physical.size())
    throw InputError(kCli, gpu_key + " lists " + std::to_string(physical.size()) +
                               " GPUs but CUDA_VISIBLE_DEVICES " + std::to_string(visible.size()));
  const int ngpus_machine = static_cast<int>(m.tmpl().gpus.size());
  for (int g : physical)
    if (g >= ngpus_machine)
      throw InputError(kCli, gpu_key + " names GPU " + std::to_string(g) + " but this machine has " +
                                 std::to_string(ngpus_machine));

  Machine view = m;
  {
    std::vector<int> sorted = physical;
    std::sort(sorted.begin(), sorted.end());
    view.allowed_gpus = sorted;
  }
  // Whose cores does the cpuset hold: every local task's, or only this one's?
  int usable_cores = 0;
  for (int c = 0; c < view.tmpl().cores(); ++c) usable_cores += !view.allowed_pus_of_core(c).empty();
  const int tpc = view.tmpl().threads_per_core;
  const int64_t cores_per_task = (cpus_per_task + tpc - 1) / tpc;
  const bool whole_node_set = usable_cores >= local_tasks * cores_per_task && local_tasks > 1;
  const int64_t plan_tasks = whole_node_set ? local_tasks : 1;
  const int64_t me = whole_node_set ? localid : 0;
  if (!whole_node_set && local_tasks > 1)
    d.notes.push_back("the cpuset srun gave (" + format_id_ranges(view.allowed_pus) + ") is this task's own");

  std::vector<std::string> opts = {"--ntasks=" + std::to_string(plan_tasks),
                                   "--cpus-per-task=" + std::to_string(cpus_per_task)};
  const int g = static_cast<int>(physical.size());
  if (g > 0) {
    if (!whole_node_set) {
      // This task's share of the node's GPUs, in task order; placed with its cores.
      const int64_t per = std::max<int64_t>(1, g / local_tasks);
      std::vector<int> mine;
      if (g >= local_tasks) {
        for (int64_t j = 0; j < per; ++j) mine.push_back(physical[localid * per + j]);
      } else {
        mine.push_back(physical[localid * g / local_tasks]);
      }
      std::sort(mine.begin(), mine.end());
      view.allowed_gpus = mine;
      opts.push_back("--gpus=" + std::to_string(mine.size()));
    } else if (g % plan_tasks == 0) {
      opts.push_back("--gpus-per-task=" + std::to_string(g / plan_tasks));
    } else {
      opts.push_back("--gpus=" + std::to_string(g));
      opts.push_back("--gpu-bind=closest");
    }
  }
  Diagnostics diags;
  auto job = job_from_options(opts, diags);
  if (!job) diags.throw_if_errors();
  Plan p = plan_job(view, *job, mode);
  if (!p.fits && mode != PlacementMode::kSlurm) {
    d.notes.push_back(placement_mode_name(mode) + " does not fit (" + p.reason + "); using Slurm's order");
    p = plan_job(view, *job, PlacementMode::kSlurm);
  }
  if (!p.fits) throw InputError(kCli, "cannot place task " + std::to_string(procid) + ": " + p.reason);
  d.task = p.tasks.at(static_cast<size_t>(me));
  d.task.task = static_cast<int>(localid);

  std::string master = m.cluster.nodes[0].name;
  if (auto it = env.find("SLURM_JOB_NODELIST"); it != env.end() && !it->second.empty()) {
    std::string err;
    auto hosts = hostlist::expand(it->second, &err);
    if (!hosts || hosts->empty()) throw InputError(kCli, "SLURM_JOB_NODELIST='" + it->second + "': " + err);
    master = hosts->front();
  } else if (auto it2 = env.find("SLURM_NODELIST"); it2 != env.end() && !it2->second.empty()) {
    auto hosts = hostlist::expand(it2->second);
    if (hosts && !hosts->empty()) master = hosts->front();
  }
  auto& x = d.exports;
  x["RANK"] = std::to_string(procid);
  x["LOCAL_RANK"] = std::to_string(localid);
  x["WORLD_SIZE"] = std::to_string(ntasks);
  x["LOCAL_WORLD_SIZE"] = std::to_string(local_tasks);
  x["NODE_RANK"] = std::to_string(nodeid);
  x["GROUP_RANK"] = std::to_string(nodeid);
  x["MASTER_ADDR"] = master;
  x["MASTER_PORT"] = std::to_string(master_port(job_id));
  if (!d.task.gpus.empty()) {
    std::vector<std::string> vis;
    for (int gi : d.task.gpus) {
      const size_t pos = static_cast<size_t>(std::find(physical.begin(), physical.end(), gi) - physical.begin());
      vis.push_back(pos < visible.size() ? visible[pos] : std::to_string(gi));
    }
    std::string v;
    for (size_t i = 0; i < vis.size(); ++i) v += (i ? "," : "") + vis[i];
    x["CUDA_VISIBLE_DEVICES"] = v;
    x["ROCR_VISIBLE_DEVICES"] = v;
  }
  x["GCSIM_BIND_CPUS"] = format_id_ranges(d.task.os_cpus);
  x["GCSIM_BIND_MEM_NUMA"] = std::to_string(d.task.mem_numa);
  return d;
}

}  // namespace gcsim::real
