#include <algorithm>
#include <charconv>
#include <functional>
#include <cmath>
#include <map>
#include <set>

#include "sim/core/input_file.hpp"
#include "sim/workload/sbatch_options.hpp"
#include "sim/workload/trace_readers.hpp"
#include "sim/workload/trace_transform.hpp"

namespace gcsim {

namespace {

struct CsvField {
  std::string text;
  int line = 0;
  int col = 0;       // column of the field's first character (the quote, if quoted)
  bool quoted = false;
};

// RFC 4180 records: quoted fields may hold commas, doubled quotes and newlines.
// Hands each record to `on_row` as it is read (false from it stops), so that a
// trace's records are never all held at once. Returns false (and reports) on an
// unterminated quote.
bool read_csv(std::string_view text, int first_line, const std::string& path, Diagnostics& errs,
              const std::function<bool(std::vector<CsvField>&)>& on_row) {
  size_t i = 0;
  int line = first_line, col = 1;
  const size_t n = text.size();
  while (i < n) {
    std::vector<CsvField> row;
    while (true) {
      CsvField f;
      f.line = line;
      f.col = col;
      if (i < n && text[i] == '"') {
        f.quoted = true;
        ++i;
        ++col;
        bool closed = false;
        while (i < n) {
          if (text[i] == '"') {
            if (i + 1 < n && text[i + 1] == '"') {
              f.text.push_back('"');
              i += 2;
              col += 2;
              continue;
            }
            ++i;
            ++col;
            closed = true;
            break;
          }
          if (text[i] == '\n') {
            ++line;
            col = 1;
          } else {
            ++col;
          }
          f.text.push_back(text[i++]);
        }
        if (!closed) {
          errs.error({path, f.line, f.col}, "unterminated quoted field");
          return false;
        }
        // Anything between the closing quote and the separator is an error.
        size_t j = i;
        while (j < n && text[j] != ',' && text[j] != '\n' && text[j] != '\r') ++j;
        if (j > i) errs.error({path, line, col}, "unexpected text after a quoted field");
        col += static_cast<int>(j - i);
        i = j;
      } else {
        while (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
          f.text.push_back(text[i++]);
          ++col;
        }
      }
      row.push_back(std::move(f));
      if (i < n && text[i] == ',') {
        ++i;
        ++col;
        continue;
      }
      break;
    }
    if (i < n && text[i] == '\r') ++i;
    if (i < n && text[i] == '\n') ++i;
    ++line;
    col = 1;
    // Skip blank lines.
    if (!(row.size() == 1 && !row[0].quoted && trim(row[0].text).empty()) && !on_row(row)) return true;
  }
  return true;
}


}  // namespace

Trace parse_sbatch_trace(const std::string& text, const std::string& path, Diagnostics& diags) {
  (void)diags;
  Trace t;
  t.path = path;
  t.format = "sbatch-csv";
  Diagnostics errs;
  // `#` lines before the header are provenance comments (gcsim trace convert/gen write
  // them); the CSV is read from the line after them, counted so that line numbers stay
  // true (without copying the text: a 1M-job trace is 129 MB).
  const std::string_view body = text;
  int comment_lines = 0;
  size_t at = 0;
  while (at < body.size() && body[at] == '#') {
    const size_t eol = std::min(body.find('\n', at), body.size());
    // `# UnixStartTime: N` gives t=0 a wall-clock time, as the SWF header does.
    const std::string_view c = trim(std::string_view(body).substr(at + 1, eol - at - 1));
    if (c.rfind("UnixStartTime:", 0) == 0) {
      int64_t v = 0;
      const std::string_view num = trim(c.substr(14));
      auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
      if (ec == std::errc() && p == num.data() + num.size()) t.unix_start = v;
      else errs.error({path, comment_lines + 1, 1}, "invalid UnixStartTime comment: expected epoch seconds");
    }
    ++comment_lines;
    at = eol + 1;
  }
  const std::string_view csv = body.substr(std::min(at, body.size()));
  static const std::vector<std::string> kKnown = {"name",      "submit", "duration", "args",   "user",
                                                  "account",   "partition", "start", "state", "profile"};
  std::vector<CsvField> hdr;
  bool have_header = false;
  std::map<std::string, size_t> col;
  std::set<std::string> names;
  // one Job per record, reserved from the line count (a 1M-job trace grew by doubling:
  // 1.5 GB of Jobs at the last copy)
  t.jobs.reserve(static_cast<size_t>(std::count(csv.begin(), csv.end(), '\n')));
  auto on_row = [&](std::vector<CsvField>& row) -> bool {
    if (!have_header) {
      hdr = std::move(row);
      have_header = true;
      for (size_t c = 0; c < hdr.size(); ++c) {
        const std::string h = to_lower(trim(hdr[c].text));
        if (std::find(kKnown.begin(), kKnown.end(), h) == kKnown.end()) {
          errs.error({path, hdr[c].line, hdr[c].col},
                     "unknown column '" + std::string(trim(hdr[c].text)) +
                         "' (expected name, submit, duration, args, user, account, partition, start, state, profile)");
          continue;
        }
        if (col.count(h)) {
          errs.error({path, hdr[c].line, hdr[c].col}, "duplicate column '" + h + "'");
          continue;
        }
        col[h] = c;
      }
      for (const char* req : {"name", "submit", "duration", "args"})
        if (!col.count(req)) errs.error({path, 1, 1}, std::string("missing required column '") + req + "'");
      errs.throw_if_errors();
      return true;
    }
    if (errs.full()) return false;
    const int line = row[0].line;
    if (row.size() != hdr.size()) {
      errs.error({path, line, 1}, "expected " + std::to_string(hdr.size()) + " fields, found " +
                                      std::to_string(row.size()));
      return true;
    }
    auto field = [&](const char* name) -> const CsvField* {
      auto it = col.find(name);
      return it == col.end() ? nullptr : &row[it->second];
    };
    Job j;
    j.source_line = line;
    j.name = std::string(trim(field("name")->text));
    if (j.name.empty()) errs.error({path, line, field("name")->col}, "empty job name");
    if (!j.name.empty() && !names.insert(j.name).second)
      errs.error({path, line, field("name")->col}, "duplicate job name '" + j.name + "'");
    const auto submit = parse_non_negative_number(field("submit")->text);
    if (!submit)
      errs.error({path, line, field("submit")->col},
                 "invalid submit time '" + field("submit")->text + "': expected non-negative seconds");
    const auto duration = parse_non_negative_number(field("duration")->text);
    if (!duration)
      errs.error({path, line, field("duration")->col},
                 "invalid duration '" + field("duration")->text + "': expected non-negative seconds");
    const CsvField* args = field("args");
    // Point option errors at the option itself: columns inside the quotes.
    SourceLoc loc{path, args->line, args->col + (args->quoted ? 1 : 0)};
    parse_sbatch_options(args->text, loc, j.req, errs);
    if (submit) j.submit = SimTime::from_seconds_ceil(*submit);
    if (duration) j.duration = SimTime::from_seconds_ceil(*duration);
    if (const auto* u = field("user")) j.user = std::string(trim(u->text));
    if (const auto* a = field("account")) j.account = std::string(trim(a->text));
    if (j.account.empty()) j.account = j.req.account;
    if (const auto* p = field("partition")) j.partition = std::string(trim(p->text));
    if (j.partition.empty()) j.partition = j.req.partition;
    // Optional recorded outcome (written by `gcsim trace convert`): start in seconds
    // from t=0, for the replay report; state as sacct prints it.
    if (const auto* st = field("start"); st && !trim(st->text).empty()) {
      const auto v = parse_non_negative_number(st->text);
      if (!v) errs.error({path, line, st->col}, "invalid start '" + st->text + "': expected non-negative seconds");
      else if (submit && *v < *submit) errs.error({path, line, st->col}, "start is before submit");
      else j.recorded_start = SimTime::from_seconds_ceil(*v);
    }
    if (const auto* st = field("state"); st && !trim(st->text).empty()) {
      const std::string v(trim(st->text));
      if (v == "COMPLETED") j.recorded_state = RecordedState::kCompleted;
      else if (v == "FAILED") j.recorded_state = RecordedState::kFailed;
      else if (v == "CANCELLED") j.recorded_state = RecordedState::kCancelled;
      else if (v == "TIMEOUT") j.recorded_state = RecordedState::kTimeout;
      else errs.error({path, line, st->col}, "unknown state '" + v + "' (expected COMPLETED, FAILED, CANCELLED or TIMEOUT)");
    }
    if (const auto* pf = field("profile")) j.profile = std::string(trim(pf->text));
    t.jobs.push_back(std::move(j));
    return true;
  };
  if (!read_csv(csv, comment_lines + 1, path, errs, on_row)) errs.throw_if_errors();
  if (!have_header) throw InputError(SourceLoc{path, 1, 1}, "empty sbatch trace: expected a header 'name,submit,duration,args'");
  errs.throw_if_errors();
  if (t.jobs.empty()) throw InputError(SourceLoc{path, 2, 1}, "no jobs in sbatch trace");
  // Slurm numbers jobs in submission order; ties keep file order (as the oracle submits).
  stable_sort_by_submit(t.jobs);
  for (size_t k = 0; k < t.jobs.size(); ++k) t.jobs[k].id = JobId(static_cast<int64_t>(k) + 1);
  expand_job_arrays(t);
  return t;
}

Trace read_sbatch_trace(const std::string& path, Diagnostics& diags) {
  return parse_sbatch_trace(read_input_file(path), path, diags);
}

// --array=1-10%2, 0-15:4, 1,3,5: one Job per task, all with the array's job id (sacct
// prints id_task); the %N cap travels with every task for the policy to enforce.
void expand_job_arrays(Trace& t) {
  if (std::none_of(t.jobs.begin(), t.jobs.end(), [](const Job& j) { return !j.req.array.empty(); })) return;
  std::vector<Job> out;
  for (Job& j : t.jobs) {
    if (j.req.array.empty()) {
      out.push_back(std::move(j));
      continue;
    }
    std::string spec = j.req.array;
    int cap = 0;
    if (auto pct = spec.find('%'); pct != std::string::npos) {
      cap = std::atoi(spec.c_str() + pct + 1);
      spec.resize(pct);
    }
    std::vector<int64_t> tasks;
    for (std::string_view item : split(spec, ',')) {
      item = trim(item);
      int64_t step = 1;
      if (auto c = item.find(':'); c != std::string_view::npos) {
        step = std::max<int64_t>(1, std::atoll(std::string(item.substr(c + 1)).c_str()));
        item = item.substr(0, c);
      }
      const auto dash = item.find('-');
      const int64_t a = std::atoll(std::string(item.substr(0, dash)).c_str());
      const int64_t b = dash == std::string_view::npos ? a : std::atoll(std::string(item.substr(dash + 1)).c_str());
      for (int64_t v = a; v <= b; v += step) tasks.push_back(v);
    }
    std::sort(tasks.begin(), tasks.end());
    tasks.erase(std::unique(tasks.begin(), tasks.end()), tasks.end());
    for (int64_t task : tasks) {
      Job c = j;
      c.array_task = task;
      c.array_max_running = cap;
      c.req.array.clear();
      out.push_back(std::move(c));
    }
  }
  t.jobs = std::move(out);
}

}  // namespace gcsim
