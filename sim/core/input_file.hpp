// Reading input files whole, transparently gunzipping `.gz` (or gzip-magic) files.
// Errors (missing file, corrupt gzip) become InputError with the file name.
#pragma once

#include <cstdint>
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
/// One field of an unquoted comma-separated line, trimmed, with its 1-based column.
struct CsvCell {
  std::string_view text;
  int col = 1;
};
/// Splits an unquoted CSV line (no quoting, as pandas writes plain numeric tables).
[[nodiscard]] std::vector<CsvCell> split_plain_csv(std::string_view line);
/// pandas' spellings of a missing value: empty, `nan`, `None`, `NaT` (any case).
[[nodiscard]] bool is_missing_value(std::string_view s);
/// A whole decimal integer filling all of `s` (after trimming), else std::nullopt.
[[nodiscard]] std::optional<int64_t> parse_integer(std::string_view s);
/// A finite, non-negative decimal number filling all of `s` (after trimming), else std::nullopt.
[[nodiscard]] std::optional<double> parse_non_negative_number(std::string_view s);
/// A CSV field: as is, or in double quotes (inner quotes doubled) when it holds , " or a newline.
[[nodiscard]] std::string csv_field(const std::string& s);
/// Escapes &, <, >, " and ' for XML and HTML text and attributes.
[[nodiscard]] std::string xml_escape(std::string_view s);
/// Slurm's bit_fmt: sorted ids, runs of two or more written `a-b` ("0-3,8,10-11").
[[nodiscard]] std::string format_id_list(const std::vector<int>& ids);
/// The same, appended to `out`; ids[i] * scale + k for k in [0, scale) stand for each
/// id (a core's hardware threads when scale is the threads per core).
void append_id_list(std::string& out, const std::vector<int>& ids, int scale = 1);
/// The same for ids given as `n` maximal runs of consecutive ids, (first, count) pairs.
void append_id_runs(std::string& out, const uint32_t* runs, size_t n, int scale = 1);

}  // namespace gcsim
