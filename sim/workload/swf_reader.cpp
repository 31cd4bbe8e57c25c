#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "sim/core/input_file.hpp"
#include "sim/workload/alibaba_reader.hpp"
#include "sim/workload/gpu_trace_readers.hpp"
#include "sim/workload/research_readers.hpp"
#include "sim/workload/trace_readers.hpp"
#include "sim/workload/trace_transform.hpp"

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

// The lowercased names of a CSV header line (the first line of the file).
std::set<std::string> header_columns(std::string_view head) {
  std::set<std::string> out;
  for (const CsvCell& c : split_plain_csv(head))
    if (!c.text.empty()) out.insert(to_lower(c.text));
  return out;
}

std::optional<int64_t> header_int(std::string_view value) {
  // "MaxProcs: 240" or per-partition forms "1152 (...)": take the leading integer.
  value = trim(value);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p == value.data()) return std::nullopt;
  return v;
}

// The PBS resource string of Alea's extension, `<nodes>:ppn=<cpus>[:gpus=<g>][:prop...]`
// with chunks joined by `+` and `#excl` for exclusive nodes: sets the node count, the
// GPUs per node and --exclusive. A chunk without a leading count (a host name) is one
// node; ppn is not needed (field 5 gives the processors). Chunks asking for different
// GPU counts cannot be one Slurm request: the string is then not used (counted).
void apply_pbs_resources(std::string_view spec, Job& j, int64_t& unread) {
  int64_t nodes = 0, gpus = -1;
  bool exclusive = false;
  for (std::string_view chunk : split(spec, '+')) {
    if (const size_t hash = chunk.find('#'); hash != std::string_view::npos) {
      exclusive = exclusive || chunk.substr(hash) == "#excl";
      chunk = chunk.substr(0, hash);
    }
    const auto parts = split(chunk, ':');
    const auto count = parse_integer(parts.front());
    int64_t chunk_gpus = 0;
    for (std::string_view p : parts)
      if (p.rfind("gpus=", 0) == 0) chunk_gpus = parse_integer(p.substr(5)).value_or(-1);
    if ((count && *count < 1) || chunk_gpus < 0 || (gpus >= 0 && chunk_gpus != gpus)) {
      ++unread;
      return;
    }
    nodes += count.value_or(1);
    gpus = chunk_gpus;
  }
  j.req.nodes_min = j.req.nodes_max = static_cast<int>(nodes);
  if (gpus > 0) {
    j.req.gpus_per_node = GresRequest{"gpu", "", gpus};
    j.recorded_gpus = gpus * nodes;
  }
  j.req.exclusive = exclusive;
}

// What the Alea extension changed, and the rebase of its absolute submit times: Alea's
// logs carry Unix epochs and no UnixStartTime header, so t=0 becomes the earliest
// submit, kept as Trace::unix_start.
void note_alea(Trace& t, int64_t alea_lines, int64_t bytes_lines, int64_t pbs_unread) {
  t.assumptions.push_back("SWF: " + std::to_string(alea_lines) +
                          " lines in Alea's extended form: the queue name (token 20) is the partition; the PBS "
                          "resource string (token 21) gives --nodes, --gpus-per-node and #excl = --exclusive");
  if (bytes_lines > 0)
    t.assumptions.push_back("SWF: " + std::to_string(bytes_lines) +
                            " header-less Alea lines give memory in bytes per job: --mem-per-cpu = bytes / "
                            "processors / MiB");
  if (pbs_unread > 0)
    t.assumptions.push_back("SWF: " + std::to_string(pbs_unread) +
                            " PBS resource strings mix GPU counts or give 0 nodes: not used (processors only)");
  if (t.unix_start) return;
  SimTime t0 = t.jobs.front().submit;
  for (const Job& j : t.jobs) t0 = std::min(t0, j.submit);
  if (t0 < SimTime::seconds(100'000'000)) return;  // relative times already (before 1973 as epochs)
  t.unix_start = t0.whole_seconds();
  for (Job& j : t.jobs) {
    j.submit = j.submit - SimTime::seconds(*t.unix_start);
    if (j.recorded_start) *j.recorded_start = *j.recorded_start - SimTime::seconds(*t.unix_start);
  }
  t.assumptions.push_back("SWF: submit times are Unix epochs with no UnixStartTime header; t=0 is the earliest "
                          "submit (" +
                          std::to_string(*t.unix_start) + ")");
}

}  // namespace

