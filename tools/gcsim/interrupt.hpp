// SIGINT and SIGTERM stop a long command cleanly: the handler only sets a flag the
// simulation loop polls between events, so the command writes what it has (manifest
// `completed: false`) and exits 128 + the signal (130, 143). A second signal of either
// kind ends the process at once.
#pragma once

#include <atomic>
#include <string>

namespace gcsim {

/// Installs the handlers (idempotent).
void install_interrupt_handlers();
/// Set once a SIGINT or SIGTERM arrived.
[[nodiscard]] const std::atomic<bool>* interrupt_flag();
/// The signal that arrived, 0 if none.
[[nodiscard]] int interrupt_signal();
/// Tells stderr that an interrupted command wrote its partial results to `dir`.
void report_interrupt(const std::string& dir);
/// 128 + signal when interrupted, else `rc`.
[[nodiscard]] int exit_status_after_interrupt(int rc);

}  // namespace gcsim
