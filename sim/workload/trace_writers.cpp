#include "sim/workload/trace_writers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "sim/workload/job_request.hpp"
#include "sim/workload/slurm_time.hpp"

namespace gcsim {

namespace {

std::string gres_text(const GresRequest& g, bool with_name) {
  std::string s = with_name ? g.name + ":" : "";
  if (!g.type.empty()) s += g.type + ":";
  return s + std::to_string(g.count);
}

// A value as a POSIX shell word: bare when safe, else single-quoted.
std::string shell_word(const std::string& v) {
  const bool safe = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("-_.:,/@%+=").find(c) != std::string_view::npos;
  });
  if (safe) return v;
  std::string q = "'";
  for (char c : v) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Seconds as the CSV reader reads them back exactly: integers when whole, else
// microseconds (SimTime's resolution).
std::string seconds_text(SimTime t) {
  const int64_t us = t.count_us();
  if (us % SimTime::kPerSecond == 0) return std::to_string(us / SimTime::kPerSecond);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%lld.%06lld", static_cast<long long>(us / SimTime::kPerSecond),
                static_cast<long long>(us % SimTime::kPerSecond));
  return buf;
}

// RFC 4180: quote a field holding a separator, a quote or a line break.
std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"\n\r") == std::string::npos) return v;
  std::string q = "\"";
  for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// Numbers 1..n in order of first appearance; "" gets -1 (SWF's unknown).
class Numbering {
 public:
  int64_t of(const std::string& name) {
    if (name.empty()) return -1;
    auto [it, fresh] = ids_.emplace(name, static_cast<int64_t>(names_.size()) + 1);
    if (fresh) names_.push_back(name);
    return it->second;
  }
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::map<std::string, int64_t> ids_;
  std::vector<std::string> names_;
};

// One line per kind of loss, with a count: "12 jobs: fractional GPU request ...".
class LossTally {
 public:
  void add(const std::string& what) { ++counts_[what]; }
  void flush(std::vector<std::string>& out) const {
    for (const auto& [what, n] : counts_) out.push_back(std::to_string(n) + (n == 1 ? " job: " : " jobs: ") + what);
  }

 private:
  std::map<std::string, int64_t> counts_;
};

int64_t swf_status(RecordedState s) {
  switch (s) {
    case RecordedState::kCompleted: return 1;
    case RecordedState::kFailed:
    case RecordedState::kTimeout: return 0;
    case RecordedState::kCancelled: return 5;
    case RecordedState::kUnknown: break;
  }
  return -1;
}

}  // namespace

const char* recorded_state_name(RecordedState s) {
  switch (s) {
    case RecordedState::kCompleted: return "COMPLETED";
    case RecordedState::kFailed: return "FAILED";
    case RecordedState::kCancelled: return "CANCELLED";
    case RecordedState::kTimeout: return "TIMEOUT";
    case RecordedState::kUnknown: break;
  }
  return "";
}

