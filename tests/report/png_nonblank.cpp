// png_nonblank FILE.png [--min-colors N] [--min-nonwhite-share X]
//
// Tells whether a screenshot shows anything: a page that failed to render comes
// out as one flat colour (usually white). Decodes the PNG itself (zlib only) so
// the render check needs no image library or scripting language.
//
// Exit 0: not blank (distinct colours >= N, default 8, and non-white share >= X,
// default 0.01); 1: blank; 2: unreadable, unsupported or bad arguments.
// Only 8-bit RGB / RGBA, non-interlaced PNGs are accepted: Chromium writes those.
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

namespace {

// Counting stops here: past it the image is surely not blank, and a huge
// screenshot must not grow the set without bound.
constexpr std::size_t kColorCap = 1u << 16;

struct Image {
  uint32_t width = 0, height = 0;
  unsigned channels = 0;          // 3 (RGB) or 4 (RGBA)
  std::vector<uint8_t> pixels;    // unfiltered, row after row, no filter bytes
};

[[noreturn]] void fail(const std::string& why) { throw std::runtime_error(why); }

uint32_t be32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

uint8_t paeth(int a, int b, int c) {
  int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return uint8_t(a);
  return uint8_t(pb <= pc ? b : c);
}

Image decode(const std::vector<uint8_t>& f) {
  static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (f.size() < 8 || !std::equal(sig, sig + 8, f.begin())) fail("not a PNG file");

  Image img;
  std::vector<uint8_t> idat;
  bool have_ihdr = false, have_iend = false;
  for (std::size_t pos = 8; !have_iend;) {
    if (f.size() - pos < 12) fail("truncated chunk");
    uint32_t len = be32(&f[pos]);
    if (len > f.size() - pos - 12) fail("truncated chunk");
    const uint8_t* type = &f[pos + 4];
    const uint8_t* data = type + 4;
    // The CRC covers type and data; a mismatch means a damaged file.
    if (crc32(crc32(0, nullptr, 0), type, len + 4) != be32(data + len)) fail("chunk CRC mismatch");
    std::string name(type, type + 4);
    if (name == "IHDR") {
      if (len != 13) fail("bad IHDR");
      img.width = be32(data);
      img.height = be32(data + 4);
      unsigned depth = data[8], ctype = data[9], interlace = data[12];
      if (depth != 8 || (ctype != 2 && ctype != 6) || data[10] != 0 || data[11] != 0 ||
          interlace != 0)
        fail("unsupported PNG (bit depth " + std::to_string(depth) + ", colour type " +
             std::to_string(ctype) + ", interlace " + std::to_string(interlace) +
             "); only 8-bit RGB/RGBA, non-interlaced");
      img.channels = ctype == 2 ? 3 : 4;
      have_ihdr = true;
    } else if (name == "IDAT") {
      idat.insert(idat.end(), data, data + len);
    } else if (name == "IEND") {
      have_iend = true;
    }
    pos += 12 + std::size_t(len);
  }
  if (!have_ihdr) fail("no IHDR chunk");
  // Refuse sizes that would make the buffer absurd (and its size overflow).
  if (img.width == 0 || img.height == 0 || img.width > 65535 || img.height > 65535 ||
      uint64_t(img.width) * img.height > (uint64_t(1) << 28))
    fail("image size " + std::to_string(img.width) + "x" + std::to_string(img.height) +
         " out of range");

  // Each scanline is one filter-type byte followed by the filtered pixel bytes.
  const std::size_t stride = std::size_t(img.width) * img.channels;
  std::vector<uint8_t> raw(img.height * (stride + 1));
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) fail("zlib init failed");
  zs.next_in = idat.data();
  zs.avail_in = uInt(idat.size());
  zs.next_out = raw.data();
  zs.avail_out = uInt(raw.size());
  int zrc = inflate(&zs, Z_FINISH);
  inflateEnd(&zs);
  if (zrc != Z_STREAM_END || zs.avail_out != 0) fail("image data is corrupt or too short");

  // Undo the per-row filters; each predicts from the already decoded bytes to
  // the left (a), above (b) and above-left (c), which are 0 outside the image.
  img.pixels.resize(img.height * stride);
  const unsigned bpp = img.channels;
  for (uint32_t y = 0; y < img.height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    uint8_t* out = &img.pixels[y * stride];
    const uint8_t* up = y > 0 ? out - stride : nullptr;
    for (std::size_t i = 0; i < stride; ++i) {
      int a = i >= bpp ? out[i - bpp] : 0;
      int b = up ? up[i] : 0;
      int c = up && i >= bpp ? up[i - bpp] : 0;
      int pred;
      switch (filter) {
        case 0: pred = 0; break;                  // None
        case 1: pred = a; break;                  // Sub
        case 2: pred = b; break;                  // Up
        case 3: pred = (a + b) / 2; break;        // Average
        case 4: pred = paeth(a, b, c); break;     // Paeth
        default: fail("bad filter type " + std::to_string(filter) + " in row " + std::to_string(y));
      }
      out[i] = uint8_t(in[i] + pred);
    }
  }
  return img;
}

int usage() {
  std::fprintf(stderr, "usage: png_nonblank FILE.png [--min-colors N] [--min-nonwhite-share X]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = nullptr;
  long min_colors = 8;
  double min_share = 0.01;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    char* end = nullptr;
    if (arg == "--min-colors" && i + 1 < argc) {
      min_colors = std::strtol(argv[++i], &end, 10);
      if (*end || min_colors < 0) return usage();
    } else if (arg == "--min-nonwhite-share" && i + 1 < argc) {
      min_share = std::strtod(argv[++i], &end);
      if (*end || min_share < 0 || min_share > 1) return usage();
    } else if (!path && arg.rfind("--", 0) != 0) {
      path = argv[i];
    } else {
      return usage();
    }
  }
  if (!path) return usage();

  Image img;
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail("cannot open");
    std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), {}};
    img = decode(bytes);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "png_nonblank: %s: %s\n", path, e.what());
    return 2;
  }

  // Judge what a viewer sees: RGBA is composited over white, so a fully
  // transparent pixel counts as white.
  std::unordered_set<uint32_t> colors;
  uint64_t nonwhite = 0;
  const uint64_t n = uint64_t(img.width) * img.height;
  for (uint64_t p = 0; p < n; ++p) {
    const uint8_t* px = &img.pixels[p * img.channels];
    uint32_t rgb = 0;
    for (int k = 0; k < 3; ++k) {
      unsigned v = px[k];
      if (img.channels == 4) v = (v * px[3] + 255u * (255u - px[3]) + 127u) / 255u;
      rgb = rgb << 8 | v;
    }
    if (rgb != 0xFFFFFFu) ++nonwhite;
    if (colors.size() < kColorCap) colors.insert(rgb);
  }
  const double share = double(nonwhite) / double(n);
  const bool blank = long(colors.size()) < min_colors || share < min_share;
  std::printf("png_nonblank: %s: width=%u height=%u colors=%zu%s nonwhite_share=%.4f -> %s\n",
              path, img.width, img.height, colors.size(),
              colors.size() >= kColorCap ? "+" : "", share, blank ? "blank" : "not blank");
  return blank ? 1 : 0;
}
