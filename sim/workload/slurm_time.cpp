#include "sim/workload/slurm_time.hpp"
