#include "sim/workload/alibaba_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "sim/core/input_file.hpp"
#include "sim/workload/trace_transform.hpp"

namespace gcsim {

namespace {

RecordedState state_of_phase(std::string_view phase) {
  if (phase == "Succeeded") return RecordedState::kCompleted;
  if (phase == "Failed") return RecordedState::kFailed;
  return RecordedState::kUnknown;  // Running / Pending at the snapshot, or not given
}

// Counts one kind of adjusted or skipped pod and remembers where it first happened.
struct Tally {
  int64_t count = 0;
  int first_line = 0;
  void add(int line) {
    if (count++ == 0) first_line = line;
  }
  [[nodiscard]] std::string where() const { return " (first at line " + std::to_string(first_line) + ")"; }
};

}  // namespace

std::string alibaba_gres_type(std::string_view model) { return to_lower(trim(model)); }

Trace parse_alibaba_v2023_pods(const std::string& text, const std::string& path, Diagnostics& diags) {
  Trace t;
  t.path = path;
  t.format = "alibaba-v2023";
  Diagnostics errs;
  const auto lines = split_lines(text);
  size_t hdr = 0;
  while (hdr < lines.size() && trim(lines[hdr]).empty()) ++hdr;
  if (hdr == lines.size()) throw InputError(SourceLoc{path, 1, 1}, "empty Alibaba pod list: expected a header line");
  const int hdr_line = static_cast<int>(hdr) + 1;

  static const std::vector<std::string> kRequired = {"name",          "cpu_milli",     "memory_mib",
                                                     "num_gpu",       "gpu_milli",     "creation_time",
                                                     "deletion_time", "scheduled_time"};
  static const std::vector<std::string> kOptional = {"gpu_spec", "qos", "pod_phase"};
  const auto head = split_plain_csv(lines[hdr]);
  std::map<std::string, size_t> col;
  for (size_t c = 0; c < head.size(); ++c) {
    const std::string h = to_lower(head[c].text);
    const bool known = std::find(kRequired.begin(), kRequired.end(), h) != kRequired.end() ||
                       std::find(kOptional.begin(), kOptional.end(), h) != kOptional.end();
    if (!known) {
      errs.error({path, hdr_line, head[c].col},
                 "unknown column '" + std::string(head[c].text) +
                     "' in an Alibaba v2023 pod list (expected name, cpu_milli, memory_mib, num_gpu, gpu_milli, "
                     "gpu_spec, qos, pod_phase, creation_time, deletion_time, scheduled_time)");
      continue;
    }
    if (!col.emplace(h, c).second) errs.error({path, hdr_line, head[c].col}, "duplicate column '" + h + "'");
  }
  for (const auto& req : kRequired) {
    if (col.count(req)) continue;
    const bool time = req.find("_time") != std::string::npos;
    errs.error({path, hdr_line, 1}, "missing required column '" + req + "'" +
                                        (time ? std::string(": this pod list has no times (the multigpu50 "
                                                            "resampling is such a list), so it cannot be replayed")
                                              : std::string()));
  }
  errs.throw_if_errors();

  Tally fractional_cpu, zero_cpu, zero_mem, never_scheduled, never_deleted, fractional_gpu;
  std::set<std::string, std::less<>> names;
  for (size_t ln = hdr + 1; ln < lines.size() && !errs.full(); ++ln) {
    const std::string_view line = lines[ln];
    const int lineno = static_cast<int>(ln) + 1;
    if (trim(line).empty()) continue;
    if (line.find('"') != std::string_view::npos) {
      errs.error({path, lineno, static_cast<int>(line.find('"')) + 1},
                 "quoted fields do not occur in Alibaba v2023 pod lists");
      continue;
    }
    const auto cells = split_plain_csv(line);
    if (cells.size() != head.size()) {
      errs.error({path, lineno, 1},
                 "expected " + std::to_string(head.size()) + " fields, found " + std::to_string(cells.size()));
      continue;
    }
    auto cell = [&](const char* name) -> const CsvCell* {
      const auto it = col.find(name);
      return it == col.end() ? nullptr : &cells[it->second];
    };
    bool ok = true;
    auto number = [&](const char* name) -> double {
      const CsvCell* c = cell(name);
      const auto v = parse_non_negative_number(c->text);
      if (!v) {
        errs.error({path, lineno, c->col},
                   std::string(name) + " '" + std::string(c->text) + "' is not a non-negative number");
        ok = false;
        return 0;
      }
      return *v;
    };
    auto optional_time = [&](const char* name) -> std::optional<double> {
      const CsvCell* c = cell(name);
      if (is_missing_value(c->text)) return std::nullopt;
      return number(name);
    };

    Job j;
    j.source_line = lineno;
    j.name = std::string(cell("name")->text);
    if (j.name.empty()) {
      errs.error({path, lineno, cell("name")->col}, "empty pod name");
      ok = false;
    } else if (!names.insert(j.name).second) {
      errs.error({path, lineno, cell("name")->col}, "duplicate pod name '" + j.name + "'");
      ok = false;
    }
    const double cpu_milli = number("cpu_milli");
    const double memory_mib = number("memory_mib");
    const double num_gpu = number("num_gpu");
    const double gpu_milli = number("gpu_milli");
    const double creation = number("creation_time");
    const std::optional<double> deletion = optional_time("deletion_time");
    const std::optional<double> scheduled = optional_time("scheduled_time");
    if (!ok) continue;
    if (num_gpu != std::floor(num_gpu) || num_gpu > 1024) {
      errs.error({path, lineno, cell("num_gpu")->col}, "num_gpu must be a whole number of GPUs (0 to 1024)");
      continue;
    }
    if (num_gpu == 1 && (gpu_milli <= 0 || gpu_milli > 1000)) {
      errs.error({path, lineno, cell("gpu_milli")->col},
                 "a pod with num_gpu 1 needs gpu_milli in 1..1000 (its share of the GPU), found '" +
                     std::string(cell("gpu_milli")->text) + "'");
      continue;
    }
    if (cpu_milli > 1e9 || memory_mib > 1e12) {
      errs.error({path, lineno, cell(cpu_milli > 1e9 ? "cpu_milli" : "memory_mib")->col},
                 "resource request is absurdly large");
      continue;
    }
    if (scheduled && *scheduled < creation) {
      errs.error({path, lineno, cell("scheduled_time")->col}, "scheduled_time is before creation_time");
      continue;
    }
    if (!deletion) {
      never_deleted.add(lineno);
      continue;
    }
    const double start = scheduled.value_or(creation);
    if (*deletion < start) {
      errs.error({path, lineno, cell("deletion_time")->col},
                 std::string("deletion_time is before ") + (scheduled ? "scheduled_time" : "creation_time"));
      continue;
    }
    if (!scheduled) never_scheduled.add(lineno);

    // A pod is one container group on one node: one task, all of its CPUs.
    j.req.nodes_min = 1;
    j.req.nodes_max = 1;
    j.req.ntasks = 1;
    int cpus = static_cast<int>(std::ceil(cpu_milli / 1000.0));
    if (cpu_milli != std::floor(cpu_milli / 1000.0) * 1000.0) fractional_cpu.add(lineno);
    if (cpus < 1) {
      zero_cpu.add(lineno);
      cpus = 1;
    }
    j.req.cpus_per_task = cpus;
    if (memory_mib > 0) {
      j.req.mem_per_node_mb = static_cast<int64_t>(std::ceil(memory_mib));
    } else {
      zero_mem.add(lineno);  // --mem=0 would mean "the whole node" to Slurm: leave it unset
    }
    if (const CsvCell* spec = cell("gpu_spec"); spec && !is_missing_value(spec->text)) {
      for (auto alt : split(spec->text, '|')) {
        const std::string type = alibaba_gres_type(alt);
        if (type.empty()) {
          errs.error({path, lineno, spec->col}, "empty alternative in gpu_spec '" + std::string(spec->text) + "'");
          ok = false;
          break;
        }
        if (std::find(j.req.gpu_types_allowed.begin(), j.req.gpu_types_allowed.end(), type) ==
            j.req.gpu_types_allowed.end())
          j.req.gpu_types_allowed.push_back(type);
      }
      if (!ok) continue;
    }
    if (num_gpu > 0) {
      GresRequest g;
      g.count = static_cast<int64_t>(num_gpu);
      if (j.req.gpu_types_allowed.size() == 1) g.type = j.req.gpu_types_allowed.front();
      j.req.gres.push_back(std::move(g));
      if (num_gpu == 1 && gpu_milli < 1000) {
        j.req.gpu_fraction = gpu_milli / 1000.0;
        fractional_gpu.add(lineno);
      }
    }
    if (const CsvCell* q = cell("qos")) j.req.qos = std::string(q->text);
    if (const CsvCell* ph = cell("pod_phase")) j.recorded_state = state_of_phase(ph->text);
    j.req.job_name = j.name;
    j.submit = SimTime::from_seconds_ceil(creation);
    j.duration = SimTime::from_seconds_ceil(*deletion - start);
    if (scheduled) j.recorded_start = SimTime::from_seconds_ceil(*scheduled);
    t.jobs.push_back(std::move(j));
  }
  errs.throw_if_errors();
  if (t.jobs.empty()) throw InputError(SourceLoc{path, hdr_line + 1, 1}, "no pods in Alibaba v2023 pod list");

  const SourceLoc whole{path, 0, 0};
  if (never_deleted.count > 0) {
    diags.warning(whole, "skipped " + std::to_string(never_deleted.count) +
                             " pods without a deletion_time (run time unknown)" + never_deleted.where());
    t.assumptions.push_back("skipped " + std::to_string(never_deleted.count) + " pods without a deletion_time");
  }
  if (never_scheduled.count > 0) {
    diags.warning(whole, std::to_string(never_scheduled.count) +
                             " pods were never scheduled (no scheduled_time); their duration is deletion_time - "
                             "creation_time" + never_scheduled.where());
    t.assumptions.push_back(std::to_string(never_scheduled.count) +
                            " pods never scheduled (pod_phase Pending): duration = deletion_time - creation_time, "
                            "as if they had started when created");
  }
  if (zero_cpu.count > 0) {
    diags.warning(whole, std::to_string(zero_cpu.count) + " pods request no CPU; given 1 CPU" + zero_cpu.where());
    t.assumptions.push_back(std::to_string(zero_cpu.count) + " pods with cpu_milli 0 request 1 CPU");
  }
  if (zero_mem.count > 0) {
    diags.warning(whole, std::to_string(zero_mem.count) +
                             " pods request 0 MiB of memory; left without a memory request" + zero_mem.where());
    t.assumptions.push_back(std::to_string(zero_mem.count) +
                            " pods with memory_mib 0 have no memory request (Slurm's --mem=0 would mean the whole "
                            "node); the cluster's default memory applies");
  }
  t.assumptions.push_back(
      "Alibaba v2023 pods are Kubernetes pods: each is one task on one node (nodes=1, ntasks=1) with "
      "cpus_per_task = ceil(cpu_milli/1000)" +
      (fractional_cpu.count > 0 ? "; " + std::to_string(fractional_cpu.count) + " pods ask for fractional CPUs, rounded up"
                                : std::string()));
  t.assumptions.push_back("memory_mib is the pod's memory per node (MiB)");
  t.assumptions.push_back("num_gpu whole GPUs per pod (--gres=gpu:N); for num_gpu 1, gpu_milli/1000 is kept as "
                          "gpu_fraction (GPU sharing; " +
                          std::to_string(fractional_gpu.count) + " pods ask for part of a GPU)");
  t.assumptions.push_back("gpu_spec alternatives are gpu_types_allowed, as lowercase model names (the node lists' "
                          "GRES types); a single alternative is also the gres type");
  t.assumptions.push_back("submit = creation_time and duration = deletion_time - scheduled_time (seconds from the "
                          "trace start); pods have no time limit, user, account or partition");
  t.assumptions.push_back("pod_phase Succeeded = completed, Failed = failed, Running/Pending (at the snapshot) = "
                          "unknown; deletion_time is taken as the end for every phase");
  stable_sort_by_submit(t.jobs);
  for (size_t k = 0; k < t.jobs.size(); ++k) t.jobs[k].id = JobId(static_cast<int64_t>(k) + 1);
  return t;
}

Trace read_alibaba_v2023_pods(const std::string& path, Diagnostics& diags) {
  return parse_alibaba_v2023_pods(read_input_file(path), path, diags);
}

}  // namespace gcsim
