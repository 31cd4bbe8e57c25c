#include "sim/core/input_file.hpp"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sim/core/diagnostics.hpp"

namespace gcsim {

static std::string read_raw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(SourceLoc{path, 0, 0}, "cannot open file: " + std::string(std::strerror(errno)));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

static std::string gunzip(const std::string& path, const std::string& raw) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) throw InputError(SourceLoc{path, 0, 0}, "cannot start gzip decoder");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  zs.avail_in = static_cast<uInt>(raw.size());
  std::string out;
  std::array<char, 1 << 16> buf{};
  int rc = Z_OK;
  while (true) {
    zs.next_out = reinterpret_cast<Bytef*>(buf.data());
    zs.avail_out = buf.size();
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf.data(), buf.size() - zs.avail_out);
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members are legal; continue with the next one.
      if (zs.avail_in == 0) break;
      inflateReset(&zs);
      continue;
    }
    if (rc != Z_OK) break;
    if (zs.avail_in == 0 && zs.avail_out != 0) break;
  }
  inflateEnd(&zs);
  if (rc == Z_OK || rc == Z_BUF_ERROR)
    throw InputError(SourceLoc{path, 0, 0}, "truncated gzip data after " + std::to_string(out.size()) + " bytes");
  if (rc != Z_STREAM_END) throw InputError(SourceLoc{path, 0, 0}, "corrupt gzip data");
  return out;
}

std::string read_input_file(const std::string& path) {
  std::string raw = read_raw(path);
  if (raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f && static_cast<unsigned char>(raw[1]) == 0x8b)
    raw = gunzip(path, raw);
  // Every input gcsim reads is text: a NUL byte means a binary file was given.
  const size_t nul = raw.find('\0');
  if (nul != std::string::npos) {
    int line = 1, col = 1;
    for (size_t i = 0; i < nul; ++i) {
      if (raw[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw InputError(SourceLoc{path, line, col}, "binary data (NUL byte) in a text input");
  }
  return raw;
}

// SHA-256 (FIPS 180-4).
namespace {
constexpr std::array<uint32_t, 64> kK = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
}  // namespace

std::string sha256_hex(std::string_view data) {
  std::array<uint32_t, 8> h = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::string msg(data);
  const uint64_t bitlen = static_cast<uint64_t>(data.size()) * 8;
  msg.push_back(static_cast<char>(0x80));
  while (msg.size() % 64 != 56) msg.push_back(0);
  for (int i = 7; i >= 0; --i) msg.push_back(static_cast<char>((bitlen >> (8 * i)) & 0xff));
  for (size_t off = 0; off < msg.size(); off += 64) {
    std::array<uint32_t, 64> w{};
    for (int i = 0; i < 16; ++i) {
      const auto* p = reinterpret_cast<const unsigned char*>(msg.data() + off + 4 * i);
      w[i] = (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
    }
    for (int i = 16; i < 64; ++i) {
      const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    auto [a, b, c, d, e, f, g, hh] = h;
    for (int i = 0; i < 64; ++i) {
      const uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      const uint32_t ch = (e & f) ^ (~e & g);
      const uint32_t t1 = hh + S1 + ch + kK[i] + w[i];
      const uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      const uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
      const uint32_t t2 = S0 + maj;
      hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
  }
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (uint32_t v : h)
    for (int i = 28; i >= 0; i -= 4) out.push_back(hex[(v >> i) & 0xf]);
  return out;
}

std::string file_sha256(const std::string& path) { return sha256_hex(read_raw(path)); }

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    size_t end = nl;
    if (end > start && text[end - 1] == '\r') --end;
    lines.push_back(text.substr(start, end - start));
    start = nl + 1;
  }
  return lines;
}

std::string_view trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t p = s.find(sep, start);
    if (p == std::string_view::npos) {
      out.push_back(s.substr(start));
      break;
    }
    out.push_back(s.substr(start, p - start));
    start = p + 1;
  }
  return out;
}

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t b = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace gcsim

namespace gcsim {

std::optional<double> parse_non_negative_number(std::string_view s) {
  s = trim(s);
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

std::vector<CsvCell> split_plain_csv(std::string_view line) {
  std::vector<CsvCell> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    const size_t end = comma == std::string_view::npos ? line.size() : comma;
    out.push_back({trim(line.substr(start, end - start)), static_cast<int>(start) + 1});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

bool is_missing_value(std::string_view s) {
  const std::string v = to_lower(trim(s));
  return v.empty() || v == "nan" || v == "none" || v == "nat";
}

std::optional<int64_t> parse_integer(std::string_view s) {
  s = trim(s);
  int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string format_id_list(const std::vector<int>& ids) {
  std::string out;
  append_id_list(out, ids);
  return out;
}

namespace {

// "lo" or "lo-hi", after a comma unless it is the list's first.
void append_id_range(std::string& out, bool first, int64_t lo, int64_t hi) {
  char buf[24];
  if (!first) out += ',';
  out.append(buf, std::to_chars(buf, buf + sizeof buf, lo).ptr);
  if (hi > lo) {
    out += '-';
    out.append(buf, std::to_chars(buf, buf + sizeof buf, hi).ptr);
  }
}

}  // namespace

void append_id_list(std::string& out, const std::vector<int>& ids, int scale) {
  // With scale > 1 each id is a run of `scale` consecutive values, so runs of ids
  // are runs of values too.
  const int64_t k = std::max(scale, 1);
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    append_id_range(out, i == 0, ids[i] * k, ids[j] * k + k - 1);
    i = j + 1;
  }
}

void append_id_runs(std::string& out, const uint32_t* runs, size_t n, int scale) {
  const int64_t k = std::max(scale, 1);
  for (size_t q = 0; q < n; ++q) {
    const int64_t first = runs[2 * q], last = first + runs[2 * q + 1] - 1;
    append_id_range(out, q == 0, first * k, last * k + k - 1);
  }
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string xml_escape(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

}  // namespace gcsim
