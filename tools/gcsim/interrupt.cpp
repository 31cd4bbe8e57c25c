#include "tools/gcsim/interrupt.hpp"

#include <csignal>
#include <cstdio>

namespace gcsim {
namespace {

std::atomic<bool> g_stop{false};
volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_interrupt(int sig) {
  g_signal = sig;
  g_stop.store(true, std::memory_order_relaxed);
  // The next SIGINT or SIGTERM takes the default action (terminate now).
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

const std::atomic<bool>* interrupt_flag() { return &g_stop; }

int interrupt_signal() { return g_signal; }

void report_interrupt(const std::string& dir) {
  if (g_signal == 0) return;
  std::fprintf(stderr, "gcsim: interrupted by %s: wrote the results so far to %s/ (manifest: completed: false)\n",
               g_signal == SIGINT ? "SIGINT" : "SIGTERM", dir.c_str());
}

int exit_status_after_interrupt(int rc) { return g_signal != 0 ? 128 + g_signal : rc; }

}  // namespace gcsim
