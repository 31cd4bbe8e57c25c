#include "sim/workload/sbatch_options.hpp"