Trace parse_swf(const std::string& text, const std::string& path, Diagnostics& diags) {
  Trace t;
  t.path = path;
  t.format = "swf";
  Diagnostics errs;
  int64_t skipped_runtime = 0, skipped_procs = 0, skipped_submit = 0, alea_lines = 0, alea_bytes = 0, pbs_unread = 0;
  bool has_header = false;  // a `;` line before the job lines
  const auto lines = split_lines(text);
  t.jobs.reserve(lines.size());  // one job per record at most: no reallocation copies of a 1 KB Job
  for (size_t ln = 0; ln < lines.size(); ++ln) {
    const std::string_view line = lines[ln];
    const int lineno = static_cast<int>(ln) + 1;
    const std::string_view body = trim(line);
    if (body.empty()) continue;
    if (body.front() == ';') {
      has_header = true;
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
      // Beyond 2^53 an SWF integer is no longer exact; also catches inf and nan.
      if (!(std::fabs(f[i]) <= 9.0e15)) {
        errs.error({path, lineno, col_of(i)},
                   "field " + std::to_string(i + 1) + " is out of range: '" + std::string(toks[i]) + "'");
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    if (f[0] < 0 || f[0] != std::floor(f[0])) {
      errs.error({path, lineno, col_of(0)}, "job number must be a non-negative integer");
      continue;
    }
    // -1 is SWF's "unknown" (LLNL-Thunder has 1,190 such placeholder records, every
    // field -1): skipped like an unknown run time; any other negative time is an error.
    if (f[1] == -1) {
      ++skipped_submit;
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
    // Alea's extended SWF appends `{node ids}`, the queue name (`-` = none) and a PBS
    // resource string to the 18 fields. Alea's own header-less logs (wagap-2013) hold
    // the job's memory in bytes, not KB per processor (64 GiB for a 64-CPU job, 85 GiB
    // for a 12-CPU one on 90 GB nodes); files with a header (gcsim's writer) keep KB.
    const bool alea = toks.size() >= 20 && toks[18].front() == '{';
    const bool bytes_per_job = alea && !has_header;
    if (alea) {
      ++alea_lines;
      if (toks[19] != "-") j.partition = std::string(toks[19]);
      if (toks.size() >= 21) apply_pbs_resources(toks[20], j, pbs_unread);
    }
    if (f[9] > 0 && bytes_per_job) {
      ++alea_bytes;
      j.req.mem_per_cpu_mb = static_cast<int64_t>(std::ceil(f[9] / (1024.0 * 1024.0) / procs));
    } else if (f[9] > 0) {
      j.req.mem_per_cpu_mb = static_cast<int64_t>(std::ceil(f[9] / 1024.0));
    }
    const double status = f[10];
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
  if (skipped_submit > 0) {
    diags.warning({path, 0, 0}, "skipped " + std::to_string(skipped_submit) + " jobs with unknown submit time (-1)");
    t.assumptions.push_back("skipped " + std::to_string(skipped_submit) + " jobs with unknown submit time");
  }
  if (skipped_procs > 0) {
    diags.warning({path, 0, 0}, "skipped " + std::to_string(skipped_procs) + " jobs with no processor count");
    t.assumptions.push_back("skipped " + std::to_string(skipped_procs) + " jobs with no processor count");
  }
  if (t.jobs.empty()) throw InputError(SourceLoc{path, 0, 0}, "no job records in SWF file");
  if (alea_lines > 0) note_alea(t, alea_lines, alea_bytes, pbs_unread);
  // SWF lines are sorted by submit time; keep file order for ties.
  stable_sort_by_submit(t.jobs);
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
  // The research-artifact CSVs, by the columns their header names. Pollux's header also
  // starts with `name,`, so it must be tried before the sbatch-trace CSV.
  const auto cols = header_columns(head);
  if (cols.count("time") && cols.count("application") && cols.count("num_replicas"))
    return parse_pollux_workload(text, path, diags);
  if (cols.count("job_id") && cols.count("num_gpu") && cols.count("submit_time"))
    return cols.count("user") ? parse_chronus_csv(text, path, diags) : parse_tiresias_csv(text, path, diags);
  if (cols.size() == 1 && (cols.count("duration") || cols.count("runtime")))
    return parse_duration_list(text, path, diags);
  if (const size_t tabs = std::count(head.begin(), head.end(), '\t'); tabs == 6 || tabs == 9)
    return parse_gavel_trace(text, path, diags);
  if (ends_with(".csv") || ends_with(".csv.gz") || head.rfind("name,", 0) == 0)
    return parse_sbatch_trace(text, path, diags);
  if (!body.empty() && (body.front() == ';' || std::isdigit(static_cast<unsigned char>(body.front()))))
    return parse_swf(text, path, diags);
  throw InputError(SourceLoc{path, 1, 1},
                   "unknown trace format (expected SWF, sbatch-trace CSV, sacct --parsable2, Philly JSON, "
                   "Alibaba v2023 pods, a Helios job log, a Gavel trace, a Pollux workload, a Tiresias or Chronus "
                   "job CSV, or a duration list)");
}

}  // namespace gcsim
