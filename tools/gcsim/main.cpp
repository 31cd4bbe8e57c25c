#include <string>
#include <vector>

#include "tools/gcsim/app.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  return gcsim::run_cli(args);
}
