// What the `slurm` policy reads from slurm.conf: SchedulerParameters (main loop and
// backfill), select/cons_tres settings, topology/tree, time limits and the
// priority/multifactor weights. Defaults are Slurm 22.05-23.11's
// (shared/research/slurm_internals.md sections 1.1, 1.4, 2.1, 3.1, 4.9).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/cluster/cluster.hpp"
#include "sim/core/diagnostics.hpp"
#include "sim/core/time.hpp"

namespace gcsim {

struct SlurmSchedConfig {
  // main scheduler
  SimTime batch_sched_delay = SimTime::seconds(3);
  SimTime sched_interval = SimTime::seconds(60);  // full-queue pass; infinite = disabled
  int default_queue_depth = 100;
  int partition_job_depth = 0;
  int sched_max_job_start = 0;
  // backfill
  bool backfill = true;  // SchedulerType=sched/backfill
  SimTime bf_interval = SimTime::seconds(30);
  SimTime bf_window = SimTime::seconds(1440 * 60);
  SimTime bf_resolution = SimTime::seconds(60);
  int bf_max_job_test = 500;
  int bf_max_job_start = 0;
  int bf_max_job_user = 0;
  int bf_max_job_part = 0;
  int bf_max_job_user_part = 0;
  int bf_max_job_assoc = 0;
  int bf_max_job_array_resv = 20;
  SimTime bf_min_age_reserve;
  int64_t bf_min_prio_reserve = 0;
  int bf_job_part_count_reserve = 0;
  bool bf_continue = false;
  int bf_window_linear = 0;
  SimTime max_switch_wait = SimTime::seconds(300);
  // time limits
  SimTime over_time_limit;                        // OverTimeLimit (minutes in slurm.conf)
  SimTime time_limit_check = SimTime::seconds(30);  // PERIODIC_TIMEOUT
  // select/cons_tres
  bool topology_tree = false;  // TopologyPlugin=topology/tree
  bool topo_optional = false;  // TopologyParam=TopoOptional
  bool cr_socket = false;      // CR_Socket*: whole sockets
  bool pack_serial_at_end = false;
  bool cr_lln = false;
  // Controller plumbing gcsim cannot read from slurm.conf: the instant (relative to
  // trace time 0) slurmctld started, which sets the phase of every periodic timer, and
  // the sub-second phases of the 1 s background tick and the backfill thread's 1 s
  // re-check. Defaults: 0. Replays of the oracle set them (tests/oracle/README.md).
  SimTime ctld_start;
  SimTime main_tick_phase = SimTime::us(100000);
  SimTime main_tick_period = SimTime::seconds(1);
  // Main-loop passes seen in a replayed run (its 'sched: Allocate' lines, trace-relative,
  // ascending): the background thread's tick wanders +-30 ms about the straight line
  // above as its work varies, and batch_sched_delay counts whole seconds, so a tick a
  // few ms off moves a pass by a whole tick. Ticks fall on these times, spaced evenly
  // (about main_tick_period) between them; outside them, main_tick_period apart.
  std::vector<SimTime> main_tick_times;
  SimTime bf_tick_phase = SimTime::us(40000);
  SimTime bf_tick_period = SimTime::seconds(1);
  // The backfill thread sleeps bf_interval (then 1 s re-checks, each bf_tick_period
  // long) from the END of a cycle, so cycles drift by their own length: in the oracle
  // runs 1-45 ms, about bf_cycle_base + bf_cycle_per_job x jobs tested.
  SimTime bf_cycle_base, bf_cycle_per_job;
  // The backfill cycles seen in a replayed run's log ('_attempt_backfill: beginning' to
  // 'completed testing'), (start, end), ascending. A cycle that gcsim runs within 0.5 s
  // of one of them ends where the log's did; others take the length above.
  std::vector<std::pair<SimTime, SimTime>> bf_cycle_times;
  SimTime job_exit_latency;  // run end -> _job_complete (oracle: ~0.07 s for a job started alone)
  // What each further job started in the same pass adds to it (oracle: 0.03-0.06 s; the
  // emulated nodes launch on one machine, 0.07 s alone grew to 0.11, 0.15, 0.21 s for
  // 2, 3, 4 jobs started at once, whatever their order)
  SimTime job_exit_latency_per_start;
  SimTime prio_tick_phase;   // decay thread start after ctld_start (oracle: 0.83 s)
  // The controller's wall clock at trace time 0, modulo a day (the replayed run's t0
  // epoch): slurmctld counts its timers in whole time_t seconds, floors the backfill
  // table to bf_resolution and aligns will-run batches to 30 s on that clock.
  SimTime wall_clock_zero;

  /// Every parameter with its value, for the manifest and `gcsim policies`.
  [[nodiscard]] std::vector<std::pair<std::string, std::string>> describe() const;
};

/// Reads the scheduling keys of `cluster.slurm_params`. An unparsable value is an
/// error; a SchedulerParameters option gcsim does not model is one warning naming it.
/// `overrides` (from `gcsim run --set KEY=VALUE`) replace SchedulerParameters options
/// and the plumbing keys above.
[[nodiscard]] SlurmSchedConfig read_slurm_sched_config(const Cluster& cluster,
                                                       const std::map<std::string, std::string>& overrides,
                                                       Diagnostics& diags);

/// Slurm's time-limit string in minutes ("60", "1-0", "2:30:00", "INFINITE") as used by
/// OverTimeLimit, PriorityMaxAge and friends; std::nullopt when malformed.
[[nodiscard]] std::optional<SimTime> parse_slurm_minutes(const std::string& s);

}  // namespace gcsim
