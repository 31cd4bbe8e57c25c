#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "sim/core/input_file.hpp"
#include "sim/workload/gpu_trace_readers.hpp"
#include "sim/workload/slurm_time.hpp"

namespace gcsim {

namespace {

struct Cell {
  std::string text;
  int col = 1;
};

// One CSV line: comma-separated, fields may be double-quoted ("" = a quote). Helios
// logs have no multi-line fields. Returns false on an unterminated quote.
bool split_csv_line(std::string_view line, std::vector<Cell>& out, int& bad_col) {
  out.clear();
  size_t i = 0;
  while (true) {
    Cell c;
    c.col = static_cast<int>(i) + 1;
    if (i < line.size() && line[i] == '"') {
      ++i;
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            c.text.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          closed = true;
          break;
        }
        c.text.push_back(line[i++]);
      }
      if (!closed) {
        bad_col = c.col;
        return false;
      }
      while (i < line.size() && line[i] != ',') ++i;  // tolerate spaces after the quote
    } else {
      while (i < line.size() && line[i] != ',') c.text.push_back(line[i++]);
    }
    out.push_back(std::move(c));
    if (i >= line.size()) return true;
    ++i;  // ','
  }
}

std::optional<int64_t> parse_count(std::string_view s) {
  const auto v = parse_integer(s);
  if (!v || *v < 0) return std::nullopt;
  return v;
}