std::string format_sbatch_options(const JobRequest& r, std::vector<std::string>* lost) {
  std::vector<std::string> o;
  auto opt = [&](const char* name, const std::string& v) { o.push_back(std::string("--") + name + "=" + shell_word(v)); };
  if (r.nodes_min) {
    std::string n = std::to_string(*r.nodes_min);
    if (r.nodes_max && *r.nodes_max != *r.nodes_min) n += "-" + std::to_string(*r.nodes_max);
    opt("nodes", n);
  }
  if (r.ntasks) opt("ntasks", std::to_string(*r.ntasks));
  if (r.ntasks_per_node) opt("ntasks-per-node", std::to_string(*r.ntasks_per_node));
  if (r.cpus_per_task) opt("cpus-per-task", std::to_string(*r.cpus_per_task));
  if (r.mem_per_node_mb) opt("mem", std::to_string(*r.mem_per_node_mb) + "M");
  if (r.mem_per_cpu_mb) opt("mem-per-cpu", std::to_string(*r.mem_per_cpu_mb) + "M");
  if (r.mem_per_gpu_mb) opt("mem-per-gpu", std::to_string(*r.mem_per_gpu_mb) + "M");
  if (!r.gres.empty()) {
    std::string g;
    for (const auto& x : r.gres) g += (g.empty() ? "" : ",") + gres_text(x, true);
    opt("gres", g);
  }
  if (r.gpus) opt("gpus", gres_text(*r.gpus, false));
  if (r.gpus_per_node) opt("gpus-per-node", gres_text(*r.gpus_per_node, false));
  if (r.gpus_per_task) opt("gpus-per-task", gres_text(*r.gpus_per_task, false));
  if (r.cpus_per_gpu) opt("cpus-per-gpu", std::to_string(*r.cpus_per_gpu));
  if (r.time_limit) opt("time", r.time_limit->is_infinite() ? "UNLIMITED" : slurm_time::format_timelimit(*r.time_limit));
  if (!r.partition.empty()) opt("partition", r.partition);
  if (!r.qos.empty()) opt("qos", r.qos);
  if (!r.account.empty()) opt("account", r.account);
  if (!r.job_name.empty()) opt("job-name", r.job_name);
  if (r.exclusive) o.push_back(r.exclusive_mode.empty() ? "--exclusive" : "--exclusive=" + shell_word(r.exclusive_mode));
  if (!r.gres_flags.empty()) opt("gres-flags", r.gres_flags);
  if (!r.cpu_bind.empty()) opt("cpu-bind", r.cpu_bind);
  if (!r.gpu_bind.empty()) opt("gpu-bind", r.gpu_bind);
  if (!r.distribution.empty()) opt("distribution", r.distribution);
  if (r.switches) {
    std::string s = std::to_string(*r.switches);
    if (r.switches_wait) s += "@" + slurm_time::format_timelimit(*r.switches_wait);
    opt("switches", s);
  }
  if (!r.dependency.empty()) opt("dependency", r.dependency);
  if (!r.array.empty()) opt("array", r.array);
  if (lost) {
    if (r.gpu_fraction < 1.0) lost->push_back("fractional GPU request (sbatch has none): asks for one whole GPU");
    if (r.gpu_types_allowed.size() > 1)
      lost->push_back("several allowed GPU types (sbatch names one type): asks for any type");
  }
  std::string s;
  for (const auto& x : o) s += (s.empty() ? "" : " ") + x;
  return s;
}

std::string format_sbatch_trace(const Trace& t, const std::vector<std::string>& header, std::vector<std::string>& lost) {
  const bool starts = std::any_of(t.jobs.begin(), t.jobs.end(), [](const Job& j) { return j.recorded_start.has_value(); });
  const bool states = std::any_of(t.jobs.begin(), t.jobs.end(),
                                  [](const Job& j) { return j.recorded_state != RecordedState::kUnknown; });
  const bool profiles = std::any_of(t.jobs.begin(), t.jobs.end(), [](const Job& j) { return !j.profile.empty(); });
  std::string out;
  for (const auto& h : header) out += "# " + h + "\n";
  // The one comment the reader interprets: the wall-clock time of t=0 (as in SWF).
  if (t.unix_start) out += "# UnixStartTime: " + std::to_string(*t.unix_start) + "\n";
  out += "name,submit,duration,args,user,account,partition";
  if (starts) out += ",start";
  if (states) out += ",state";
  if (profiles) out += ",profile";
  out += "\n";
  LossTally tally;
  std::map<std::string, int> seen;  // names must be unique in the CSV
  for (const Job& j : t.jobs) {
    std::vector<std::string> why;
    JobRequest r = j.req;
    r.array.clear();  // array tasks are already one row each
    std::string name = j.name.empty() ? "job" + std::to_string(j.id.value) : j.name;
    if (j.array_task >= 0) name += "_" + std::to_string(j.array_task);
    if (const int n = seen[name]++; n > 0) {
      name += "." + std::to_string(n);
      why.push_back("duplicate job name: suffixed .N");
    }
    if (j.attempts > 1) why.push_back("earlier attempts (retries) are not written");
    if (j.array_task >= 0) why.push_back("job-array task written as its own job (an array's %N throttle is lost)");
    out += csv_field(name) + "," + seconds_text(j.submit) + "," + seconds_text(j.duration) + "," +
           csv_field(format_sbatch_options(r, &why)) + "," + csv_field(j.user) + "," + csv_field(j.account) + "," +
           csv_field(j.partition);
    if (starts) out += "," + (j.recorded_start ? seconds_text(*j.recorded_start) : std::string());
    if (states) out += std::string(",") + recorded_state_name(j.recorded_state);
    if (profiles) out += "," + csv_field(j.profile);
    out += "\n";
    for (const auto& w : why) tally.add(w);
  }
  tally.flush(lost);
  return out;
}

