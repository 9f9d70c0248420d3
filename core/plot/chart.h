// A chart as data, before any plotting program sees it: panels of curves,
// titled and labelled. run_curves.h and scaling_chart.h build one;
// gnuplot_chart.h draws it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace orchestrate::plot {

enum class CurveStyle {
  line,              // a measured series with many points (a loss over steps)
  line_and_points,   // few measured points, each worth seeing (images/s per worker count)
  dashed_reference,  // not measured: what the data is held against (ideal linear scaling)
  points,            // unordered measurements, one each (a sweep's trials against a parameter)
};

struct Curve {
  std::string label;                              // the legend entry
  std::vector<std::pair<double, double>> points;  // (x, y), finite, in drawing order
  CurveStyle style = CurveStyle::line;
  int colour = 0;                         // the same index in every panel for the same run, so one legend reads for all
  std::vector<std::string> point_labels;  // empty, or one short text per point, written beside it
};

struct Panel {
  std::string title, y_label;
  std::vector<Curve> curves;
  bool y_from_zero = false;  // y is a rate compared by ratio (images/s): the axis starts at 0
  bool y_is_share = false;   // y is a share of a whole: the axis is 0 to 1, so a stall shows at its size
  // A panel with an x axis of its own (each parameter of a sweep):
  std::string x_label;                    // "": the chart's
  bool x_log = false;                     // x spans decades (a learning rate)
  bool x_fits_data = false;               // x spans the data's range with a margin, not from 0 (a batch size)
  std::vector<std::string> x_categories;  // x is 0, 1, ... standing for these words ("none", "linear")
};

struct Chart {
  std::string title;
  std::string x_label;
  std::vector<Panel> panels;    // drawn one above the other, sharing the x axis's meaning
  bool whole_number_x = false;  // x is a count (workers): ticks at whole numbers, room beside the last point
};

}  // namespace orchestrate::plot
