#include "sim/cluster/cluster_yaml.hpp"
