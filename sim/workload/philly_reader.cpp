#include <algorithm>
#include <cmath>
#include <map>

#include "sim/core/input_file.hpp"
#include "sim/core/json.hpp"
#include "sim/workload/gpu_trace_readers.hpp"
#include "sim/workload/slurm_time.hpp"

namespace gcsim {

namespace {

// One job record checked and reduced to what the model needs.
struct PhillyRecord {
  Job job;
  int64_t submit_epoch = 0;
  std::optional<int64_t> start_epoch;  // the final attempt's start_time, when given
};

class PhillyJobReader {
 public:
  PhillyJobReader(const std::string& path, Diagnostics& errs) : path_(path), errs_(errs) {}

  int64_t skipped_no_attempt = 0;
  int64_t skipped_no_end = 0;
  int64_t skipped_no_gpus = 0;
  int64_t uneven = 0;
  int64_t with_retries = 0;

  // Returns false when the record is invalid (reported) or skipped (counted).
  bool read(const JsonValue& rec, PhillyRecord& out) {
    if (!rec.is_object()) return error(rec, std::string("job record must be an object, found ") + json_kind_name(rec.kind));
    const JsonValue* status = string_field(rec, "status", true);
    const JsonValue* jobid = string_field(rec, "jobid", true);
    const JsonValue* submitted = string_field(rec, "submitted_time", true);
    const JsonValue* vc = string_field(rec, "vc", false);
    const JsonValue* user = string_field(rec, "user", false);
    if (!status || !jobid || !submitted || bad_) return false;

    Job& j = out.job;
    j.source_line = rec.line;
    j.name = jobid->string;
    if (j.name.empty()) return error(*jobid, "empty jobid");
    if (vc) j.account = vc->string;
    j.req.account = j.account;
    if (user) j.user = user->string;
    if (status->string == "Pass") {
      j.recorded_state = RecordedState::kCompleted;
    } else if (status->string == "Failed") {
      j.recorded_state = RecordedState::kFailed;
    } else if (status->string == "Killed") {
      j.recorded_state = RecordedState::kCancelled;
    } else {
      return error(*status, "unknown status '" + status->string + "' (expected Pass, Failed or Killed)");
    }
    const auto sub = slurm_time::parse_iso(submitted->string);
    if (!sub) return error(*submitted, "invalid submitted_time '" + submitted->string + "': expected YYYY-MM-DD HH:MM:SS");
    out.submit_epoch = *sub;

    // The attempt that decides the shape and run time: the last of attempts[], or the
    // record itself in the flattened form.
    const JsonValue* attempt = &rec;
    if (const JsonValue* attempts = rec.find("attempts")) {
      if (!attempts->is_array()) return error(*attempts, "'attempts' must be an array");
      j.attempts = static_cast<int>(attempts->items.size());
      if (attempts->items.empty()) {
        ++skipped_no_attempt;
        return false;
      }
      if (attempts->items.size() > 1) ++with_retries;
      attempt = &attempts->items.back();
      if (!attempt->is_object()) return error(*attempt, "attempt must be an object");
    } else {
      j.attempts = 1;
    }

    // GPUs per machine over detail[] (a machine may be listed more than once).
    const JsonValue* detail = attempt->find("detail");
    if (!detail || detail->is_null()) {
      ++skipped_no_gpus;
      return false;
    }
    if (!detail->is_array()) return error(*detail, "'detail' must be an array");
    std::map<std::string, int64_t> per_machine;
    for (const JsonValue& d : detail->items) {
      if (!d.is_object()) return error(d, "detail entry must be an object");
      const JsonValue* ip = string_field(d, "ip", true);
      const JsonValue* gpus = d.find("gpus");
      if (!ip) return false;
      if (!gpus || !gpus->is_array()) return error(gpus ? *gpus : d, "detail entry needs a 'gpus' array");
      for (const JsonValue& g : gpus->items)
        if (!g.is_string()) return error(g, "GPU names in 'gpus' must be strings");
      per_machine[ip->string] += static_cast<int64_t>(gpus->items.size());
    }
    int64_t total = 0, most = 0;
    for (const auto& [m, n] : per_machine) {
      total += n;
      most = std::max(most, n);
    }
    if (total == 0) {
      ++skipped_no_gpus;
      return false;
    }
    const int64_t machines = static_cast<int64_t>(per_machine.size());
    if (most * machines != total) ++uneven;
    j.recorded_gpus = total;
    j.req.nodes_min = j.req.nodes_max = static_cast<int>(machines);
    j.req.gpus_per_node = GresRequest{"gpu", "", most};
    j.req.ntasks = static_cast<int>(total);

    // The recorded start (for the replay report and wait statistics): the final
    // attempt's start_time, so the wait includes earlier failed attempts.
    if (const JsonValue* st = attempt->find("start_time"); st && st->is_string())
      if (const auto s = slurm_time::parse_iso(st->string)) out.start_epoch = *s;

    // Run time: runtime_min when the record has it, else end - start.
    const JsonValue* runtime = rec.find("runtime_min");
    if (runtime && !runtime->is_null()) {
      if (!runtime->is_number() || runtime->number < 0)
        return error(*runtime, "'runtime_min' must be a non-negative number");
      j.duration = SimTime::us(std::llround(runtime->number * 60.0 * SimTime::kPerSecond));
      return true;
    }
    const JsonValue* start = attempt->find("start_time");
    const JsonValue* end = attempt->find("end_time");
    if (!start || !end || start->is_null() || end->is_null()) {
      ++skipped_no_end;
      return false;
    }
    if (!start->is_string()) return error(*start, "'start_time' must be a string or null");
    if (!end->is_string()) return error(*end, "'end_time' must be a string or null");
    const auto s = slurm_time::parse_iso(start->string);
    const auto e = slurm_time::parse_iso(end->string);
    if (!s) return error(*start, "invalid start_time '" + start->string + "'");
    if (!e) return error(*end, "invalid end_time '" + end->string + "'");
    if (*e < *s) return error(*end, "end_time is before start_time");
    j.duration = SimTime::seconds(*e - *s);
    return true;
  }

