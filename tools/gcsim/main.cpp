#include <string>
#include <vector>

#include "tools/gcsim/app.hpp"
#include "tools/gcsim/interrupt.hpp"

int main(int argc, char** argv) {
  gcsim::install_interrupt_handlers();
  std::vector<std::string> args(argv, argv + argc);
  return gcsim::run_cli(args);
}