// "YYYY-MM-DD HH:MM:SS" (read as UTC) or epoch seconds.
std::optional<int64_t> parse_when(std::string_view s) {
  s = trim(s);
  std::optional<int64_t> t;
  if (!s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    t = parse_count(s);
  else
    t = slurm_time::parse_iso(s);
  // Past year 9999 (2.5e11 s) is no date; in microseconds it would overflow SimTime.
  if (t && *t > 253'402'300'799) return std::nullopt;
  return t;
}

struct HeliosRecord {
  Job job;
  int64_t submit_epoch = 0;
  std::optional<int64_t> start_epoch;  // start_time, when the job started
  std::optional<int64_t> job_id;
};

}  // namespace

Trace parse_helios_csv(const std::string& text, const std::string& path, Diagnostics& diags) {
  Trace t;
  t.path = path;
  t.format = "helios-csv";
  Diagnostics errs;
  const auto lines = split_lines(text);
  size_t first = 0;
  while (first < lines.size() && trim(lines[first]).empty()) ++first;
  if (first == lines.size())
    throw InputError(SourceLoc{path, 1, 1}, "empty Helios trace: expected a header 'job_id,user,vc,gpu_num,...'");

  std::vector<Cell> cells;
  int bad_col = 0;
  const int header_line = static_cast<int>(first) + 1;
  if (!split_csv_line(lines[first], cells, bad_col))
    throw InputError(SourceLoc{path, header_line, bad_col}, "unterminated quoted field");
  std::map<std::string, size_t> col;
  for (size_t c = 0; c < cells.size(); ++c) {
    const std::string h = to_lower(trim(cells[c].text));
    if (h.empty()) continue;  // e.g. a pandas index column
    if (!col.emplace(h, c).second) errs.error({path, header_line, cells[c].col}, "duplicate column '" + h + "'");
  }
  for (const char* req : {"submit_time", "state", "gpu_num"})
    if (!col.count(req)) errs.error({path, header_line, 1}, std::string("missing required column '") + req + "'");
  if (!col.count("duration") && !(col.count("start_time") && col.count("end_time")))
    errs.error({path, header_line, 1}, "missing column 'duration' (or both 'start_time' and 'end_time')");
  errs.throw_if_errors();
  const size_t ncols = cells.size();

  std::vector<HeliosRecord> recs;
  int64_t never_started = 0, uneven_gpus = 0, node_fail = 0;
  std::set<int64_t> ids;
  bool all_ids = col.count("job_id") > 0;
  for (size_t ln = first + 1; ln < lines.size() && !errs.full(); ++ln) {
    const int line = static_cast<int>(ln) + 1;
    if (trim(lines[ln]).empty()) continue;
    if (!split_csv_line(lines[ln], cells, bad_col)) {
      errs.error({path, line, bad_col}, "unterminated quoted field");
      continue;
    }
    if (cells.size() != ncols) {
      errs.error({path, line, 1}, "expected " + std::to_string(ncols) + " fields, found " + std::to_string(cells.size()));
      continue;
    }
    auto cell = [&](const char* name) -> const Cell* {
      auto it = col.find(name);
      return it == col.end() ? nullptr : &cells[it->second];
    };
    auto err = [&](const Cell* c, const std::string& msg) { errs.error({path, line, c ? c->col : 1}, msg); };
    const size_t before = errs.error_count();
    HeliosRecord r;
    Job& j = r.job;
    j.source_line = line;

    if (const Cell* c = cell("job_id")) {
      const std::string id(trim(c->text));
      j.name = id;
      const auto v = parse_count(id);
      if (v && *v > 0) {
        r.job_id = *v;
        if (!ids.insert(*v).second) err(c, "duplicate job_id " + id);
      } else {
        all_ids = false;
      }
    }
    if (const Cell* c = cell("user")) j.user = std::string(trim(c->text));
    if (const Cell* c = cell("vc")) j.account = std::string(trim(c->text));
    j.req.account = j.account;

    const Cell* sc = cell("submit_time");
    const auto submit = parse_when(sc->text);
    if (!submit) err(sc, "invalid submit_time '" + sc->text + "': expected YYYY-MM-DD HH:MM:SS or epoch seconds");

    const Cell* st = cell("state");
    const std::string state = to_lower(trim(st->text));
    if (state == "completed") {
      j.recorded_state = RecordedState::kCompleted;
    } else if (state == "failed") {
      j.recorded_state = RecordedState::kFailed;
    } else if (state == "node_fail") {
      j.recorded_state = RecordedState::kFailed;
      ++node_fail;
    } else if (state == "cancelled" || state.rfind("cancelled by", 0) == 0) {
      j.recorded_state = RecordedState::kCancelled;
    } else if (state == "timeout") {
      j.recorded_state = RecordedState::kTimeout;
    } else {
      err(st, "unknown state '" + st->text + "' (expected COMPLETED, FAILED, CANCELLED, TIMEOUT or NODE_FAIL)");
    }

    const Cell* gc = cell("gpu_num");
    const auto gpus = parse_count(gc->text);
    if (!gpus) err(gc, "invalid gpu_num '" + gc->text + "': expected a non-negative integer");
    std::optional<int64_t> cpus, nodes;
    if (const Cell* c = cell("cpu_num"); c && !is_missing_value(c->text)) {
      cpus = parse_count(c->text);
      if (!cpus) err(c, "invalid cpu_num '" + c->text + "': expected a non-negative integer");
    }
    if (const Cell* c = cell("node_num"); c && !is_missing_value(c->text)) {
      nodes = parse_count(c->text);
      if (!nodes) err(c, "invalid node_num '" + c->text + "': expected a non-negative integer");
    }

    // Run time: the duration column, else end - start; a job that never started ran 0 s.
    std::optional<int64_t> start, end;
    const Cell* stc = cell("start_time");
    const Cell* enc = cell("end_time");
    if (stc && !is_missing_value(stc->text)) {
      start = parse_when(stc->text);
      if (!start) err(stc, "invalid start_time '" + stc->text + "'");
    }
    if (enc && !is_missing_value(enc->text)) {
      end = parse_when(enc->text);
      if (!end) err(enc, "invalid end_time '" + enc->text + "'");
    }
    const Cell* dc = cell("duration");
    if (dc && !is_missing_value(dc->text)) {
      const auto d = parse_non_negative_number(dc->text);
      if (!d) err(dc, "invalid duration '" + dc->text + "': expected non-negative seconds");
      else j.duration = SimTime::us(std::llround(*d * SimTime::kPerSecond));
    } else if (start && end) {
      if (*end < *start) err(enc, "end_time is before start_time");
      else j.duration = SimTime::seconds(*end - *start);
    } else if (stc && is_missing_value(stc->text)) {
      j.duration = SimTime();
    } else {
      err(dc ? dc : enc, "no duration and no start_time/end_time to compute it from");
    }
    if (stc && is_missing_value(stc->text)) ++never_started;
    if (errs.error_count() != before) continue;

    // Request: one task per node holding that node's share of the CPUs and GPUs.
    r.submit_epoch = *submit;
    r.start_epoch = start;
    j.recorded_gpus = *gpus;
    const int64_t n = nodes && *nodes > 0 ? *nodes : 1;
    j.req.nodes_min = j.req.nodes_max = static_cast<int>(n);
    j.req.ntasks = static_cast<int>(n);
    if (*gpus > 0) {
      const int64_t per = (*gpus + n - 1) / n;
      if (per * n != *gpus) ++uneven_gpus;
      j.req.gpus_per_node = GresRequest{"gpu", "", per};
    }
    if (cpus && *cpus > 0) j.req.cpus_per_task = static_cast<int>((*cpus + n - 1) / n);
    recs.push_back(std::move(r));
  }
  errs.throw_if_errors();
  if (recs.empty()) throw InputError(SourceLoc{path, header_line + 1, 1}, "no jobs in Helios trace");
  (void)diags;

  int64_t t0 = recs.front().submit_epoch;
  for (const auto& r : recs) t0 = std::min(t0, r.submit_epoch);
  t.unix_start = t0;
  // Slurm numbers jobs in submission order; ties keep the job_id (or file) order.
  std::stable_sort(recs.begin(), recs.end(), [&](const HeliosRecord& a, const HeliosRecord& b) {
    if (a.submit_epoch != b.submit_epoch) return a.submit_epoch < b.submit_epoch;
    return all_ids && *a.job_id < *b.job_id;
  });
  for (auto& r : recs) {
    r.job.submit = SimTime::seconds(r.submit_epoch - t0);
    if (r.start_epoch && *r.start_epoch >= r.submit_epoch) r.job.recorded_start = SimTime::seconds(*r.start_epoch - t0);
    r.job.id = all_ids ? JobId(*r.job_id) : JobId(static_cast<int64_t>(t.jobs.size()) + 1);
    if (r.job.name.empty()) r.job.name = "helios" + std::to_string(r.job.id.value);
    t.jobs.push_back(std::move(r.job));
  }
  t.assumptions.push_back("Helios: times are read as UTC (the logs are local time, UTC+8); t=0 is the earliest submit_time");
  t.assumptions.push_back(
      "Helios: request is --nodes=<node_num> --ntasks=<node_num> --cpus-per-task=<cpu_num/node_num> "
      "--gpus-per-node=<gpu_num/node_num> (rounded up); memory left to the cluster's defaults; account = vc");
  if (uneven_gpus > 0)
    t.assumptions.push_back("Helios: " + std::to_string(uneven_gpus) +
                            " jobs have gpu_num not divisible by node_num; they ask for more GPUs than they used");
  t.assumptions.push_back("Helios: the logs have no time limits; jobs ask for none (the partition's limit applies)");
  if (never_started > 0)
    t.assumptions.push_back("Helios: " + std::to_string(never_started) +
                            " jobs never started (no start_time); they are kept with their recorded duration (0 s)");
  if (node_fail > 0)
    t.assumptions.push_back("Helios: " + std::to_string(node_fail) + " NODE_FAIL jobs are recorded as FAILED");
  if (!all_ids) t.assumptions.push_back("Helios: job_id missing or not numeric; jobs are numbered in submit order");
  return t;
}

Trace read_helios_csv(const std::string& path, Diagnostics& diags) {
  return parse_helios_csv(read_input_file(path), path, diags);
}

}  // namespace gcsim