  void reset() { bad_ = false; }

 private:
  bool error(const JsonValue& at, const std::string& msg) {
    errs_.error({path_, at.line, at.col}, msg);
    bad_ = true;
    return false;
  }

  // A string member; missing or null is an error only when required.
  const JsonValue* string_field(const JsonValue& obj, const char* name, bool required) {
    const JsonValue* v = obj.find(name);
    if (!v || v->is_null()) {
      if (required) error(obj, std::string("missing '") + name + "'");
      return nullptr;
    }
    if (!v->is_string()) {
      error(*v, std::string("'") + name + "' must be a string, found " + json_kind_name(v->kind));
      return nullptr;
    }
    return v;
  }

  const std::string& path_;
  Diagnostics& errs_;
  bool bad_ = false;
};

void warn_skipped(Trace& t, Diagnostics& diags, int64_t n, const std::string& why) {
  if (n == 0) return;
  const std::string msg = "skipped " + std::to_string(n) + " jobs " + why;
  diags.warning({t.path, 0, 0}, msg);
  t.assumptions.push_back(msg);
}

}  // namespace

Trace parse_philly_json(const std::string& text, const std::string& path, Diagnostics& diags) {
  Trace t;
  t.path = path;
  t.format = "philly-json";
  const JsonValue doc = parse_json(text, path);
  if (!doc.is_array())
    throw InputError(SourceLoc{path, doc.line, doc.col},
                     std::string("expected a JSON array of Philly job records, found ") + json_kind_name(doc.kind));
  Diagnostics errs;
  PhillyJobReader reader(path, errs);
  std::vector<PhillyRecord> recs;
  recs.reserve(doc.items.size());
  for (const JsonValue& rec : doc.items) {
    if (errs.full()) break;
    PhillyRecord r;
    reader.reset();
    if (reader.read(rec, r)) recs.push_back(std::move(r));
  }
  errs.throw_if_errors();
  warn_skipped(t, diags, reader.skipped_no_attempt, "that never started (empty attempts)");
  warn_skipped(t, diags, reader.skipped_no_end, "with no end time in their final attempt");
  warn_skipped(t, diags, reader.skipped_no_gpus, "with no GPUs in their final attempt");
  if (recs.empty()) throw InputError(SourceLoc{path, doc.line, doc.col}, "no job records in Philly trace");

  int64_t t0 = recs.front().submit_epoch;
  for (const auto& r : recs) t0 = std::min(t0, r.submit_epoch);
  t.unix_start = t0;
  std::stable_sort(recs.begin(), recs.end(),
                   [](const PhillyRecord& a, const PhillyRecord& b) { return a.submit_epoch < b.submit_epoch; });
  t.jobs.reserve(recs.size());
  for (auto& r : recs) {
    r.job.submit = SimTime::seconds(r.submit_epoch - t0);
    if (r.start_epoch && *r.start_epoch >= r.submit_epoch) r.job.recorded_start = SimTime::seconds(*r.start_epoch - t0);
    r.job.id = JobId(static_cast<int64_t>(t.jobs.size()) + 1);
    t.jobs.push_back(std::move(r.job));
  }
  t.assumptions.push_back("Philly: times are read as UTC; t=0 is the earliest submitted_time");
  t.assumptions.push_back(
      "Philly: request is --nodes=<machines of the final attempt> --gpus-per-node=<most GPUs on one of them> "
      "--ntasks=<GPUs> (one task per GPU, CPUs and memory left to the cluster's defaults)");
  if (reader.uneven > 0)
    t.assumptions.push_back("Philly: " + std::to_string(reader.uneven) +
                            " jobs spread their GPUs unevenly over machines; they ask for "
                            "<machines> x <most GPUs on one> GPUs, more than they used");
  t.assumptions.push_back("Philly: the trace has no time limits; jobs ask for none (the partition's limit applies)");
  t.assumptions.push_back(
      "Philly: duration is runtime_min*60 when given, else end_time - start_time of the final attempt; "
      "earlier attempts are not replayed");
  if (reader.with_retries > 0)
    t.assumptions.push_back("Philly: " + std::to_string(reader.with_retries) +
                            " jobs had more than one attempt; only the last is replayed");
  t.assumptions.push_back("Philly: status Pass -> COMPLETED, Failed -> FAILED, Killed -> CANCELLED; account = vc");
  return t;
}

Trace read_philly_json(const std::string& path, Diagnostics& diags) {
  return parse_philly_json(read_input_file(path), path, diags);
}

}  // namespace gcsim
