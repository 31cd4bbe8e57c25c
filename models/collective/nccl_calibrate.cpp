// nccl-tests log reader and the per-link-class latency/efficiency fit (nccl_calibrate.hpp).
#include "models/collective/nccl_calibrate.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "sim/core/diagnostics.hpp"
#include "sim/core/input_file.hpp"

namespace gcsim {

namespace {

struct Token {
  std::string text;
  int col = 0;  // 1-based
};

std::vector<Token> tokens(const std::string& line) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i >= line.size()) break;
    const size_t from = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    out.push_back({line.substr(from, i - from), static_cast<int>(from) + 1});
  }
  return out;
}

bool to_int(const std::string& s, int64_t* v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

bool to_double(const std::string& s, double* v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size() && std::isfinite(*v);
}

// The collective a `*_perf` word names (a path such as ./build/all_reduce_perf is fine).
std::optional<Collective> perf_binary(const std::string& word) {
  const auto slash = word.find_last_of('/');
  const std::string base = slash == std::string::npos ? word : word.substr(slash + 1);
  if (base.size() <= 5 || base.compare(base.size() - 5, 5, "_perf") != 0) return std::nullopt;
  return parse_collective(base);
}

// The value after "NAME set by environment to " in an NCCL INFO line.
std::optional<std::string> env_setting(const std::string& line, const std::string& name) {
  const std::string key = name + " set by environment to ";
  const auto at = line.find(key);
  if (at == std::string::npos) return std::nullopt;
  const auto t = tokens(line.substr(at + key.size()));
  if (t.empty()) return std::nullopt;
  return t[0].text;
}

double rel_err(double predicted, double measured) { return predicted / measured - 1; }

double rms(const std::vector<double>& v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s / static_cast<double>(v.size()));
}

}  // namespace

