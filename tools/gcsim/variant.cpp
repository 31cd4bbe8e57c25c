#include "tools/gcsim/variant.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "models/placement/placement.hpp"
#include "models/sched/registry.hpp"
#include "sim/core/input_file.hpp"
#include "sim/core/parallel.hpp"
#include "sim/core/units.hpp"
#include "tools/gcsim/interrupt.hpp"

namespace gcsim {

bool valid_variant_name(const std::string& n) {
  if (n.empty() || n.size() > 64 || n == "." || n == "..") return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == '+';
  });
}

std::string Variant::settings_text() const {
  std::string s;
  for (const auto& [k, v] : settings) s += (s.empty() ? "" : ",") + k + "=" + v;
  return s;
}

Variant parse_variant(const std::string& text, Diagnostics& d, const SourceLoc& where) {
  Variant v;
  const auto colon = text.find(':');
  v.name = text.substr(0, colon);
  if (!valid_variant_name(v.name))
    d.error(where, "variant '" + text + "': the name before ':' must be 1-64 of A-Z a-z 0-9 - _ . + (it names a directory)");
  if (colon == std::string::npos) return v;
  for (auto item : split(std::string_view(text).substr(colon + 1), ',')) {
    const std::string kv = std::string(trim(item));
    const auto eq = kv.find('=');
    if (kv.empty() || eq == std::string::npos || eq == 0) {
      d.error(where, "variant '" + v.name + "': '" + kv + "' is not key=value");
      continue;
    }
    v.settings.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return v;
}

RunSpec apply_variant(const RunSpec& base, const Variant& v, Diagnostics& d, const SourceLoc& where) {
  RunSpec s = base;
  const std::string who = "variant '" + v.name + "': ";
  std::vector<std::pair<std::string, std::string>> policy_keys;
  const SourceLoc* policy_key_at = &where;
  for (size_t i = 0; i < v.settings.size(); ++i) {
    const std::string& key = v.settings[i].first;
    const std::string& value = v.settings[i].second;
    const SourceLoc& at = i < v.setting_locs.size() ? v.setting_locs[i] : where;
    auto bad = [&](const std::string& why) { d.error(at, who + key + "=" + value + ": " + why); };
    if (key == "policy") {
      const auto& known = policy_list();
      if (std::none_of(known.begin(), known.end(), [&](const PolicyInfo& p) { return p.name == value; }))
        bad("unknown policy (see 'gcsim policies')");
      s.policy = value;
    } else if (key == "binding") {
      if (!parse_placement_mode(value)) bad("unknown binding mode");
      s.binding = value;
    } else if (key == "seed") {
      const auto n = parse_integer(value);
      if (!n || *n < 0) bad("expected a non-negative integer");
      else s.seed = static_cast<uint64_t>(*n);
    } else if (key == "runtime") {
      if (value != "none" && value != "step") bad("expected none or step");
      s.runtime_model = value;
    } else if (key == "cluster") {
      // Another cluster description (another GPU type, another fabric): read by prepare_run.
      if (value.empty()) bad("expected a cluster file");
      s.cluster = value;
    } else if (key == "profiles") {
      s.profiles = value;
    } else if (key == "reference") {
      if (value != "ideal" && value != "as-recorded") bad("expected ideal or as-recorded");
      s.reference = value;
    } else if (key == "contention") {
      if (value != "on" && value != "off") bad("expected on or off");
      s.no_contention = value == "off";
    } else if (key == "scale") {
      const auto x = parse_non_negative_number(value);
      if (!x || *x <= 0) bad("expected a positive arrival-rate factor");
      else s.window.scale_arrivals = base.window.scale_arrivals * *x;
    } else if (key == "nodes" || key == "nodes+" || key == "nodes-") {
      const auto n = parse_integer(value);
      if (!n || *n < 0 || *n > 1'000'000) {
        bad("expected a node count");
        continue;
      }
      // Relative counts resolve against the cluster once it is read: stored as a delta.
      if (key == "nodes") s.node_count = static_cast<int>(*n);
      else s.node_delta = static_cast<int>(key == "nodes+" ? *n : -*n);
    } else if (key == "nic") {
      const auto bps = units::parse_bandwidth_bps(value);
      if (!bps || *bps <= 0) bad("expected a line rate such as 200Gbps or 25GB/s");
      else s.nic_bps = *bps;
    } else {
      if (policy_keys.empty()) policy_key_at = &at;
      policy_keys.emplace_back(key, value);
    }
  }
  if (!policy_keys.empty() && s.policy != "slurm")
    d.error(*policy_key_at, who + "'" + policy_keys.front().first + "' is neither a variant key nor a parameter of policy " +
                       s.policy + " (SchedulerParameters keys need policy=slurm)");
  for (const auto& [k, v2] : policy_keys) s.overrides[k] = v2;
  return s;
}

int worker_threads(int asked, size_t n) {
  if (asked > 0) return asked;
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(1, std::min<int>(hw, static_cast<int>(n)));
}

VariantResults run_variants(size_t n, int threads, const std::function<std::unique_ptr<PreparedRun>(size_t)>& prepare,
                            const std::function<std::string(size_t)>& dir_of,
                            const std::function<std::string(size_t)>& name_of,
                            const std::function<std::string(size_t)>& settings_of, bool progress_bar,
                            const std::string& progress_unit) {
  VariantResults res;
  res.metrics.resize(n);
  res.errors.resize(n);
  std::vector<std::atomic<size_t>> done(n), total(n);
  std::atomic<size_t> finished{0};
  std::atomic<bool> all_completed{true};
  std::mutex draw;
  ProgressBar bar(progress_bar && ::isatty(STDERR_FILENO), progress_unit);
  // Many variants: the bar counts variants; a few: the jobs of all of them.
  const bool by_variant = n > 8;
  auto redraw = [&] {
    size_t dn = 0, tt = 0;
    if (by_variant) {
      dn = finished.load();
      tt = n;
    } else {
      for (size_t i = 0; i < n; ++i) {
        dn += done[i].load();
        tt += total[i].load();
      }
    }
    std::lock_guard<std::mutex> lock(draw);
    bar.update(dn, tt);
  };
  auto run_one = [&](size_t i) {
    try {
      std::unique_ptr<PreparedRun> p = prepare(i);
      total[i] = p->trace.jobs.size();
      const RunOutput r = execute_run(
          *p, dir_of(i),
          [&, i](size_t dn, size_t tt) {
            done[i] = dn;
            total[i] = tt;
            if (!by_variant) redraw();
          },
          interrupt_flag());
      if (!r.result.completed) all_completed = false;
      res.metrics[i] = variant_metrics(name_of(i), settings_of(i), p->cluster, p->trace, r.outcomes);
    } catch (const InputError& e) {
      res.errors[i] = e.diagnostics().format();
      all_completed = false;
    } catch (const std::exception& e) {
      res.errors[i] = e.what();
      all_completed = false;
    }
    ++finished;
    redraw();
  };
  for_each_index(n, threads, run_one);
  res.all_completed = all_completed;
  return res;
}

}  // namespace gcsim
