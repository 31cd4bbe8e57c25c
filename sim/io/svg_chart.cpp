#include "sim/io/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "sim/core/input_file.hpp"

namespace gcsim {

namespace {

constexpr int kWidth = 760, kHeight = 340;
constexpr int kLeft = 70, kRight = 170, kTop = 36, kBottom = 52;  // the legend sits right of the plot
constexpr double kPlotW = kWidth - kLeft - kRight, kPlotH = kHeight - kTop - kBottom;
// Okabe & Ito (2008), "Color Universal Design": blue, vermillion, bluish green, orange,
// reddish purple, sky blue, yellow, black.
const char* const kColours[] = {"#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"};

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string label(double v) {
  char b[32];
  if (v != 0 && (std::abs(v) >= 1e6 || std::abs(v) < 1e-3)) std::snprintf(b, sizeof b, "%.0e", v);
  else std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

std::string text(double x, double y, const std::string& s, const char* anchor, int size,
                 const std::string& extra = "") {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\" font-size=\"" +
         std::to_string(size) + "\"" + extra + ">" + xml_escape(s) + "</text>\n";
}

// About five round ticks (1, 2 or 5 x 10^k apart) covering [lo, hi].
std::vector<double> nice_ticks(double lo, double hi) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / 5;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  std::vector<double> t;
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
    t.push_back(std::abs(v) < step * 1e-9 ? 0 : v);
  return t;
}

std::string open_svg(const std::string& title) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(kWidth) + "\" height=\"" +
         std::to_string(kHeight) + "\" viewBox=\"0 0 " + std::to_string(kWidth) + " " + std::to_string(kHeight) +
         "\" font-family=\"sans-serif\" role=\"img\" aria-label=\"" + xml_escape(title) + "\">\n" +
         "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n" +
         text(kLeft + kPlotW / 2, 22, title, "middle", 14, " font-weight=\"bold\"");
}

std::string frame(const std::string& x_label, const std::string& y_label) {
  std::string o = "<rect x=\"" + num(kLeft) + "\" y=\"" + num(kTop) + "\" width=\"" + num(kPlotW) + "\" height=\"" +
                  num(kPlotH) + "\" fill=\"none\" stroke=\"#444\"/>\n";
  o += text(kLeft + kPlotW / 2, kHeight - 12, x_label, "middle", 12);
  o += text(16, kTop + kPlotH / 2, y_label, "middle", 12,
            " transform=\"rotate(-90 16 " + num(kTop + kPlotH / 2) + ")\"");
  return o;
}

std::string legend(const std::vector<ChartSeries>& s) {
  std::string o;
  for (size_t i = 0; i < s.size(); ++i) {
    const double y = kTop + 10 + 18 * static_cast<double>(i);
    o += "<rect x=\"" + num(kLeft + kPlotW + 14) + "\" y=\"" + num(y - 9) + "\" width=\"14\" height=\"10\" fill=\"" +
         kColours[i % 8] + "\"/>\n";
    o += text(kLeft + kPlotW + 34, y, s[i].name, "start", 11);
  }
  return o;
}

}  // namespace

