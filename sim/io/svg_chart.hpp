// Inline SVG charts for the self-contained reports: line charts (linear or log x, with
// a legend) and grouped bar charts. Plain SVG 1.1 with fixed-precision coordinates, so
// the same data gives the same bytes; colours from the Okabe-Ito palette, which stays
// distinguishable for colour-blind readers.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gcsim {

struct ChartSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // line charts: (x, y) in x order
  std::vector<double> values;                     // bar charts: one per category
};

struct LineChart {
  std::string title, x_label, y_label;
  bool log_x = false;      // x > 0 only; points at x <= 0 are drawn at the left edge
  bool step = false;       // draw as a step function (CDFs)
  double y_min = 0;
  double y_max = -1;       // < y_min: from the data
  std::vector<ChartSeries> series;
};

struct BarChart {
  std::string title, x_label, y_label;
  std::vector<std::string> categories;
  std::vector<ChartSeries> series;  // each with values.size() == categories.size()
};

[[nodiscard]] std::string svg_line_chart(const LineChart& c);
[[nodiscard]] std::string svg_bar_chart(const BarChart& c);

}  // namespace gcsim
