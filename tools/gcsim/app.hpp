// The gcsim command line: CLI11 subcommands over the libraries. main() only calls
// run_cli; tests call it too, in-process.
#pragma once

#include <string>
#include <vector>

namespace gcsim {

/// Runs the CLI; returns the process exit status (0 ok, 2 bad input or usage).
int run_cli(const std::vector<std::string>& args);

}  // namespace gcsim
