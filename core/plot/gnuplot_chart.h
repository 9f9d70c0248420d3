// Draws a Chart into an SVG or PNG file with gnuplot (Debian's gnuplot-nox),
// a maintained plotting program: orchestrate writes each curve's points and
// a gnuplot script into a temporary directory, runs gnuplot there, and moves
// the finished picture into place, so a failure never leaves half a file.
#pragma once

#include <string>

#include "plot/chart.h"

namespace orchestrate::plot {

enum class PictureFormat { svg, png };

// From the output file's extension (.svg or .png, any case); anything else
// is a UsageError naming the file and the known extensions.
PictureFormat picture_format_of(const std::string& path);

// gnuplot on $PATH; a missing gnuplot is an Error saying which package to install.
std::string find_gnuplot();

// Writes `chart` to `path` (the format from its extension). A gnuplot that
// fails is an Error with the first line gnuplot printed.
void draw_chart(const Chart& chart, const std::string& path);

// The picture's height: the title, a legend row per two runs, the panels.
// (Its width is always 1100 pixels.)
int chart_height_px(const Chart& chart);

// The gnuplot script that draws `chart` from the data files data_<panel>_<curve>.dat
// (written beside it by draw_chart) into `output`: separate so tests can read it.
std::string gnuplot_script(const Chart& chart, PictureFormat format, const std::string& output);

}  // namespace orchestrate::plot