std::string format_swf(const Trace& t, const std::vector<std::string>& header, std::vector<std::string>& lost) {
  Numbering users, groups, parts;
  LossTally tally;
  int64_t max_procs = t.max_procs.value_or(0);
  std::string body;
  int64_t n = 0;
  for (const Job& j : t.jobs) {
    ++n;
    const int64_t nodes = job_min_nodes(j);
    const int64_t cpus = job_cpus(j);
    const int64_t gpus = job_gpus(j);
    if (!t.max_procs) max_procs = std::max(max_procs, cpus);
    const double wait = j.recorded_start ? (*j.recorded_start - j.submit).to_seconds() : -1;
    const double limit = j.req.time_limit && !j.req.time_limit->is_infinite() ? j.req.time_limit->to_seconds() : -1;
    const int64_t mem_kb = j.req.mem_per_cpu_mb ? *j.req.mem_per_cpu_mb * 1024 : -1;
    if (j.req.mem_per_node_mb || j.req.mem_per_gpu_mb) tally.add("memory per node/GPU (SWF has memory per processor only)");
    if (j.req.gpu_fraction < 1.0) tally.add("fractional GPU request: written as one GPU");
    if (!j.req.dependency.empty()) tally.add("dependency (SWF's preceding-job field is not used)");
    char buf[320];
    // Whole seconds: SWF times are integers in practice; fractions would be legal
    // but no reader expects them in fields 2-4.
    std::snprintf(buf, sizeof buf, "%lld %lld %lld %lld %lld -1 -1 %lld %lld %lld %lld %lld %lld -1 -1 %lld -1 -1",
                  static_cast<long long>(n), static_cast<long long>(std::llround(j.submit.to_seconds())),
                  static_cast<long long>(wait < 0 ? -1 : std::llround(wait)),
                  static_cast<long long>(std::llround(j.duration.to_seconds())), static_cast<long long>(cpus),
                  static_cast<long long>(cpus), static_cast<long long>(limit < 0 ? -1 : std::llround(limit)),
                  static_cast<long long>(mem_kb), static_cast<long long>(swf_status(j.recorded_state)),
                  static_cast<long long>(users.of(j.user)), static_cast<long long>(groups.of(j.account)),
                  static_cast<long long>(parts.of(j.partition)));
    body += buf;
    // Alea's extension: node list (unknown here), queue, PBS-style resource string.
    // The resource string only when the request fixes nodes or asks for GPUs: a bare
    // processor count (an HPC job) must stay free to spread over nodes.
    body += " {} " + (j.partition.empty() ? std::string("-") : j.partition);
    if (j.req.nodes_min || gpus > 0) {
      body += " " + std::to_string(nodes) + ":ppn=" + std::to_string((cpus + nodes - 1) / nodes);
      if (gpus > 0) body += ":gpus=" + std::to_string((gpus + nodes - 1) / nodes);
      if (j.req.exclusive) body += "#excl";
    }
    body += "\n";
    if (gpus > 0 && gpus % nodes != 0) tally.add("GPUs uneven over nodes: rounded up per node");
  }
  std::string out = "; Version: 2.2\n";
  if (!t.computer.empty()) out += "; Computer: " + t.computer + "\n";
  out += "; Conversion: gcsim trace convert from " + t.format + "\n";
  for (const auto& h : header) out += "; Note: " + h + "\n";
  if (t.unix_start) out += "; UnixStartTime: " + std::to_string(*t.unix_start) + "\n";
  out += "; MaxJobs: " + std::to_string(n) + "\n; MaxRecords: " + std::to_string(n) + "\n";
  if (t.max_nodes) out += "; MaxNodes: " + std::to_string(*t.max_nodes) + "\n";
  if (max_procs > 0) out += "; MaxProcs: " + std::to_string(max_procs) + "\n";
  out += "; Note: fields 12/13/16 number users/accounts/partitions in order of first appearance; "
         "extra columns (Alea): {nodes} queue [<nodes>:ppn=<cpus per node>[:gpus=<gpus per node>][#excl]]\n";
  for (size_t k = 0; k < users.names().size(); ++k)
    out += "; Note: user " + std::to_string(k + 1) + " = " + users.names()[k] + "\n";
  for (size_t k = 0; k < groups.names().size(); ++k)
    out += "; Note: group " + std::to_string(k + 1) + " = " + groups.names()[k] + "\n";
  if (!parts.names().empty()) {
    out += "; MaxPartitions: " + std::to_string(parts.names().size()) + "\n";
    for (size_t k = 0; k < parts.names().size(); ++k)
      out += "; Partition: " + std::to_string(k + 1) + " " + parts.names()[k] + "\n";
  }
  tally.flush(lost);
  return out + body;
}

}  // namespace gcsim