NcclTestsLog parse_nccl_tests_log(const std::string& text, const std::string& path,
                                  std::optional<Collective> collective) {
  NcclTestsLog log;
  log.path = path;
  Diagnostics d;
  std::optional<Collective> from_header, from_command;
  std::istringstream is(text);
  std::string line;
  int lineno = 0;
  auto at = [&](int col) { return SourceLoc{path, lineno, col}; };
  while (std::getline(is, line) && !d.full()) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::vector<Token> t = tokens(line);
    if (t.empty()) continue;
    if (line.find("NCCL INFO") != std::string::npos || line.find("NCCL WARN") != std::string::npos) {
      if (auto v = env_setting(line, "NCCL_ALGO")) log.algo = parse_nccl_algo(*v);
      if (auto v = env_setting(line, "NCCL_PROTO")) log.proto = parse_nccl_proto(*v);
      continue;
    }
    if (t[0].text[0] == '#') {
      // `#` may stand alone or be glued to the first word.
      std::vector<Token> w = t;
      if (w[0].text == "#") w.erase(w.begin());
      else w[0] = {w[0].text.substr(1), w[0].col + 1};
      if (w.empty()) continue;
      if (w[0].text == "nThread") {
        for (size_t i = 0; i + 1 < w.size(); i += 2) {
          if (w[i].text != "nThread" && w[i].text != "nGpus") continue;
          int64_t v = 0;
          if (!to_int(w[i + 1].text, &v) || v < 1) {
            d.error(at(w[i + 1].col), "expected a positive integer for " + w[i].text + ", got '" + w[i + 1].text + "'");
            continue;
          }
          (w[i].text == "nThread" ? log.threads : log.gpus_per_thread) = static_cast<int>(v);
        }
        continue;
      }
      if (w.size() >= 4 && w[0].text == "Collective" && w[1].text == "test" && w[2].text == "starting:") {
        from_header = perf_binary(w[3].text);
        if (!from_header) from_header = parse_collective(w[3].text);
        if (!from_header) d.error(at(w[3].col), "unknown collective '" + w[3].text + "'");
        continue;
      }
      if (w[0].text == "Rank") {
        size_t dev = 0;
        while (dev < w.size() && w[dev].text != "device") ++dev;
        const auto bracket = line.find(']');
        if (dev + 1 >= w.size() || bracket == std::string::npos) {
          d.error(at(w[0].col), "expected '#  Rank N ... device D [0xBUS] NAME'");
          continue;
        }
        std::string name = line.substr(bracket + 1);
        name.erase(0, name.find_first_not_of(" \t"));
        name.erase(name.find_last_not_of(" \t") + 1);
        log.devices.push_back(name);
        continue;
      }
      if (!from_command)
        for (const Token& k : w)
          if ((from_command = perf_binary(k.text))) break;
      continue;
    }
    int64_t size = 0;
    if (!to_int(t[0].text, &size)) {
      // Not a row: a pasted command line, mpirun chatter.
      if (!from_command)
        for (const Token& k : t)
          if ((from_command = perf_binary(k.text))) break;
      continue;
    }
    // size count type redop root | time algbw busbw #wrong | [time algbw busbw #wrong]
    if (t.size() != 9 && t.size() != 13) {
      d.error(at(t[0].col), "expected 9 or 13 columns (size count type redop root time algbw busbw #wrong, "
                            "then the in-place time algbw busbw #wrong), got " + std::to_string(t.size()));
      continue;
    }
    NcclTestsRow r;
    r.line = lineno;
    r.size = size;
    const size_t before = d.error_count();
    auto integer = [&](const Token& k, const char* what, int64_t lo) {
      int64_t v = 0;
      if (!to_int(k.text, &v) || v < lo)
        d.error(at(k.col), std::string("expected ") + (lo >= 0 ? "a non-negative integer" : "an integer") + " for " +
                               what + ", got '" + k.text + "'");
      return v;
    };
    auto number = [&](const Token& k, const char* what) {
      double v = 0;
      if (!to_double(k.text, &v) || v < 0) d.error(at(k.col), std::string("expected a number for ") + what + ", got '" + k.text + "'");
      return v;
    };
    auto wrong = [&](const Token& k) -> std::optional<int64_t> {
      if (k.text == "N/A") return std::nullopt;
      return integer(k, "#wrong", 0);
    };
    if (size < 0) d.error(at(t[0].col), "expected a non-negative integer for size, got '" + t[0].text + "'");
    r.count = integer(t[1], "count", 0);
    r.type = t[2].text;
    r.redop = t[3].text;
    r.root = static_cast<int>(integer(t[4], "root", -1));
    r.time_us = number(t[5], "time");
    r.algbw = number(t[6], "algbw");
    r.busbw = number(t[7], "busbw");
    r.wrong = wrong(t[8]);
    if (t.size() == 13) {
      r.has_in_place = true;
      r.in_place_time_us = number(t[9], "in-place time");
      r.in_place_algbw = number(t[10], "in-place algbw");
      r.in_place_busbw = number(t[11], "in-place busbw");
      (void)wrong(t[12]);
    }
    if (d.error_count() == before) log.rows.push_back(r);
  }
  const SourceLoc whole{path, 0, 0};
  if (!d.has_errors()) {
    if (log.devices.empty()) d.error(whole, "no '#  Rank N ... device' lines: cannot tell the communicator's GPUs");
    if (log.rows.empty()) d.error(whole, "no result rows (size count type redop root time algbw busbw #wrong)");
  }
  if (collective) log.collective = *collective;
  else if (from_header) log.collective = *from_header;
  else if (from_command) log.collective = *from_command;
  else if (!d.has_errors())
    d.error(whole, "cannot tell the collective: no '# Collective test starting:' line or '*_perf' command; pass --collective");
  d.throw_if_errors();
  return log;
}

NcclTestsLog load_nccl_tests_log(const std::string& path, std::optional<Collective> collective) {
  return parse_nccl_tests_log(read_input_file(path), path, collective);
}

CommSpec nccl_tests_comm(const Cluster& cluster, const NcclTestsLog& log, const CommOptions& base) {
  CommSpec spec;
  spec.cluster = &cluster;
  spec.options = base;
  const int want = log.ranks();
  for (int n = 0; n < static_cast<int>(cluster.nodes.size()) && static_cast<int>(spec.gpus.size()) < want; ++n) {
    const int have = static_cast<int>(cluster.tmpl(n).gpus.size());
    for (int g = 0; g < have && static_cast<int>(spec.gpus.size()) < want; ++g) spec.gpus.push_back({n, g});
  }
  if (static_cast<int>(spec.gpus.size()) < want)
    throw InputError(SourceLoc{log.path, 0, 0}, "the log has " + std::to_string(want) + " ranks but the topology has " +
                                                    std::to_string(spec.gpus.size()) + " GPUs");
  spec.options.gpus_per_process = std::max(1, std::min(log.gpus_per_thread, want));
  return spec;
}

