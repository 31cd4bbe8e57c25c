#include "sim/io/run_outputs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "sim/core/diagnostics.hpp"
#include "sim/core/hostlist.hpp"
#include "sim/io/json_writer.hpp"
#include "sim/workload/slurm_time.hpp"

namespace gcsim {

const std::vector<std::string>& sacct_columns() {
  static const std::vector<std::string> cols = {
      "JobID", "JobName", "Partition", "Account", "User",   "Submit",  "Eligible", "Start",
      "End",   "Elapsed", "Timelimit", "State",   "NNodes", "NCPUS",   "NodeList", "ReqTRES",
      "AllocTRES", "Flags", "CPU_IDs", "GRES_IDX"};
  return cols;
}

namespace {

std::string tres(int64_t cpus, int64_t mem_mb, int64_t nodes, const std::vector<std::pair<std::string, int64_t>>& gpus,
                 int64_t gpu_total) {
  // Alphabetical, as sacct prints it: billing, cpu, gres/..., mem, node.
  std::string s = "billing=" + std::to_string(cpus) + ",cpu=" + std::to_string(cpus);
  if (gpu_total > 0) {
    for (const auto& [type, n] : gpus)
      if (!type.empty()) s += ",gres/gpu:" + type + "=" + std::to_string(n);
    s += ",gres/gpu=" + std::to_string(gpu_total);
  }
  if (mem_mb > 0) s += ",mem=" + std::to_string(mem_mb) + "M";
  return s + ",node=" + std::to_string(nodes);
}

const char* state_name(const Job& j, const JobOutcome& o) {
  if (o.timed_out) return "TIMEOUT";
  switch (j.recorded_state) {
    case RecordedState::kFailed: return "FAILED";
    case RecordedState::kCancelled: return "CANCELLED";
    default: return "COMPLETED";
  }
}

}  // namespace

std::string format_sacct(const Cluster& cluster, const Trace& trace, const std::vector<JobOutcome>& out) {
  std::ostringstream os;
  write_sacct(os, cluster, trace, out);
  return std::move(os).str();
}

void write_sacct(std::ostream& os, const Cluster& cluster, const Trace& trace, const std::vector<JobOutcome>& out) {
  const int64_t base = trace.unix_start.value_or(0);
  auto ts = [&](SimTime t) { return slurm_time::format_iso(base + t.whole_seconds()); };
  std::vector<size_t> order;
  for (size_t j = 0; j < out.size(); ++j)
    if (out[j].status == JobStatus::kDone) order.push_back(j);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return trace.jobs[a].id < trace.jobs[b].id; });

  std::string s;  // the header, then one row at a time
  const auto& cols = sacct_columns();
  for (size_t c = 0; c < cols.size(); ++c) s += (c ? "|" : "") + cols[c];
  s += '\n';
  os << s;
  // Per-row buffers, reused: a row of a thousand-node job is tens of kilobytes.
  std::vector<std::string> hosts;
  std::string cpu_ids, gres_idx;
  std::vector<std::pair<std::string, int64_t>> gpu_types, req_gpu;
  std::vector<int> gpu_ids;
  PackedAllocation scratch;
  for (size_t j : order) {
    const Job& job = trace.jobs[j];
    const JobOutcome& o = out[j];
    const JobShape& sh = o.shape;
    cpu_ids.clear();
    gres_idx.clear();
    gpu_types.clear();
    int64_t ncpus = 0, mem = 0, ngpus = 0;
    size_t nnodes = 0;
    o.final_packed(scratch).for_each_node([&](const PackedAllocation::NodeView& v) {
      const auto& t = cluster.tmpl(v.node);
      const std::string& host = cluster.nodes[v.node].name;
      if (hosts.size() <= nnodes) hosts.resize(nnodes + 1);
      hosts[nnodes] = host;
      ncpus += static_cast<int64_t>(v.cores) * t.threads_per_core;
      mem += v.mem_mb;
      if (nnodes++) cpu_ids += ';';
      cpu_ids += host;
      cpu_ids += ':';
      append_id_runs(cpu_ids, v.core_runs, v.runs, t.threads_per_core);
      if (v.gpus > 0) {
        gpu_ids.clear();
        for (int g = 0; g < v.gpus; ++g) gpu_ids.push_back(v.gpu(g));
        ngpus += v.gpus;
        if (!gres_idx.empty()) gres_idx += ';';
        gres_idx += host;
        gres_idx += ':';
        append_id_list(gres_idx, gpu_ids);
      }
      for (int g = 0; g < v.gpus; ++g) {
        const std::string& type = t.gpus[v.gpu(g)].gres_type;
        auto it = std::find_if(gpu_types.begin(), gpu_types.end(), [&](const auto& p) { return p.first == type; });
        if (it == gpu_types.end())
          gpu_types.emplace_back(type, 1);
        else
          ++it->second;
      }
    });
    hosts.resize(nnodes);
    std::sort(gpu_types.begin(), gpu_types.end());
    int64_t req_mem = 0;
    if (sh.mem_per_node_mb > 0) req_mem = sh.mem_per_node_mb * sh.nodes_min;
    else if (sh.mem_per_cpu_mb > 0) req_mem = sh.mem_per_cpu_mb * sh.requested_cpus();
    else if (sh.mem_per_gpu_mb > 0) req_mem = sh.mem_per_gpu_mb * sh.requested_gpus();
    req_gpu.clear();
    if (!sh.gpu_type.empty()) req_gpu.emplace_back(sh.gpu_type, sh.requested_gpus());
    const std::string req = tres(sh.requested_cpus(), req_mem, sh.nodes_min, req_gpu, sh.requested_gpus());
    const std::string alloc = tres(ncpus, mem, static_cast<int64_t>(nnodes), gpu_types, ngpus);
    const std::string& partition = cluster.partitions[sh.partition].name;
    const int64_t elapsed = o.end.whole_seconds() - o.start.whole_seconds();
    s.clear();
    s += std::to_string(job.id.value);
    if (job.array_task >= 0) s += "_" + std::to_string(job.array_task);
    for (const std::string* f : {&job.name, &partition, &job.account, &job.user}) {
      s += '|';
      s += *f;
    }
    for (SimTime t : {job.submit, o.eligible, o.start, o.end}) {
      s += '|';
      s += ts(t);
    }
    s += '|';
    s += slurm_time::format_elapsed(SimTime::seconds(elapsed));
    s += '|';
    s += slurm_time::format_timelimit(sh.time_limit);
    s += '|';
    s += state_name(job, o);
    s += '|';
    s += std::to_string(nnodes);
    s += '|';
    s += std::to_string(ncpus);
    s += '|';
    s += hostlist::compress(hosts);
    s += '|';
    s += req;
    s += '|';
    s += alloc;
    s += '|';
    s += o.started_by == StartedBy::kBackfill ? "SchedBackfill" : "SchedMain";
    s += '|';
    s += cpu_ids;
    s += '|';
    s += gres_idx;
    s += '\n';
    os << s;
  }
}

