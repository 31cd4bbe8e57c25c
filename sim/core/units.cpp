#include "sim/core/units.hpp"