NcclCalibration fit_nccl_calibration(const NcclTuning& base, const std::vector<NcclCalibrationRun>& runs) {
  NcclCalibration cal;
  cal.tuning = base;
  // The model's parts of every row with the link terms neutral: L (latency + launch) and S/B.
  NcclTuning neutral = base;
  neutral.link_calibration = {};
  for (const NcclCalibrationRun& run : runs) {
    std::unique_ptr<NcclModel> model;
    try {
      model = std::make_unique<NcclModel>(neutral, run.spec);
    } catch (const std::invalid_argument& e) {
      throw InputError(SourceLoc{run.log->path, 0, 0}, e.what());
    }
    const NcclLinkClass cls = model->link_class();
    const NcclLinkCalibration& old = base.link_calibration[static_cast<size_t>(cls)];
    for (const NcclTestsRow& r : run.log->rows) {
      if (!(r.time_us > 0)) continue;
      const CollectiveCost c = nccl_cost(*model, run.log->collective, r.size, run.log->algo, run.log->proto);
      NcclCalibrationRow row;
      row.where = run.log->path + ":" + std::to_string(r.line);
      row.collective = run.log->collective;
      row.bytes = r.size;
      row.link_class = cls;
      row.algo = c.algo;
      row.proto = c.proto;
      row.measured_us = r.time_us;
      row.latency_part_us = c.latency_us;
      row.bandwidth_part_us = c.time_us - c.latency_us;
      row.before_us = row.latency_part_us + old.latency_us + row.bandwidth_part_us / old.bw_efficiency;
      cal.rows.push_back(row);
    }
  }
  std::vector<double> all_before, all_after;
  for (int k = 0; k < kNcclLinkClasses; ++k) {
    const auto cls = static_cast<NcclLinkClass>(k);
    std::vector<NcclCalibrationRow*> rows;
    for (auto& r : cal.rows)
      if (r.link_class == cls) rows.push_back(&r);
    if (rows.empty()) continue;
    const std::string name(nccl_link_class_name(cls));
    const SourceLoc whole{rows.front()->where.substr(0, rows.front()->where.rfind(':')), 0, 0};
    bool spread = false;
    for (const auto* r : rows) spread = spread || r->bandwidth_part_us != rows.front()->bandwidth_part_us;
    if (rows.size() < 2 || !spread)
      throw InputError(whole, "cannot fit the " + name + " terms: need rows of at least two different sizes, have " +
                                  std::to_string(rows.size()) + " row(s)");
    // Weighted least squares: rows (1, x_i) / y_i against (y_i - L_i) / y_i.
    const auto n = static_cast<Eigen::Index>(rows.size());
    Eigen::MatrixXd a(n, 2);
    Eigen::VectorXd y(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      const NcclCalibrationRow& r = *rows[static_cast<size_t>(i)];
      const double w = 1 / r.measured_us;
      a(i, 0) = w;
      a(i, 1) = r.bandwidth_part_us * w;
      y(i) = (r.measured_us - r.latency_part_us) * w;
    }
    const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(a);
    if (qr.rank() < 2)
      throw InputError(whole, "cannot fit the " + name + " terms: the rows do not separate latency from bandwidth");
    const Eigen::Vector2d x = qr.solve(y);
    if (!(x(1) > 0) || !std::isfinite(x(0)))
      throw InputError(whole, "cannot fit the " + name + " terms: the fit gives a non-positive bandwidth slope (" +
                                  std::to_string(x(1)) + ")");
    NcclClassFit fit;
    fit.link_class = cls;
    fit.rows = static_cast<int>(rows.size());
    fit.before = base.link_calibration[static_cast<size_t>(k)];
    fit.after = {x(0), 1 / x(1)};
    cal.tuning.link_calibration[static_cast<size_t>(k)] = fit.after;
    std::vector<double> eb, ea;
    for (auto* r : rows) {
      r->after_us = r->latency_part_us + fit.after.latency_us + r->bandwidth_part_us / fit.after.bw_efficiency;
      eb.push_back(rel_err(r->before_us, r->measured_us));
      ea.push_back(rel_err(r->after_us, r->measured_us));
    }
    fit.rms_before = rms(eb);
    fit.rms_after = rms(ea);
    all_before.insert(all_before.end(), eb.begin(), eb.end());
    all_after.insert(all_after.end(), ea.begin(), ea.end());
    cal.classes.push_back(fit);
  }
  cal.rms_before = rms(all_before);
  cal.rms_after = rms(all_after);
  return cal;
}