std::string format_summary_json(const Summary& s) {
  JsonWriter w;
  w.begin_object();
  w.key("jobs").value(s.jobs);
  w.key("finished").value(s.finished);
  w.key("timed_out").value(s.timed_out);
  w.key("rejected").value(s.rejected);
  w.key("unfinished").value(s.unfinished);
  w.key("backfilled").value(s.backfilled);
  w.key("makespan_s").value(s.makespan_s, 3);
  w.key("wait_s").begin_object();
  w.key("mean").value(s.wait_s.mean, 3);
  w.key("median").value(s.wait_s.median, 3);
  w.key("p95").value(s.wait_s.p95, 3);
  w.key("max").value(s.wait_s.max, 3);
  w.end_object();
  w.key("bounded_slowdown").begin_object();
  w.key("bound_s").value(int64_t{10});
  w.key("mean").value(s.bounded_slowdown_mean, 6);
  w.end_object();
  w.key("cpu_utilization").value(s.cpu_utilization, 6);
  w.key("gpu_utilization").value(s.gpu_utilization, 6);
  w.key("total_cpus").value(s.total_cpus);
  w.key("total_gpus").value(s.total_gpus);
  w.end_object();
  return w.str();
}

std::string gcsim_version() { return GCSIM_VERSION; }
std::string gcsim_git_sha() { return GCSIM_GIT_SHA; }

