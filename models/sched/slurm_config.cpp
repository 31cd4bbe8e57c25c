#include "models/sched/slurm_config.hpp"

#include <cstdio>
#include <set>

#include "sim/core/input_file.hpp"
#include "sim/workload/slurm_time.hpp"

namespace gcsim {

std::optional<SimTime> parse_slurm_minutes(const std::string& s) { return slurm_time::parse_time_limit(s); }

namespace {

std::string fmt_s(SimTime t) {
  if (t == SimTime::infinite()) return "infinite";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.6g", t.to_seconds());
  return buf;
}

struct Reader {
  const Cluster& c;
  Diagnostics& d;
  std::string where = "SchedulerParameters";
  SourceLoc loc() const { return c.slurm_param_loc(where); }
  std::optional<int64_t> integer(const std::string& key, const std::string& v) {
    auto n = parse_integer(v);
    if (!n) d.error(loc(), key + "=" + v + ": expected an integer");
    return n;
  }
  std::optional<SimTime> seconds(const std::string& key, const std::string& v) {
    auto x = parse_non_negative_number(v);
    if (!x) {
      if (v == "-1") return SimTime::infinite();
      d.error(loc(), key + "=" + v + ": expected seconds");
      return std::nullopt;
    }
    return SimTime::from_seconds_ceil(*x);
  }
};

/// "12.5", "-4.963": seconds with an optional sign (the magnitude rounded up to the
/// microsecond, as every other time here).
std::optional<SimTime> signed_seconds(const std::string& item) {
  const bool neg = !item.empty() && item[0] == '-';
  auto n = parse_non_negative_number(neg ? item.substr(1) : item);
  if (!n) return std::nullopt;
  const SimTime t = SimTime::from_seconds_ceil(*n);
  return neg ? SimTime::us(-t.count_us()) : t;
}

}  // namespace

SlurmSchedConfig read_slurm_sched_config(const Cluster& cluster, const std::map<std::string, std::string>& overrides,
                                         Diagnostics& diags) {
  SlurmSchedConfig cfg;
  Reader r{cluster, diags};
  auto param = [&](const std::string& k) { return cluster.slurm_param(k); };
  if (auto v = param("SchedulerType")) cfg.backfill = to_lower(*v) != "sched/builtin";
  if (auto v = param("OverTimeLimit")) {
    r.where = "OverTimeLimit";
    if (to_lower(*v) == "unlimited") cfg.over_time_limit = SimTime::infinite();
    else if (auto n = r.integer("OverTimeLimit", *v)) cfg.over_time_limit = SimTime::seconds(60 * *n);
    r.where = "SchedulerParameters";
  }
  if (auto v = param("TopologyPlugin")) cfg.topology_tree = to_lower(*v) == "topology/tree";
  if (auto v = param("TopologyParam")) cfg.topo_optional = to_lower(*v).find("topooptional") != std::string::npos;
  if (auto v = param("SelectTypeParameters")) {
    const std::string l = to_lower(*v);
    cfg.cr_socket = l.find("cr_socket") != std::string::npos;
    cfg.cr_lln = l.find("cr_lln") != std::string::npos;
  }

  std::map<std::string, std::string> opts;
  if (auto v = param("SchedulerParameters"))
    for (auto item : split(*v, ',')) {
      item = trim(item);
      if (item.empty()) continue;
      const auto eq = item.find('=');
      opts[to_lower(item.substr(0, eq))] = eq == std::string_view::npos ? "" : std::string(item.substr(eq + 1));
    }
  for (const auto& [k, v] : overrides) opts[to_lower(k)] = v;

  static const std::set<std::string> kIgnored = {  // accepted, no effect on decisions gcsim makes
      "bf_yield_interval", "bf_yield_sleep", "bf_max_time", "max_rpc_cnt", "max_sched_time", "sched_min_interval",
      "bf_node_space_size", "defer", "bf_one_resv_per_job", "bf_busy_nodes", "bf_running_job_reserve",
      "bf_licenses", "bf_hetjob_prio", "bf_hetjob_immediate", "bf_ignore_newly_avail_nodes", "nohold_on_prolog_fail",
      "kill_invalid_depend", "enable_user_top", "bf_allow_magnetic_slot", "max_depend_depth", "max_array_tasks"};
  for (const auto& opt : opts) {
    const auto& k = opt.first;
    const auto& v = opt.second;
    auto as_int = [&](int& out) {
      if (auto n = r.integer(k, v)) out = static_cast<int>(*n);
    };
    auto as_sec = [&](SimTime& out) {
      if (auto t = r.seconds(k, v)) out = *t;
    };
    auto as_signed = [&](SimTime& out) {
      if (auto t = signed_seconds(v)) out = *t;
      else diags.error(r.loc(), k + "=" + v + ": expected seconds");
    };
    if (k == "batch_sched_delay") as_sec(cfg.batch_sched_delay);
    else if (k == "sched_interval") as_sec(cfg.sched_interval);
    else if (k == "default_queue_depth") as_int(cfg.default_queue_depth);
    else if (k == "partition_job_depth") as_int(cfg.partition_job_depth);
    else if (k == "sched_max_job_start") as_int(cfg.sched_max_job_start);
    else if (k == "bf_interval") as_sec(cfg.bf_interval);
    else if (k == "bf_window") {
      if (auto n = r.integer(k, v)) cfg.bf_window = SimTime::seconds(60 * *n);
    } else if (k == "bf_resolution") as_sec(cfg.bf_resolution);
    else if (k == "bf_max_job_test") as_int(cfg.bf_max_job_test);
    else if (k == "bf_max_job_start") as_int(cfg.bf_max_job_start);
    else if (k == "bf_max_job_user") as_int(cfg.bf_max_job_user);
    else if (k == "bf_max_job_part") as_int(cfg.bf_max_job_part);
    else if (k == "bf_max_job_user_part") as_int(cfg.bf_max_job_user_part);
    else if (k == "bf_max_job_assoc") as_int(cfg.bf_max_job_assoc);
    else if (k == "bf_max_job_array_resv") as_int(cfg.bf_max_job_array_resv);
    else if (k == "bf_min_age_reserve") as_sec(cfg.bf_min_age_reserve);
    else if (k == "bf_min_prio_reserve") {
      if (auto n = r.integer(k, v)) cfg.bf_min_prio_reserve = *n;
    } else if (k == "bf_job_part_count_reserve") as_int(cfg.bf_job_part_count_reserve);
    else if (k == "bf_continue") cfg.bf_continue = true;
    else if (k == "bf_window_linear") as_int(cfg.bf_window_linear);
    else if (k == "max_switch_wait") as_sec(cfg.max_switch_wait);
    else if (k == "pack_serial_at_end") cfg.pack_serial_at_end = true;
    // timer plumbing; the start and phases may be negative (before the trace's t=0)
    else if (k == "ctld_start") as_signed(cfg.ctld_start);
    else if (k == "main_tick_phase") as_signed(cfg.main_tick_phase);
    else if (k == "main_tick_period") as_sec(cfg.main_tick_period);
    else if (k == "main_tick_times") {
      // seconds after trace time 0, ascending, ':'-separated; a leading '-' is before it
      cfg.main_tick_times.clear();
      for (auto x : split(v, ':')) {
        const std::string item(trim(x));
        auto t = signed_seconds(item);
        if (!t) {
          diags.error(r.loc(), k + ": '" + item + "' is not a number of seconds");
        } else if (!cfg.main_tick_times.empty() && *t <= cfg.main_tick_times.back()) {
          diags.error(r.loc(), k + ": '" + item + "' is not after the time before it");
        } else {
          cfg.main_tick_times.push_back(*t);
        }
      }
    } else if (k == "bf_cycle_times") {
      // START+LENGTH in seconds, ascending starts, ':'-separated
      cfg.bf_cycle_times.clear();
      for (auto x : split(v, ':')) {
        const std::string item(trim(x));
        const size_t plus = item.find('+', 1);
        auto t = signed_seconds(item.substr(0, plus));
        auto len = plus == std::string::npos ? std::nullopt : parse_non_negative_number(item.substr(plus + 1));
        if (!t || !len) {
          diags.error(r.loc(), k + ": '" + item + "' is not START+LENGTH in seconds");
        } else if (!cfg.bf_cycle_times.empty() && *t <= cfg.bf_cycle_times.back().first) {
          diags.error(r.loc(), k + ": '" + item + "' does not start after the cycle before it");
        } else {
          cfg.bf_cycle_times.emplace_back(*t, *t + SimTime::from_seconds_ceil(*len));
        }
      }
    }
    else if (k == "bf_tick_phase") as_signed(cfg.bf_tick_phase);
    else if (k == "bf_tick_period") as_sec(cfg.bf_tick_period);
    else if (k == "bf_cycle_base") as_signed(cfg.bf_cycle_base);
    else if (k == "bf_cycle_per_job") as_sec(cfg.bf_cycle_per_job);
    else if (k == "job_exit_latency") as_sec(cfg.job_exit_latency);
    else if (k == "job_exit_latency_per_start") as_sec(cfg.job_exit_latency_per_start);
    else if (k == "prio_tick_phase") as_sec(cfg.prio_tick_phase);
    else if (k == "wall_clock_zero") as_sec(cfg.wall_clock_zero);
    else if (!kIgnored.count(k))
      diags.warning(r.loc(), "SchedulerParameters option '" + k + "' is not modelled by gcsim");
  }
  if (cfg.bf_resolution <= SimTime{}) cfg.bf_resolution = SimTime::seconds(1);
  if (cfg.main_tick_period <= SimTime{}) cfg.main_tick_period = SimTime::seconds(1);
  if (cfg.bf_tick_period <= SimTime{}) cfg.bf_tick_period = SimTime::seconds(1);
  return cfg;
}

std::vector<std::pair<std::string, std::string>> SlurmSchedConfig::describe() const {
  return {{"batch_sched_delay", fmt_s(batch_sched_delay)},
          {"sched_interval", fmt_s(sched_interval)},
          {"default_queue_depth", std::to_string(default_queue_depth)},
          {"backfill", backfill ? "yes" : "no"},
          {"bf_interval", fmt_s(bf_interval)},
          {"bf_window", fmt_s(bf_window)},
          {"bf_resolution", fmt_s(bf_resolution)},
          {"bf_max_job_test", std::to_string(bf_max_job_test)},
          {"bf_max_job_user", std::to_string(bf_max_job_user)},
          {"bf_min_prio_reserve", std::to_string(bf_min_prio_reserve)},
          {"bf_continue", bf_continue ? "yes" : "no"},
          {"max_switch_wait", fmt_s(max_switch_wait)},
          {"over_time_limit", fmt_s(over_time_limit)},
          {"topology", topology_tree ? "tree" : "flat"},
          {"ctld_start", fmt_s(ctld_start)},
          {"main_tick_phase", fmt_s(main_tick_phase)},
          {"bf_tick_phase", fmt_s(bf_tick_phase)},
          {"bf_cycle_base", fmt_s(bf_cycle_base)},
          {"bf_cycle_per_job", fmt_s(bf_cycle_per_job)},
          {"main_tick_times", std::to_string(main_tick_times.size())},
          {"bf_cycle_times", std::to_string(bf_cycle_times.size())},
          {"job_exit_latency", fmt_s(job_exit_latency)},
          {"job_exit_latency_per_start", fmt_s(job_exit_latency_per_start)},
          {"wall_clock_zero", fmt_s(wall_clock_zero)}};
}

}  // namespace gcsim
