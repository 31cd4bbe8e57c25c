#include <algorithm>
#include <charconv>
#include <cmath>

#include "sim/core/input_file.hpp"
#include "sim/workload/alibaba_reader.hpp"
#include "sim/workload/gpu_trace_readers.hpp"
#include "sim/workload/trace_readers.hpp"

namespace gcsim {

namespace {

// SWF numbers are integers or decimals ("552.21"); -1 means unknown.
bool parse_number(std::string_view tok, double& out) {
  if (tok.empty()) return false;
  const char* b = tok.data();
  const char* e = tok.data() + tok.size();
  auto [p, ec] = std::from_chars(b, e, out);
  return ec == std::errc() && p == e && std::isfinite(out);
}

std::optional<int64_t> header_int(std::string_view value) {
  // "MaxProcs: 240" or per-partition forms "1152 (...)": take the leading integer.
  value = trim(value);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p == value.data()) return std::nullopt;
  return v;
}

}  // namespace

Trace parse_swf(const std::string& text, const std::string& path, Diagnostics& diags) {
  Trace t;
  t.path = path;
  t.format = "swf";
  Diagnostics errs;
  int64_t skipped_runtime = 0, skipped_procs = 0;
  const auto lines = split_lines(text);
  for (size_t ln = 0; ln < lines.size(); ++ln) {
    const std::string_view line = lines[ln];
    const int lineno = static_cast<int>(ln) + 1;
    const std::string_view body = trim(line);
    if (body.empty()) continue;
    if (body.front() == ';') {
      std::string_view h = trim(body.substr(1));
      const size_t colon = h.find(':');
      if (colon == std::string_view::npos) continue;
      const std::string key(trim(h.substr(0, colon)));
      const std::string_view value = trim(h.substr(colon + 1));
      if (key == "UnixStartTime") {
        t.unix_start = header_int(value);
      } else if (key == "MaxNodes") {
        t.max_nodes = header_int(value);
      } else if (key == "MaxProcs") {
        t.max_procs = header_int(value);
      } else if (key == "Computer") {
        t.computer = std::string(value);
      }
      continue;
    }
    if (errs.full()) break;
    const auto toks = split_ws(line);
    auto col_of = [&](size_t i) { return static_cast<int>(toks[i].data() - line.data()) + 1; };
    if (toks.size() < 18) {
      errs.error({path, lineno, 1},
                 "expected 18 fields in an SWF job line, found " + std::to_string(toks.size()));
      continue;
    }
    double f[18];
    bool ok = true;
    for (size_t i = 0; i < 18; ++i) {
      if (!parse_number(toks[i], f[i])) {
        errs.error({path, lineno, col_of(i)},
                   "field " + std::to_string(i + 1) + " is not a number: '" + std::string(toks[i]) + "'");
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    if (f[0] < 0 || f[0] != std::floor(f[0])) {
      errs.error({path, lineno, col_of(0)}, "job number must be a non-negative integer");
      continue;
    }
    if (f[1] < 0) {
      errs.error({path, lineno, col_of(1)}, "submit time must not be negative");
      continue;
    }
    if (f[3] < 0) {
      ++skipped_runtime;
      continue;
    }
    double procs = f[4] > 0 ? f[4] : f[7];
    if (!(procs >= 1)) {
      ++skipped_procs;
      continue;
    }
    if (procs > 1e9) {
      errs.error({path, lineno, col_of(f[4] > 0 ? 4 : 7)}, "processor count is absurdly large");
      continue;
    }
    Job j;
    j.id = JobId(static_cast<int64_t>(f[0]));
    j.name = "swf" + std::to_string(static_cast<int64_t>(f[0]));
    j.source_line = lineno;
    j.submit = SimTime::from_seconds_ceil(f[1]);
    j.duration = SimTime::from_seconds_ceil(f[3]);
    // Field 3 is the wait; -1 (models, LLNL-Thunder, NASA) means the log has none.
    if (f[2] >= 0) j.recorded_start = SimTime::from_seconds_ceil(f[1] + f[2]);
    j.req.ntasks = static_cast<int>(procs);
    j.req.cpus_per_task = 1;
    if (f[8] > 0) j.req.time_limit = SimTime::from_seconds_ceil(f[8]);
    if (f[9] > 0) j.req.mem_per_cpu_mb = static_cast<int64_t>(std::ceil(f[9] / 1024.0));
    const int status = static_cast<int>(f[10]);
    j.recorded_state = status == 1 ? RecordedState::kCompleted
                       : status == 0 ? RecordedState::kFailed
                       : status == 5 ? RecordedState::kCancelled
                                     : RecordedState::kUnknown;
    j.user = f[11] >= 0 ? "u" + std::to_string(static_cast<int64_t>(f[11])) : "";
    j.account = f[12] >= 0 ? "g" + std::to_string(static_cast<int64_t>(f[12])) : "";
    t.jobs.push_back(std::move(j));
  }
  errs.throw_if_errors();
  if (skipped_runtime > 0) {
    diags.warning({path, 0, 0}, "skipped " + std::to_string(skipped_runtime) + " jobs with unknown run time (-1)");
    t.assumptions.push_back("skipped " + std::to_string(skipped_runtime) + " jobs with unknown run time");
  }
  if (skipped_procs > 0) {
    diags.warning({path, 0, 0}, "skipped " + std::to_string(skipped_procs) + " jobs with no processor count");
    t.assumptions.push_back("skipped " + std::to_string(skipped_procs) + " jobs with no processor count");
  }
  if (t.jobs.empty()) throw InputError(SourceLoc{path, 0, 0}, "no job records in SWF file");
  // SWF lines are sorted by submit time; keep file order for ties.
  std::stable_sort(t.jobs.begin(), t.jobs.end(), [](const Job& a, const Job& b) { return a.submit < b.submit; });
  t.assumptions.push_back("SWF jobs request ntasks=<allocated processors> with 1 CPU per task");
  t.assumptions.push_back("SWF requested time is the job's time limit; jobs without one have no limit");
  return t;
}

Trace read_swf(const std::string& path, Diagnostics& diags) { return parse_swf(read_input_file(path), path, diags); }

Trace read_trace(const std::string& path, Diagnostics& diags) {
  auto ends_with = [&](std::string_view suf) {
    return path.size() >= suf.size() && path.compare(path.size() - suf.size(), suf.size(), suf) == 0;
  };
  if (ends_with(".swf") || ends_with(".swf.gz")) return read_swf(path, diags);
  if (ends_with(".sacct") || ends_with(".sacct.gz")) return read_sacct_trace(path, diags);
  // Everything else is told apart by content: the first line names the format.
  const std::string text = read_input_file(path);
  const std::string_view body = trim(text);
  const std::string_view head = body.substr(0, body.find('\n'));
  if (!body.empty() && (body.front() == '[' || body.front() == '{')) return parse_philly_json(text, path, diags);
  if (head.find('|') != std::string_view::npos && head.find("JobID") != std::string_view::npos)
    return parse_sacct_trace(text, path, diags);
  if (head.find("cpu_milli") != std::string_view::npos) return parse_alibaba_v2023_pods(text, path, diags);
  if (head.rfind("job_id", 0) == 0 && head.find("gpu_num") != std::string_view::npos)
    return parse_helios_csv(text, path, diags);
  if (ends_with(".csv") || ends_with(".csv.gz") || head.rfind("name,", 0) == 0)
    return parse_sbatch_trace(text, path, diags);
  if (!body.empty() && (body.front() == ';' || std::isdigit(static_cast<unsigned char>(body.front()))))
    return parse_swf(text, path, diags);
  throw InputError(SourceLoc{path, 1, 1},
                   "unknown trace format (expected SWF, sbatch-trace CSV, sacct --parsable2, Philly JSON, "
                   "Alibaba v2023 pods or a Helios job log)");
}

}  // namespace gcsim