std::string format_nccl_calibration(const NcclCalibration& cal) {
  std::ostringstream os;
  char buf[1024];
  int w = 3;
  for (const auto& r : cal.rows) w = std::max(w, static_cast<int>(r.where.size()));
  std::snprintf(buf, sizeof buf, "%-*s %-13s %11s  %-6s  %-13s %10s %9s %9s  %10s  %9s\n", w, "row", "collective", "bytes",
                "class", "algo/proto", "measured", "before", "after", "err before", "err after");
  os << buf;
  for (const auto& r : cal.rows) {
    const std::string ap = r.algo + "/" + r.proto;
    std::snprintf(buf, sizeof buf, "%-*s %-13s %11lld  %-6s  %-13s %10.2f %9.2f %9.2f  %+9.1f%%  %+8.1f%%\n",
                  w, r.where.c_str(), std::string(collective_name(r.collective)).c_str(), static_cast<long long>(r.bytes),
                  std::string(nccl_link_class_name(r.link_class)).c_str(), ap.c_str(), r.measured_us, r.before_us,
                  r.after_us, 100 * rel_err(r.before_us, r.measured_us), 100 * rel_err(r.after_us, r.measured_us));
    os << buf;
  }
  os << "\nclass   rows  latency_us before -> after  bw_efficiency before -> after  RMS rel. error before -> after\n";
  for (const auto& f : cal.classes) {
    std::snprintf(buf, sizeof buf, "%-6s %5d  %10.3f -> %-10.3f  %10.4f -> %-10.4f          %6.1f%% -> %.1f%%\n",
                  std::string(nccl_link_class_name(f.link_class)).c_str(), f.rows, f.before.latency_us,
                  f.after.latency_us, f.before.bw_efficiency, f.after.bw_efficiency, 100 * f.rms_before,
                  100 * f.rms_after);
    os << buf;
  }
  std::snprintf(buf, sizeof buf, "RMS relative time error over %zu rows: %.1f%% -> %.1f%%\n", cal.rows.size(),
                100 * cal.rms_before, 100 * cal.rms_after);
  os << buf;
  return os.str();
}

std::string nccl_calibration_yaml(const std::string& base_text, const std::string& base_path,
                                  const NcclCalibration& cal, const std::string& note) {
  std::vector<std::string> lines;
  {
    std::istringstream is(base_text);
    std::string l;
    while (std::getline(is, l)) lines.push_back(l);
  }
  auto top_level = [](const std::string& l) { return !l.empty() && l[0] != ' ' && l[0] != '#'; };
  size_t cal_at = lines.size();
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].rfind("calibration:", 0) == 0) cal_at = i;
  if (cal_at == lines.size()) throw InputError(SourceLoc{base_path, 0, 0}, "no 'calibration:' section to extend");
  size_t end = cal_at + 1;
  while (end < lines.size() && !top_level(lines[end])) ++end;
  // Drop an earlier links block (and the comment lines right above it).
  std::vector<std::string> section(lines.begin() + static_cast<std::ptrdiff_t>(cal_at) + 1,
                                   lines.begin() + static_cast<std::ptrdiff_t>(end));
  for (size_t i = 0; i < section.size(); ++i) {
    if (section[i].rfind("  links:", 0) != 0) continue;
    size_t from = i, to = i + 1;
    while (from > 0 && section[from - 1].rfind("  #", 0) == 0 && section[from - 1].find("gcsim calibrate") != std::string::npos) --from;
    while (to < section.size() && section[to].rfind("    ", 0) == 0) ++to;
    section.erase(section.begin() + static_cast<std::ptrdiff_t>(from), section.begin() + static_cast<std::ptrdiff_t>(to));
    break;
  }
  while (!section.empty() && section.back().find_first_not_of(' ') == std::string::npos) section.pop_back();
  std::istringstream ns(note);
  for (std::string l; std::getline(ns, l);) section.push_back("  # " + l);
  section.push_back("  links:");
  char buf[256];
  for (int k = 0; k < kNcclLinkClasses; ++k) {
    const NcclLinkCalibration& lc = cal.tuning.link_calibration[static_cast<size_t>(k)];
    std::snprintf(buf, sizeof buf, "    %s: {latency_us: %.10g, bw_efficiency: %.10g}",
                  std::string(nccl_link_class_name(static_cast<NcclLinkClass>(k))).c_str(), lc.latency_us,
                  lc.bw_efficiency);
    section.push_back(buf);
  }
  std::string out;
  for (size_t i = 0; i <= cal_at; ++i) out += lines[i] + "\n";
  for (const auto& l : section) out += l + "\n";
  for (size_t i = end; i < lines.size(); ++i) out += lines[i] + "\n";
  const NcclTuning check = parse_nccl_tuning(out, base_path);
  for (int k = 0; k < kNcclLinkClasses; ++k) {
    const auto& a = check.link_calibration[static_cast<size_t>(k)];
    const auto& b = cal.tuning.link_calibration[static_cast<size_t>(k)];
    if (std::abs(a.latency_us - b.latency_us) > 1e-6 * (1 + std::abs(b.latency_us)) ||
        std::abs(a.bw_efficiency - b.bw_efficiency) > 1e-6 * b.bw_efficiency)
      throw std::logic_error("nccl_calibration_yaml: the written terms do not read back");
  }
  return out;
}

}  // namespace gcsim
