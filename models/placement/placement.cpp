// The placement library (see placement.hpp).
