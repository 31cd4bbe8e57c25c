#include "sim/cluster/sinfo.hpp"
