// Slurm hostlist expressions: `gpu[001-128]`, `a[1-3,7],b5`, `rack[1-2]-n[01-04]`.
// Expansion keeps zero padding; compression produces what `scontrol show hostlist`
// prints (sorted by prefix then number, runs of consecutive ids written `a-b`).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gcsim::hostlist {

/// Expands an expression into host names, in expression order.
/// Returns std::nullopt and sets `error` (a lower-case message) on malformed input.
[[nodiscard]] std::optional<std::vector<std::string>> expand(std::string_view expr,
                                                             std::string* error = nullptr);

/// The most hosts one expression may name (and, in the cluster readers, the most nodes a
/// cluster may have): a million, a hundred times the largest Slurm clusters. The fuzz
/// harnesses lower it, since they explore structure rather than scale and a million-node
/// cluster takes a minute to load under AddressSanitizer. Set it before any reader runs.
[[nodiscard]] size_t max_hosts();
void set_max_hosts(size_t n);

/// "a million" for the default limit, else the number.
[[nodiscard]] std::string max_hosts_words();

/// Compresses host names into one expression, as Slurm prints a NodeList.
[[nodiscard]] std::string compress(const std::vector<std::string>& hosts);

}  // namespace gcsim::hostlist
