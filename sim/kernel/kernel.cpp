#include "sim/kernel/event_queue.hpp"
#include "sim/kernel/rng.hpp"
