// sacct --parsable2 traces: fields found by header name in any order; allocation
// lines only (.batch/.extern and step lines are skipped); array ids `123_4` kept as
// names. The job's duration is its Elapsed, its limit its Timelimit, and its request
// comes from ReqTRES (cpu, mem, node, gres/gpu[:type]).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>

#include "sim/core/input_file.hpp"
#include "sim/workload/sbatch_options.hpp"
#include "sim/workload/slurm_time.hpp"
#include "sim/workload/trace_readers.hpp"

namespace gcsim {

namespace {

// Slurm memory in TRES strings: 64000M, 64G, 1.50T (MB default).
std::optional<int64_t> tres_mem_mb(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  double mult = 1;
  switch (s.back()) {
    case 'K': mult = 1.0 / 1024; s.remove_suffix(1); break;
    case 'M': s.remove_suffix(1); break;
    case 'G': mult = 1024; s.remove_suffix(1); break;
    case 'T': mult = 1024.0 * 1024; s.remove_suffix(1); break;
    default: break;
  }
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  // Also refuses inf, nan and sizes past 2^53 MB (a cast of those would be undefined).
  if (ec != std::errc() || p != s.data() + s.size() || !(v >= 0 && v * mult <= 9.0e15)) return std::nullopt;
  return static_cast<int64_t>(std::ceil(v * mult));
}

RecordedState state_of(std::string_view s) {
  if (s.rfind("COMPLETED", 0) == 0) return RecordedState::kCompleted;
  if (s.rfind("FAILED", 0) == 0 || s.rfind("NODE_FAIL", 0) == 0 || s.rfind("OUT_OF_MEMORY", 0) == 0)
    return RecordedState::kFailed;
  if (s.rfind("CANCELLED", 0) == 0) return RecordedState::kCancelled;
  if (s.rfind("TIMEOUT", 0) == 0) return RecordedState::kTimeout;
  return RecordedState::kUnknown;
}

}  // namespace

Trace parse_sacct_trace(const std::string& text, const std::string& path, Diagnostics& diags) {
  Trace t;
  t.path = path;
  t.format = "sacct";
  Diagnostics errs;
  const auto lines = split_lines(text);
  size_t first = 0;
  while (first < lines.size() && trim(lines[first]).empty()) ++first;
  if (first == lines.size()) throw InputError(SourceLoc{path, 1, 1}, "empty sacct file: expected a header line");
  std::map<std::string, size_t> col;
  const auto header = split(lines[first], '|');
  for (size_t c = 0; c < header.size(); ++c) col[std::string(trim(header[c]))] = c;
  for (const char* req : {"JobID", "Submit", "Start", "End"})
    if (!col.count(req))
      errs.error({path, static_cast<int>(first) + 1, 1}, std::string("missing sacct field '") + req + "' in the header");
  if (!col.count("Elapsed") && !col.count("ElapsedRaw"))
    errs.error({path, static_cast<int>(first) + 1, 1}, "missing sacct field 'Elapsed' in the header");
  errs.throw_if_errors();

  struct Row {
    int64_t submit;
    std::optional<int64_t> start;
    Job job;
  };
  std::vector<Row> rows;
  int64_t skipped_steps = 0, skipped_unstarted = 0;
  for (size_t ln = first + 1; ln < lines.size() && !errs.full(); ++ln) {
    const std::string_view line = lines[ln];
    if (trim(line).empty()) continue;
    const int lineno = static_cast<int>(ln) + 1;
    const auto cells = split(line, '|');
    // sacct -p (not -P) adds a trailing '|'.
    if (cells.size() != header.size() && !(cells.size() == header.size() + 1 && cells.back().empty())) {
      errs.error({path, lineno, 1}, "expected " + std::to_string(header.size()) + " fields, found " +
                                        std::to_string(cells.size()));
      continue;
    }
    auto cell = [&](const char* name) -> std::string_view {
      auto it = col.find(name);
      return it == col.end() ? std::string_view() : trim(cells[it->second]);
    };
    auto col_of = [&](const char* name) {
      auto it = col.find(name);
      return it == col.end() ? 1 : static_cast<int>(cells[it->second].data() - line.data()) + 1;
    };
    const std::string_view id = cell("JobID");
    if (id.find('.') != std::string_view::npos) {
      ++skipped_steps;
      continue;
    }
    Row r;
    Job& j = r.job;
    j.source_line = lineno;
    j.name = col.count("JobName") ? std::string(cell("JobName")) : std::string(id);
    j.user = std::string(cell("User"));
    j.account = std::string(cell("Account"));
    j.partition = std::string(cell("Partition"));
    j.req.qos = std::string(cell("QOS"));
    j.recorded_state = state_of(cell("State"));
    const auto submit = slurm_time::parse_iso(cell("Submit"));
    if (!submit) {
      errs.error({path, lineno, col_of("Submit")}, "invalid Submit time '" + std::string(cell("Submit")) + "'");
      continue;
    }
    r.submit = *submit;
    r.start = slurm_time::parse_iso(cell("Start"));
    if (!r.start) {
      ++skipped_unstarted;  // pending or cancelled before it ran: nothing to replay
      continue;
    }
    std::optional<SimTime> elapsed;
    if (col.count("ElapsedRaw")) {
      if (auto v = parse_integer(cell("ElapsedRaw"))) elapsed = SimTime::seconds(*v);
    } else {
      elapsed = slurm_time::parse_elapsed(cell("Elapsed"));
    }
    if (!elapsed || elapsed->is_infinite()) {
      errs.error({path, lineno, col_of("Elapsed")}, "invalid Elapsed '" + std::string(cell("Elapsed")) + "'");
      continue;
    }
    j.duration = *elapsed;
    if (col.count("Timelimit")) {
      const std::string_view tl = cell("Timelimit");
      if (tl != "Partition_Limit" && !tl.empty()) {
        if (auto v = slurm_time::parse_elapsed(tl))
          j.req.time_limit = *v;
        else
          errs.error({path, lineno, col_of("Timelimit")}, "invalid Timelimit '" + std::string(tl) + "'");
      }
    }
    // The request, from ReqTRES (AllocTRES when ReqTRES is absent).
    std::string_view tres = col.count("ReqTRES") ? cell("ReqTRES") : cell("AllocTRES");
    int64_t cpus = 0, nodes = 0, gpus = 0, mem = -1;
    std::string gpu_type;
    for (auto kv : split(tres, ',')) {
      if (kv.empty()) continue;
      const auto eq = kv.find('=');
      if (eq == std::string_view::npos) {
        errs.error({path, lineno, col_of(col.count("ReqTRES") ? "ReqTRES" : "AllocTRES")},
                   "invalid TRES '" + std::string(kv) + "': expected type=count");
        continue;
      }
      const std::string_view key = kv.substr(0, eq), val = kv.substr(eq + 1);
      const SourceLoc tres_loc{path, lineno, col_of(col.count("ReqTRES") ? "ReqTRES" : "AllocTRES")};
      // A count sacct could print: a whole number, at most 10^8 (no cluster has more CPUs).
      auto count = [&]() -> int64_t {
        const auto n = parse_integer(val);
        if (n && *n >= 0 && *n <= 100'000'000) return *n;
        errs.error(tres_loc, "invalid TRES '" + std::string(kv) + "': expected a whole count from 0 to 100000000");
        return 0;
      };
      if (key == "cpu") cpus = count();
      else if (key == "node") nodes = count();
      else if (key == "mem") {
        const auto m = tres_mem_mb(val);
        if (!m) errs.error(tres_loc, "invalid TRES '" + std::string(kv) + "': expected a size such as 64G");
        mem = m.value_or(-1);
      } else if (key == "gres/gpu") gpus = count();
      else if (key.rfind("gres/gpu:", 0) == 0) {
        gpu_type = std::string(key.substr(9));
        gpus = std::max<int64_t>(gpus, count());
      }
    }
    if (cpus <= 0) cpus = parse_integer(cell("NCPUS")).value_or(1);
    if (nodes <= 0) nodes = parse_integer(cell("NNodes")).value_or(1);
    j.req.nodes_min = static_cast<int>(std::max<int64_t>(1, nodes));
    j.req.ntasks = static_cast<int>(std::max<int64_t>(cpus, *j.req.nodes_min));
    j.req.cpus_per_task = 1;
    if (gpus > 0) j.req.gpus = GresRequest{"gpu", gpu_type, gpus};
    if (mem > 0) j.req.mem_per_node_mb = std::max<int64_t>(1, mem / *j.req.nodes_min);
    rows.push_back(std::move(r));
  }
  errs.throw_if_errors();
  if (rows.empty()) throw InputError(SourceLoc{path, 0, 0}, "no started jobs in sacct file");
  if (skipped_steps > 0) t.assumptions.push_back("skipped " + std::to_string(skipped_steps) + " step lines");
  if (skipped_unstarted > 0) {
    diags.warning({path, 0, 0}, "skipped " + std::to_string(skipped_unstarted) + " jobs that never started");
    t.assumptions.push_back("skipped " + std::to_string(skipped_unstarted) + " jobs that never started");
  }
  t.assumptions.push_back("sacct requests come from ReqTRES: cpu = tasks of one CPU, mem split evenly over nodes");
  int64_t t0 = rows.front().submit;
  for (const auto& r : rows) t0 = std::min(t0, r.submit);
  t.unix_start = t0;
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.submit < b.submit; });
  for (size_t k = 0; k < rows.size(); ++k) {
    Job j = std::move(rows[k].job);
    j.id = JobId(static_cast<int64_t>(k) + 1);
    j.submit = SimTime::seconds(rows[k].submit - t0);
    j.recorded_start = SimTime::seconds(*rows[k].start - t0);
    t.jobs.push_back(std::move(j));
  }
  return t;
}

Trace read_sacct_trace(const std::string& path, Diagnostics& diags) {
  return parse_sacct_trace(read_input_file(path), path, diags);
}

}  // namespace gcsim