std::string format_manifest_json(const ManifestInfo& m) {
  JsonWriter w;
  w.begin_object();
  w.key("tool").value("gcsim");
  w.key("version").value(gcsim_version());
  w.key("git_sha").value(gcsim_git_sha());
  w.key("completed").value(m.completed);
  w.key("argv").begin_array();
  for (const auto& a : m.argv) w.value(a);
  w.end_array();
  w.key("inputs").begin_array();
  for (const auto& in : m.inputs) {
    w.begin_object();
    w.key("role").value(in.role);
    w.key("path").value(in.path);
    w.key("sha256").value(in.sha256);
    w.end_object();
  }
  w.end_array();
  w.key("seed").value(m.seed);
  w.key("policy").begin_object();
  w.key("name").value(m.policy);
  w.key("parameters").begin_object();
  for (const auto& [k, v] : m.policy_params) w.key(k).value(v);
  w.end_object();
  w.end_object();
  w.key("allocator").value(m.allocator);
  char fp[32];
  std::snprintf(fp, sizeof fp, "%016llx", static_cast<unsigned long long>(m.result.fingerprint));
  w.key("event_fingerprint").value(fp);
  w.key("events").value(m.result.events);
  w.key("scheduler_passes").value(m.result.passes);
  w.key("simulated_end_s").value(m.result.end_time.to_seconds(), 6);
  w.key("wall_seconds").value(m.wall_seconds, 3);
  w.key("peak_rss_kib").value(m.peak_rss_kib);
  w.key("assumptions").begin_array();
  for (const auto& a : m.assumptions) w.value(a);
  w.end_array();
  w.end_object();
  return w.str();
}

void ensure_directory(const std::string& dir) {
  std::string cur;
  for (size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      if (!cur.empty() && ::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST)
        throw std::runtime_error("cannot create directory '" + cur + "': " + std::strerror(errno));
    }
    if (i < dir.size()) cur += dir[i];
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw std::runtime_error("'" + dir + "' is not a directory");
}

void write_file_atomic(const std::string& dir, const std::string& name, const std::string& content) {
  write_file_atomic(dir, name, [&](std::ostream& f) { f << content; });
}

void write_file_atomic(const std::string& dir, const std::string& name,
                       const std::function<void(std::ostream&)>& write) {
  const std::string final_path = dir + "/" + name;
  const std::string tmp = dir + "/." + name + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write '" + tmp + "': " + std::strerror(errno));
    write(f);
    f.flush();
    if (!f) throw std::runtime_error("write failed for '" + tmp + "'");
  }
  if (std::rename(tmp.c_str(), final_path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot rename '" + tmp + "' to '" + final_path + "': " + std::strerror(errno));
  }
}

namespace {

// The directory holds nothing, or a gcsim manifest (a run, compare or sweep output).
bool replaceable_output(const std::filesystem::path& dir) {
  std::error_code ec;
  if (std::filesystem::is_empty(dir, ec) && !ec) return true;
  return std::filesystem::is_regular_file(dir / "manifest.json", ec) ||
         std::filesystem::is_regular_file(dir / "plan.tsv", ec);
}

}  // namespace

StagedDir::StagedDir(std::string final_dir) : final_(std::move(final_dir)) {
  namespace fs = std::filesystem;
  while (final_.size() > 1 && final_.back() == '/') final_.pop_back();
  const fs::path fin(final_);
  std::error_code ec;
  if (fs::exists(fin, ec)) {
    if (!fs::is_directory(fin, ec)) throw InputError(SourceLoc{final_, 0, 0}, "output path exists and is not a directory");
    if (!replaceable_output(fin))
      throw InputError(SourceLoc{final_, 0, 0},
                       "output directory exists and is not a gcsim output (no manifest.json); "
                       "gcsim replaces only its own outputs: choose another --out");
  }
  const fs::path parent = fin.has_parent_path() ? fin.parent_path() : fs::path(".");
  ensure_directory(parent.string());
  staging_ = (parent / ("." + fin.filename().string() + ".partial-" + std::to_string(::getpid()))).string();
  fs::remove_all(staging_, ec);
  ensure_directory(staging_);
}

StagedDir::~StagedDir() {
  if (published_) return;
  std::error_code ec;
  std::filesystem::remove_all(staging_, ec);
}

void StagedDir::publish() {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(final_, ec)) {
    if (std::rename(staging_.c_str(), final_.c_str()) != 0)
      throw std::runtime_error("cannot rename '" + staging_ + "' to '" + final_ + "': " + std::strerror(errno));
  } else if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, final_.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(staging_, ec);  // now the previous output
  } else {
    // No RENAME_EXCHANGE on this file system: move the old one aside first.
    const std::string old = staging_ + ".old";
    if (std::rename(final_.c_str(), old.c_str()) != 0 || std::rename(staging_.c_str(), final_.c_str()) != 0)
      throw std::runtime_error("cannot replace '" + final_ + "': " + std::strerror(errno));
    fs::remove_all(old, ec);
  }
  published_ = true;
}

int64_t peak_rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  return 0;
}

}  // namespace gcsim
