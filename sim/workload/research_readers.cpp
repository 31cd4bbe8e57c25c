#include "sim/workload/research_readers.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "sim/core/input_file.hpp"
#include "sim/workload/trace_transform.hpp"

namespace gcsim {

namespace {

// Times past this (about 3,000 years) are garbage, not a job; it also keeps SimTime
// arithmetic far from overflow.
constexpr double kMaxSeconds = 1e11;
// More GPUs than any cluster these artifacts model; a larger count is garbage.
constexpr int64_t kMaxGpus = 100'000;

// ---- the request shape shared by all formats -------------------------------------

// The fewest nodes, each holding the same number (at most per_node) of the job's GPUs:
// 12 GPUs on 8-GPU nodes is 2 x 6, 20 is 4 x 5. A prime count above per_node ends up
// one GPU per node.
int64_t nodes_for(int64_t gpus, int64_t per_node) {
  for (int64_t n = (gpus + per_node - 1) / per_node; n < gpus; ++n)
    if (gpus % n == 0 && gpus / n <= per_node) return n;
  return gpus;
}

// The Philly reader's request: --nodes=N --gpus-per-node=G/N --ntasks=G (one task per
// GPU); a 0-GPU job is a one-task CPU job with no GPU request.
void request_gpus(Job& j, int64_t gpus, int64_t per_node) {
  j.recorded_gpus = gpus;
  if (gpus == 0) {
    j.req.nodes_min = j.req.nodes_max = 1;
    j.req.ntasks = 1;
    return;
  }
  const int64_t nodes = nodes_for(gpus, per_node);
  j.req.nodes_min = j.req.nodes_max = static_cast<int>(nodes);
  j.req.gpus_per_node = GresRequest{"gpu", "", gpus / nodes};
  j.req.ntasks = static_cast<int>(gpus);
}

std::string shape_assumption(const std::string& fmt, int64_t per_node, const std::string& why) {
  return fmt + ": the trace names no nodes; a job's GPUs go on the fewest nodes of at most " +
         std::to_string(per_node) + " GPUs each (" + why +
         ") holding equal shares: --nodes=N --gpus-per-node=G/N --ntasks=G; CPUs and memory are left to the "
         "cluster's defaults; no time limit (the partition's applies)";
}

// Jobs in submit order, ties in file order, numbered 1..N as Slurm would number them.
void number_jobs(Trace& t) {
  stable_sort_by_submit(t.jobs);
  for (size_t k = 0; k < t.jobs.size(); ++k) t.jobs[k].id = JobId(static_cast<int64_t>(k) + 1);
}

// "ResNet-18 (batch size 32)" -> "resnet-18-batch-size-32": a job name without spaces
// or parentheses, safe in every output table.
std::string name_token(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (!out.empty() && out.back() != '-') {
      out.push_back('-');
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// ---- checked values ----------------------------------------------------------------

// One field with where it starts, so every value error points at its column.
struct Field {
  std::string_view text;
  int col = 1;
};

// Checks the values of one record and reports into `errs` at path:line:col; callers
// test ok() once after reading every field, so one line may report several errors.
class FieldChecker {
 public:
  FieldChecker(const std::string& path, int line, Diagnostics& errs)
      : path_(path), line_(line), errs_(errs), before_(errs.error_count()) {}

  [[nodiscard]] bool ok() const { return errs_.error_count() == before_; }
  void error(const Field& f, const std::string& msg) { errs_.error({path_, line_, f.col}, msg); }

  std::optional<double> seconds(const Field& f, const std::string& name) {
    const auto v = parse_non_negative_number(f.text);
    if (!v) {
      error(f, name + " '" + std::string(f.text) + "' is not a non-negative number of seconds");
      return std::nullopt;
    }
    if (*v > kMaxSeconds) {
      error(f, name + " '" + std::string(f.text) + "' is absurdly large");
      return std::nullopt;
    }
    return v;
  }

  std::optional<int64_t> count(const Field& f, const std::string& name, int64_t max) {
    const auto v = parse_integer(f.text);
    if (!v || *v < 0) {
      error(f, name + " '" + std::string(f.text) + "' is not a non-negative integer");
      return std::nullopt;
    }
    if (*v > max) {
      error(f, name + " " + std::to_string(*v) + " is absurdly large");
      return std::nullopt;
    }
    return v;
  }

  std::optional<double> number(const Field& f, const std::string& name) {
    const std::string_view s = trim(f.text);
    const bool negative = !s.empty() && s.front() == '-';
    const auto v = parse_non_negative_number(negative ? s.substr(1) : s);
    if (!v) {
      error(f, name + " '" + std::string(f.text) + "' is not a number");
      return std::nullopt;
    }
    return negative ? -*v : *v;
  }

 private:
  const std::string& path_;
  int line_;
  Diagnostics& errs_;
  size_t before_;
};

void warn_and_assume(Trace& t, Diagnostics& diags, int64_t n, const std::string& msg) {
  if (n == 0) return;
  diags.warning({t.path, 0, 0}, msg);
  t.assumptions.push_back(msg);
}

// ---- CSV with columns by header name -----------------------------------------------

// The header of a plain (unquoted) CSV: lowercased names to positions, the first
// non-blank line. Duplicate names are errors; unknown names are allowed (callers
// ignore them) so that files with extra columns read.
struct CsvHeader {
  size_t index = 0;  // into the lines
  int line = 1;
  size_t ncols = 0;
  std::map<std::string, size_t> col;
};

CsvHeader read_header(const std::vector<std::string_view>& lines, const std::string& path,
                      const std::vector<std::string>& required, const std::string& what, Diagnostics& errs) {
  CsvHeader h;
  while (h.index < lines.size() && trim(lines[h.index]).empty()) ++h.index;
  if (h.index == lines.size()) throw InputError(SourceLoc{path, 1, 1}, "empty " + what + ": expected a header line");
  h.line = static_cast<int>(h.index) + 1;
  const auto cells = split_plain_csv(lines[h.index]);
  h.ncols = cells.size();
  for (size_t c = 0; c < cells.size(); ++c) {
    const std::string name = to_lower(cells[c].text);
    if (name.empty()) continue;
    if (!h.col.emplace(name, c).second) errs.error({path, h.line, cells[c].col}, "duplicate column '" + name + "'");
  }
  for (const auto& r : required)
    if (!h.col.count(r)) errs.error({path, h.line, 1}, "missing required column '" + r + "' in " + what);
  errs.throw_if_errors();
  return h;
}

// The fields of one data row, or std::nullopt after reporting a row that does not fit
// the header (wrong field count, quotes these plain files never use).
std::optional<std::vector<CsvCell>> row_cells(std::string_view line, const CsvHeader& h, const std::string& path,
                                              int lineno, Diagnostics& errs) {
  if (const size_t q = line.find('"'); q != std::string_view::npos) {
    errs.error({path, lineno, static_cast<int>(q) + 1}, "quoted fields do not occur in this format");
    return std::nullopt;
  }
  auto cells = split_plain_csv(line);
  if (cells.size() != h.ncols) {
    errs.error({path, lineno, 1},
               "expected " + std::to_string(h.ncols) + " fields, found " + std::to_string(cells.size()));
    return std::nullopt;
  }
  return cells;
}

Field field_of(const std::vector<CsvCell>& cells, const CsvHeader& h, const std::string& name) {
  const CsvCell& c = cells[h.col.at(name)];
  return Field{c.text, c.col};
}

// ---- Gavel -------------------------------------------------------------------------

// Positions (0-based) of the fields the reader uses, per layout.
struct GavelLayout {
  size_t fields;
  size_t needs_data_dir, total_steps, scale_factor, arrival_time;
  std::optional<size_t> priority_weight, slo;
};
constexpr GavelLayout kGavelMsr{7, 3, 4, 6, 5, std::nullopt, std::nullopt};
constexpr GavelLayout kGavelPhysical{10, 4, 5, 6, 9, 7, 8};
// Philly's large machines have 8 GPUs, and Gavel's msr traces are Philly VCs.
constexpr int64_t kGavelGpusPerNode = 8;

std::vector<Field> split_tabs(std::string_view line) {
  std::vector<Field> out;
  size_t start = 0;
  while (true) {
    const size_t tab = line.find('\t', start);
    const size_t end = tab == std::string_view::npos ? line.size() : tab;
    out.push_back({line.substr(start, end - start), static_cast<int>(start) + 1});
    if (tab == std::string_view::npos) return out;
    start = tab + 1;
  }
}

// "…/6214e9.trace.gz" -> "vc_6214e9" when the file is named by a Philly VC hash.
std::string gavel_vc_account(const std::string& path) {
  std::string stem = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  for (const char* suffix : {".gz", ".trace"})
    if (stem.size() > std::string(suffix).size() && stem.ends_with(suffix))
      stem.resize(stem.size() - std::string(suffix).size());
  const bool hash = stem.size() == 6 && std::all_of(stem.begin(), stem.end(), [](char c) {
                      return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
                    });
  return hash ? "vc_" + stem : "";
}

}  // namespace

Trace parse_gavel_trace(const std::string& text, const std::string& path, Diagnostics& diags) {
  Trace t;
  t.path = path;
  t.format = "gavel";
  Diagnostics errs;
  const auto lines = split_lines(text);
  const GavelLayout* layout = nullptr;
  int layout_line = 0;
  int64_t zero_steps = 0;
  std::string account;
  for (size_t ln = 0; ln < lines.size() && !errs.full(); ++ln) {
    const int lineno = static_cast<int>(ln) + 1;
    if (trim(lines[ln]).empty()) continue;
    const auto f = split_tabs(lines[ln]);
    if (!layout) {
      if (f.size() != kGavelMsr.fields && f.size() != kGavelPhysical.fields)
        throw InputError(SourceLoc{path, lineno, 1},
                         "expected 7 (msr) or 10 (physical_cluster) tab-separated fields in a Gavel trace, found " +
                             std::to_string(f.size()));
      layout = f.size() == kGavelMsr.fields ? &kGavelMsr : &kGavelPhysical;
      layout_line = lineno;
      if (layout == &kGavelMsr) account = gavel_vc_account(path);
    }
    if (f.size() != layout->fields) {
      errs.error({path, lineno, 1}, "expected " + std::to_string(layout->fields) +
                                        " tab-separated fields (the layout of line " + std::to_string(layout_line) +
                                        "), found " + std::to_string(f.size()));
      continue;
    }
    FieldChecker chk(path, lineno, errs);
    if (trim(f[0].text).empty()) chk.error(f[0], "empty job_type");
    const Field& data_dir = f[layout->needs_data_dir];
    if (trim(data_dir.text) != "0" && trim(data_dir.text) != "1")
      chk.error(data_dir, "needs_data_dir '" + std::string(data_dir.text) + "' must be 0 or 1");
    const auto steps = chk.count(f[layout->total_steps], "total_steps", static_cast<int64_t>(kMaxSeconds));
    const auto scale = chk.count(f[layout->scale_factor], "scale_factor", kMaxGpus);
    if (scale && *scale == 0) chk.error(f[layout->scale_factor], "scale_factor must be at least 1 (GPUs of the job)");
    const auto arrival = chk.seconds(f[layout->arrival_time], "arrival_time");
    if (layout->priority_weight) (void)chk.number(f[*layout->priority_weight], "priority_weight");
    if (layout->slo) (void)chk.number(f[*layout->slo], "SLO");
    if (!chk.ok()) continue;

    Job j;
    j.source_line = lineno;
    j.name = name_token(f[0].text);
    j.profile = j.name;  // Gavel's job type names the model and batch size
    j.account = account;
    j.req.account = account;
    j.submit = SimTime::from_seconds_ceil(*arrival);
    j.duration = SimTime::seconds(*steps);
    if (*steps == 0) ++zero_steps;
    request_gpus(j, *scale, kGavelGpusPerNode);
    t.jobs.push_back(std::move(j));
  }
  errs.throw_if_errors();
  if (t.jobs.empty()) throw InputError(SourceLoc{path, 0, 0}, "no jobs in Gavel trace");
  number_jobs(t);
  t.assumptions.push_back(std::string("Gavel: ") +
                          (layout == &kGavelMsr ? "7-field msr" : "10-field physical_cluster") +
                          " layout; GPUs = scale_factor, submit = arrival_time (seconds from the trace start)");
  t.assumptions.push_back(
      "Gavel: the trace gives training steps, not time (Gavel converts them with per-model V100 throughputs, "
      "oracle_throughputs*.json, that gcsim does not hold): duration is taken as total_steps seconds (1 step/s); "
      "rescale durations before reading run times as real");
  t.assumptions.push_back(shape_assumption("Gavel", kGavelGpusPerNode, "Philly's 8-GPU machines"));
  if (!account.empty())
    t.assumptions.push_back("Gavel: account = " + account + ", the Philly VC the msr file is named after");
  warn_and_assume(t, diags, zero_steps,
                  "Gavel: " + std::to_string(zero_steps) + " jobs have total_steps 0 (duration 0 s)");
  return t;
}

Trace read_gavel_trace(const std::string& path, Diagnostics& diags) {
  return parse_gavel_trace(read_input_file(path), path, diags);
}

// ---- Pollux / Sia ------------------------------------------------------------------

namespace {

// Pollux's workload generator (petuum/adaptdl, osdi21-artifact, simulator/workload.py)
// picks the application from the GPU time of the sampled Philly job: under 1 GPU-hour
// cifar10 or ncf, 1-10 deepspeech2 (half become bert), 10-100 yolov3, 100-1000
// imagenet (jobs of 60 s or more only). gcsim gives each application the geometric
// middle of its class, in GPU-seconds: sqrt(60*3600), sqrt(1h*10h), ...
struct PolluxApp {
  const char* name;
  double gpu_seconds;
  const char* gpu_time_class;
};
constexpr PolluxApp kPolluxApps[] = {
    {"cifar10", 465, "60 s to 1 GPU-hour"},   {"ncf", 465, "60 s to 1 GPU-hour"},
    {"deepspeech2", 11384, "1-10 GPU-hours"}, {"bert", 11384, "1-10 GPU-hours"},
    {"yolov3", 113842, "10-100 GPU-hours"},   {"imagenet", 1138420, "100-1000 GPU-hours"},
};
// Pollux's simulator defaults to 16 nodes of 4 GPUs (simulator.py --num-gpus 4).
constexpr int64_t kPolluxGpusPerNode = 4;

const PolluxApp* pollux_app(std::string_view name) {
  for (const PolluxApp& a : kPolluxApps)
    if (name == a.name) return &a;
  return nullptr;
}

std::string pollux_table_text() {
  std::string out;
  for (const PolluxApp& a : kPolluxApps) {
    if (!out.empty()) out += ", ";
    out +=
        std::string(a.name) + " " + std::to_string(static_cast<int64_t>(a.gpu_seconds)) + " (" + a.gpu_time_class + ")";
  }
  return out;
}

}  // namespace

Trace parse_pollux_workload(const std::string& text, const std::string& path, Diagnostics& diags) {
  (void)diags;
  Trace t;
  t.path = path;
  t.format = "pollux";
  Diagnostics errs;
  const auto lines = split_lines(text);
  const CsvHeader h = read_header(lines, path, {"time", "application", "num_replicas"}, "Pollux workload", errs);
  const bool has_name = h.col.count("name") > 0;
  std::map<std::string, int64_t> per_app;
  for (size_t ln = h.index + 1; ln < lines.size() && !errs.full(); ++ln) {
    const int lineno = static_cast<int>(ln) + 1;
    if (trim(lines[ln]).empty()) continue;
    const auto cells = row_cells(lines[ln], h, path, lineno, errs);
    if (!cells) continue;
    FieldChecker chk(path, lineno, errs);
    const auto time = chk.seconds(field_of(*cells, h, "time"), "time");
    const Field app_f = field_of(*cells, h, "application");
    const PolluxApp* app = pollux_app(trim(app_f.text));
    if (!app)
      chk.error(app_f, "unknown application '" + std::string(app_f.text) +
                           "' (expected cifar10, ncf, deepspeech2, bert, yolov3 or imagenet)");
    const Field rep_f = field_of(*cells, h, "num_replicas");
    const auto replicas = chk.count(rep_f, "num_replicas", kMaxGpus);
    if (replicas && *replicas == 0) chk.error(rep_f, "num_replicas must be at least 1");
    if (!chk.ok()) continue;

    Job j;
    j.source_line = lineno;
    j.name = has_name ? std::string(field_of(*cells, h, "name").text) : std::string();
    if (j.name.empty()) j.name = std::string(app->name) + "-" + std::to_string(t.jobs.size());
    j.profile = app->name;
    j.submit = SimTime::from_seconds_ceil(*time);
    j.duration = SimTime::from_seconds_ceil(app->gpu_seconds / static_cast<double>(*replicas));
    request_gpus(j, *replicas, kPolluxGpusPerNode);
    ++per_app[app->name];
    t.jobs.push_back(std::move(j));
  }
  errs.throw_if_errors();
  if (t.jobs.empty()) throw InputError(SourceLoc{path, h.line + 1, 1}, "no jobs in Pollux workload");
  number_jobs(t);
  t.assumptions.push_back("Pollux: GPUs = num_replicas (the fixed request non-elastic schedulers get), submit = time");
  t.assumptions.push_back(
      "Pollux: the workload has no durations (elastic jobs train to a target); duration = the application's GPU time "
      "/ num_replicas (linear scaling), with GPU-seconds per application the geometric middle of the Philly GPU-time "
      "class Pollux's workload.py draws it from: " +
      pollux_table_text());
  t.assumptions.push_back(shape_assumption("Pollux", kPolluxGpusPerNode, "the Pollux simulator's 4-GPU nodes"));
  return t;
}

Trace read_pollux_workload(const std::string& path, Diagnostics& diags) {
  return parse_pollux_workload(read_input_file(path), path, diags);
}

// ---- Tiresias and Chronus job CSVs -------------------------------------------------

namespace {

struct JobCsvFlavor {
  std::string format;  // "tiresias" or "chronus"
  std::string label;   // "Tiresias" in messages and assumptions
  bool has_user = false;
  int64_t gpus_per_node = 0;
  std::string testbed;  // why that many GPUs per node
};

// Tiresias's cluster_spec.csv is 16 nodes of 4 GPUs; Chronus replays Philly VCs,
// whose large machines have 8.
const JobCsvFlavor kTiresias{"tiresias", "Tiresias", false, 4, "Tiresias's cluster_spec.csv"};
const JobCsvFlavor kChronus{"chronus", "Chronus", true, 8, "Philly's 8-GPU machines"};

Trace parse_job_csv(const std::string& text, const std::string& path, Diagnostics& diags, const JobCsvFlavor& fl) {
  Trace t;
  t.path = path;
  t.format = fl.format;
  Diagnostics errs;
  const auto lines = split_lines(text);
  std::vector<std::string> required = {"job_id", "num_gpu", "submit_time", "duration"};
  if (fl.has_user) required.insert(required.begin() + 1, "user");
  const CsvHeader h = read_header(lines, path, required, fl.label + " job trace", errs);
  const bool has_start = h.col.count("start_time") > 0;
  const bool has_model = h.col.count("model_name") > 0;

  struct Seen {
    int line;
    std::string_view text;
  };
  std::map<int64_t, Seen> seen;
  int64_t repeated = 0, cpu_jobs = 0;
  int first_repeat = 0;
  for (size_t ln = h.index + 1; ln < lines.size() && !errs.full(); ++ln) {
    const int lineno = static_cast<int>(ln) + 1;
    const std::string_view line = trim(lines[ln]);
    if (line.empty()) continue;
    const auto cells = row_cells(lines[ln], h, path, lineno, errs);
    if (!cells) continue;
    FieldChecker chk(path, lineno, errs);
    const Field id_f = field_of(*cells, h, "job_id");
    const auto id = chk.count(id_f, "job_id", std::numeric_limits<int64_t>::max());
    const auto gpus = chk.count(field_of(*cells, h, "num_gpu"), "num_gpu", kMaxGpus);
    const auto submit = chk.seconds(field_of(*cells, h, "submit_time"), "submit_time");
    const auto duration = chk.seconds(field_of(*cells, h, "duration"), "duration");
    std::optional<double> start;
    if (has_start) {
      const Field st = field_of(*cells, h, "start_time");
      start = chk.seconds(st, "start_time");
      if (start && submit && *start < *submit) chk.error(st, "start_time is before submit_time");
    }
    if (!chk.ok()) continue;
    // A verbatim repeat of an earlier row is a copy, not a second job (tf_job.csv has one).
    if (const auto it = seen.find(*id); it != seen.end()) {
      if (it->second.text == line) {
        if (repeated++ == 0) first_repeat = lineno;
        continue;
      }
      chk.error(id_f, "duplicate job_id " + std::to_string(*id) + " (first at line " + std::to_string(it->second.line) +
                          ", with other values)");
      continue;
    }
    seen.emplace(*id, Seen{lineno, line});

    Job j;
    j.source_line = lineno;
    const std::string model = has_model ? name_token(field_of(*cells, h, "model_name").text) : std::string();
    j.name = (model.empty() ? fl.format : model) + "-" + std::to_string(*id);
    j.profile = model;
    if (fl.has_user) {
      j.user = std::string(trim(field_of(*cells, h, "user").text));
      j.account = j.user;
      j.req.account = j.account;
    }
    j.submit = SimTime::from_seconds_ceil(*submit);
    j.duration = SimTime::from_seconds_ceil(*duration);
    if (start) j.recorded_start = SimTime::from_seconds_ceil(*start);
    if (*gpus == 0) ++cpu_jobs;
    request_gpus(j, *gpus, fl.gpus_per_node);
    t.jobs.push_back(std::move(j));
  }
  errs.throw_if_errors();
  if (t.jobs.empty()) throw InputError(SourceLoc{path, h.line + 1, 1}, "no jobs in " + fl.label + " job trace");
  number_jobs(t);
  warn_and_assume(t, diags, repeated,
                  fl.label + ": dropped " + std::to_string(repeated) +
                      " rows that repeat an earlier row verbatim (first at line " + std::to_string(first_repeat) + ")");
  t.assumptions.push_back(fl.label +
                          ": GPUs = num_gpu, submit = submit_time, duration = duration (seconds); jobs are "
                          "numbered in submit order, the name keeps model_name-job_id");
  if (fl.has_user)
    t.assumptions.push_back(fl.label +
                            ": user = account = the user column (the Philly VC); the SLO columns "
                            "(expect_time_list, expect_value_list, best_effort, job_type) are not modelled");
  if (has_start) t.assumptions.push_back(fl.label + ": start_time is kept as the recorded start (replay report only)");
  if (cpu_jobs > 0)
    t.assumptions.push_back(fl.label + ": " + std::to_string(cpu_jobs) +
                            " jobs have num_gpu 0: one-task CPU jobs with no GPU request");
  t.assumptions.push_back(shape_assumption(fl.label, fl.gpus_per_node, fl.testbed));
  return t;
}

}  // namespace

Trace parse_tiresias_csv(const std::string& text, const std::string& path, Diagnostics& diags) {
  return parse_job_csv(text, path, diags, kTiresias);
}
Trace read_tiresias_csv(const std::string& path, Diagnostics& diags) {
  return parse_tiresias_csv(read_input_file(path), path, diags);
}
Trace parse_chronus_csv(const std::string& text, const std::string& path, Diagnostics& diags) {
  return parse_job_csv(text, path, diags, kChronus);
}
Trace read_chronus_csv(const std::string& path, Diagnostics& diags) {
  return parse_chronus_csv(read_input_file(path), path, diags);
}

// ---- bare duration lists -----------------------------------------------------------

Trace parse_duration_list(const std::string& text, const std::string& path, Diagnostics& diags) {
  (void)diags;
  Trace t;
  t.path = path;
  t.format = "duration-list";
  Diagnostics errs;
  const auto lines = split_lines(text);
  size_t first = 0;
  while (first < lines.size() && trim(lines[first]).empty()) ++first;
  const std::string head = first < lines.size() ? to_lower(trim(lines[first])) : "";
  if (head != "duration" && head != "runtime")
    throw InputError(SourceLoc{path, static_cast<int>(first) + 1, 1},
                     "a duration list has one column headed 'duration' or 'runtime'");
  for (size_t ln = first + 1; ln < lines.size() && !errs.full(); ++ln) {
    const int lineno = static_cast<int>(ln) + 1;
    const std::string_view line = lines[ln];
    if (trim(line).empty()) continue;
    if (const size_t comma = line.find(','); comma != std::string_view::npos) {
      errs.error({path, lineno, static_cast<int>(comma) + 1}, "a duration list has one value per line");
      continue;
    }
    FieldChecker chk(path, lineno, errs);
    const auto d = chk.seconds(Field{line, static_cast<int>(line.find_first_not_of(" \t")) + 1}, head);
    if (!chk.ok()) continue;
    Job j;
    j.source_line = lineno;
    j.name = "d" + std::to_string(t.jobs.size() + 1);
    j.duration = SimTime::from_seconds_ceil(*d);
    request_gpus(j, 1, 1);
    t.jobs.push_back(std::move(j));
  }
  errs.throw_if_errors();
  if (t.jobs.empty()) throw InputError(SourceLoc{path, static_cast<int>(first) + 2, 1}, "no values in duration list");
  number_jobs(t);
  t.assumptions.push_back(
      "duration list: the file is only run times (no arrivals, no sizes), not a job trace; each value is a 1-GPU job "
      "submitted at t=0, so a replay is one batch, not a queue");
  return t;
}

Trace read_duration_list(const std::string& path, Diagnostics& diags) {
  return parse_duration_list(read_input_file(path), path, diags);
}

}  // namespace gcsim
