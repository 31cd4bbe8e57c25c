// Reading input files whole, transparently gunzipping `.gz` (or gzip-magic) files.
// Errors (missing file, corrupt gzip) become InputError with the file name.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gcsim {

/// The file's bytes, decompressed when it is gzip. Throws InputError.
[[nodiscard]] std::string read_input_file(const std::string& path);
/// SHA-256 of the file's bytes as stored (not decompressed), lowercase hex.
[[nodiscard]] std::string file_sha256(const std::string& path);
[[nodiscard]] std::string sha256_hex(std::string_view data);

/// Splits text into lines without their terminators ("\n" or "\r\n").
[[nodiscard]] std::vector<std::string_view> split_lines(std::string_view text);
[[nodiscard]] std::string_view trim(std::string_view s);
[[nodiscard]] std::vector<std::string_view> split(std::string_view s, char sep);
/// Whitespace-separated tokens.
[[nodiscard]] std::vector<std::string_view> split_ws(std::string_view s);
[[nodiscard]] std::string to_lower(std::string_view s);
/// A finite, non-negative decimal number filling all of `s` (after trimming), else std::nullopt.
[[nodiscard]] std::optional<double> parse_non_negative_number(std::string_view s);
/// Slurm's bit_fmt: sorted ids, runs of two or more written `a-b` ("0-3,8,10-11").
[[nodiscard]] std::string format_id_list(const std::vector<int>& ids);

}  // namespace gcsim