std::string svg_line_chart(const LineChart& c) {
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, yhi = -xlo;
  for (const auto& s : c.series)
    for (auto [x, y] : s.points) {
      if (!c.log_x || x > 0) {
        xlo = std::min(xlo, x);
        xhi = std::max(xhi, x);
      }
      yhi = std::max(yhi, y);
    }
  if (!std::isfinite(xlo)) xlo = c.log_x ? 1 : 0, xhi = xlo * 10 + 1;
  if (c.log_x) {
    xlo = std::pow(10, std::floor(std::log10(xlo)));
    xhi = std::pow(10, std::ceil(std::log10(xhi)));
    if (xhi <= xlo) xhi = xlo * 10;
  } else if (xhi <= xlo) {
    xhi = xlo + 1;
  }
  const double ylo = c.y_min;
  double ytop = c.y_max >= c.y_min ? c.y_max : (std::isfinite(yhi) ? yhi : 1);
  if (ytop <= ylo) ytop = ylo + 1;
  if (c.y_max < c.y_min) ytop = std::max(ytop, nice_ticks(ylo, ytop).back());  // up to a round tick
  auto fx = [&](double x) {
    const double f = c.log_x ? (x <= 0 ? 0 : (std::log10(x) - std::log10(xlo)) / (std::log10(xhi) - std::log10(xlo)))
                             : (x - xlo) / (xhi - xlo);
    return kLeft + kPlotW * std::clamp(f, 0.0, 1.0);
  };
  auto fy = [&](double y) { return kTop + kPlotH * (1 - std::clamp((y - ylo) / (ytop - ylo), 0.0, 1.0)); };

  std::string o = open_svg(c.title);
  // Grid and tick labels.
  for (double t : nice_ticks(ylo, ytop)) {
    o += "<line x1=\"" + num(kLeft) + "\" x2=\"" + num(kLeft + kPlotW) + "\" y1=\"" + num(fy(t)) + "\" y2=\"" +
         num(fy(t)) + "\" stroke=\"#ddd\"/>\n";
    o += text(kLeft - 6, fy(t) + 4, label(t), "end", 10);
  }
  std::vector<double> xt;
  if (c.log_x)
    for (double d = xlo; d <= xhi * 1.0001; d *= 10) xt.push_back(d);
  else
    xt = nice_ticks(xlo, xhi);
  for (double t : xt) {
    o += "<line x1=\"" + num(fx(t)) + "\" x2=\"" + num(fx(t)) + "\" y1=\"" + num(kTop) + "\" y2=\"" +
         num(kTop + kPlotH) + "\" stroke=\"#eee\"/>\n";
    o += text(fx(t), kTop + kPlotH + 16, label(t), "middle", 10);
  }
  o += frame(c.x_label, c.y_label);
  for (size_t i = 0; i < c.series.size(); ++i) {
    const auto& pts = c.series[i].points;
    if (pts.empty()) continue;
    std::string d;
    for (size_t k = 0; k < pts.size(); ++k) {
      const double x = fx(pts[k].first), y = fy(pts[k].second);
      if (k == 0) d += "M" + num(x) + " " + num(y);
      else if (c.step) d += " H" + num(x) + " V" + num(y);
      else d += " L" + num(x) + " " + num(y);
    }
    o += "<path d=\"" + d + "\" fill=\"none\" stroke=\"" + kColours[i % 8] + "\" stroke-width=\"2\"/>\n";
    if (!c.step && pts.size() <= 40)  // few points (a sweep's grid): mark each
      for (const auto& [x, y] : pts)
        o += "<circle cx=\"" + num(fx(x)) + "\" cy=\"" + num(fy(y)) + "\" r=\"3\" fill=\"" + kColours[i % 8] + "\"/>\n";
  }
  o += legend(c.series);
  return o + "</svg>\n";
}

std::string svg_bar_chart(const BarChart& c) {
  double yhi = 0;
  for (const auto& s : c.series)
    for (double v : s.values) yhi = std::max(yhi, v);
  if (yhi <= 0) yhi = 1;
  const auto ticks = nice_ticks(0, yhi);
  const double ytop = std::max(yhi, ticks.empty() ? yhi : ticks.back());
  auto fy = [&](double y) { return kTop + kPlotH * (1 - std::clamp(y / ytop, 0.0, 1.0)); };
  std::string o = open_svg(c.title);
  for (double t : ticks) {
    o += "<line x1=\"" + num(kLeft) + "\" x2=\"" + num(kLeft + kPlotW) + "\" y1=\"" + num(fy(t)) + "\" y2=\"" +
         num(fy(t)) + "\" stroke=\"#ddd\"/>\n";
    o += text(kLeft - 6, fy(t) + 4, label(t), "end", 10);
  }
  o += frame(c.x_label, c.y_label);
  const size_t nc = std::max<size_t>(1, c.categories.size()), ns = std::max<size_t>(1, c.series.size());
  const double group = kPlotW / static_cast<double>(nc), bar = group * 0.8 / static_cast<double>(ns);
  for (size_t k = 0; k < c.categories.size(); ++k) {
    const double gx = kLeft + group * static_cast<double>(k) + group * 0.1;
    for (size_t i = 0; i < c.series.size(); ++i) {
      const double v = k < c.series[i].values.size() ? c.series[i].values[k] : 0;
      const double x = gx + bar * static_cast<double>(i), y = fy(v);
      o += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(1.0, bar - 1)) + "\" height=\"" +
           num(kTop + kPlotH - y) + "\" fill=\"" + kColours[i % 8] + "\"><title>" +
           xml_escape(c.series[i].name + ", " + c.categories[k] + ": " + label(v)) + "</title></rect>\n";
    }
    o += text(gx + group * 0.4, kTop + kPlotH + 16, c.categories[k], "middle", 10);
  }
  o += legend(c.series);
  return o + "</svg>\n";
}

}  // namespace gcsim
