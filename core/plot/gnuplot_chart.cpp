#include "plot/gnuplot_chart.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "orchestrate/error.h"
#include "orchestrate/run_program.h"
#include "orchestrate/temporary_directory.h"

namespace orchestrate::plot {
namespace {

namespace fs = std::filesystem;

// Tableau's ten colours (matplotlib's default cycle): told apart by most
// people, colour-blind ones included, for the first several runs.
constexpr std::array<const char*, 10> kColours = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
// The picture's layout, in pixels: a title, the legend under it (two runs a
// row), then the panels one above the other.
constexpr int kWidthPx = 1100;
constexpr int kTitleHeightPx = 45;
constexpr int kMostKeyColumns = 3;
constexpr int kKeyEntryPx = 70;     // a legend entry's sample line and gaps
constexpr int kKeyCharacterPx = 9;  // a character of legend text as gnuplot reckons it (13 pt SVG)
constexpr int kKeyRowHeightPx = 22;
constexpr int kKeyGapPx = 20;
constexpr int kPanelHeightPx = 300;
constexpr int kOnlyPanelHeightPx = 460;  // one panel alone gets the height of a usual picture
constexpr int kPanelTitlePx = 30;        // a panel's title, above its plot
constexpr int kPanelGapPx = 105;         // the x tics and label of one panel, and the title of the next
constexpr int kBottomMarginPx = 60;      // the last x tics and label

// A gnuplot single-quoted string: nothing is special in one but the quote, written twice.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char ch : text) {
    if (ch == '\'') out += "''";
    else if (ch == '\n') out += ' ';
    else out += ch;
  }
  return out + "'";
}

// A data file's string column is double-quoted; a label keeps any other character.
std::string without_double_quotes(std::string text) {
  std::replace(text.begin(), text.end(), '"', '\'');
  return text;
}

std::string data_file(std::size_t panel, std::size_t curve) {
  return "data_" + std::to_string(panel) + "_" + std::to_string(curve) + ".dat";
}
std::string labels_file(std::size_t panel, std::size_t curve) {
  return "labels_" + std::to_string(panel) + "_" + std::to_string(curve) + ".dat";
}

// The legend lists the curves of the panel that has the most, as many a row
// as the longest label lets fit across the picture.
int legend_columns(const Chart& chart) {
  std::size_t longest = 0;
  for (const Panel& panel : chart.panels)
    for (const Curve& curve : panel.curves) longest = std::max(longest, curve.label.size());
  const int entry_px = kKeyEntryPx + kKeyCharacterPx * static_cast<int>(longest);
  return std::clamp((kWidthPx - 100) / entry_px, 1, kMostKeyColumns);
}
int legend_rows(const Chart& chart) {
  std::size_t entries = 0;
  for (const Panel& panel : chart.panels) entries = std::max(entries, panel.curves.size());
  const int columns = legend_columns(chart);
  return (static_cast<int>(entries) + columns - 1) / columns;
}

std::string curve_style(const Curve& curve) {
  const std::string colour = quoted(kColours[static_cast<std::size_t>(curve.colour) % kColours.size()]);
  switch (curve.style) {
    case CurveStyle::line: return "with lines lw 2 lc rgb " + colour;
    case CurveStyle::line_and_points: return "with linespoints lw 2 pt 7 ps 0.8 lc rgb " + colour;
    case CurveStyle::dashed_reference: return "with lines lw 2 dt 2 lc rgb '#555555'";
    case CurveStyle::points: return "with points pt 7 ps 1.3 lc rgb " + colour;
  }
  return "with lines";
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw Error("plot: cannot write " + path.string() + " (is the temporary directory full?)");
}

std::string first_line_of_file(const fs::path& path) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t^") != std::string::npos) return line;
  return "";
}

// Moves the finished picture into place; across file systems, a copy.
void move_into_place(const fs::path& from, const fs::path& to) {
  std::error_code error;
  fs::rename(from, to, error);
  if (!error) return;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, error);
  if (error) throw Error("plot: cannot write " + to.string() + ": " + error.message());
}

}  // namespace

int chart_height_px(const Chart& chart) {
  const int key_rows = legend_rows(chart);
  const int panels = static_cast<int>(chart.panels.size());
  return kTitleHeightPx + kKeyRowHeightPx * key_rows + kKeyGapPx + kPanelTitlePx +
         (panels == 1 ? kOnlyPanelHeightPx : kPanelHeightPx * panels + kPanelGapPx * (panels - 1)) + kBottomMarginPx;
}

PictureFormat picture_format_of(const std::string& path) {
  std::string extension = fs::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (extension == ".svg") return PictureFormat::svg;
  if (extension == ".png") return PictureFormat::png;
  throw UsageError("plot: -o " + path + ": unknown picture type '" + extension +
                   "' (known: .svg, .png; the extension picks the format)");
}

std::string find_gnuplot() {
  const char* path_variable = std::getenv("PATH");
  std::istringstream directories(path_variable ? path_variable : "");
  for (std::string directory; std::getline(directories, directory, ':');) {
    if (directory.empty()) continue;
    const fs::path candidate = fs::path(directory) / "gnuplot";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  throw Error("plot: gnuplot not found on PATH; install it with `apt-get install gnuplot-nox` (scripts/setup does)");
}

std::string gnuplot_script(const Chart& chart, PictureFormat format, const std::string& output) {
  // One legend for the whole chart, under its title: a run has one colour in
  // every panel, so the panels need not repeat it and can use the full width.
  // It lists the curves of the panel that has the most.
  std::size_t key_panel = 0;
  for (std::size_t p = 0; p < chart.panels.size(); ++p)
    if (chart.panels[p].curves.size() > chart.panels[key_panel].curves.size()) key_panel = p;
  const int top_px = kTitleHeightPx + kKeyRowHeightPx * legend_rows(chart) + kKeyGapPx + kPanelTitlePx;
  const int height = chart_height_px(chart);
  auto fraction = [&](int px) { return static_cast<double>(px) / height; };

  std::ostringstream s;
  s << std::setprecision(4);
  // noenhanced: metric names and recipe keys are full of '_', which enhanced
  // text would turn into subscripts.
  if (format == PictureFormat::svg)
    s << "set terminal svg size " << kWidthPx << "," << height << " noenhanced font 'Sans,13' background '#ffffff'\n";
  else
    s << "set terminal pngcairo size " << kWidthPx << "," << height
      << " noenhanced font 'Sans,11' background '#ffffff'\n";
  s << "set output " << quoted(output) << "\n"
    << "set encoding utf8\n"
    << "set grid xtics ytics lc rgb '#dddddd'\n"
    << "set border 3\nset tics nomirror\n";
  // Every x here (step, epoch, time, workers) starts at 0, so do the axes:
  // panels line up, and the ideal scaling line points back to the origin.
  s << "set xrange [0:*]\n";
  if (chart.whole_number_x) s << "set xtics 1\nset offsets 0, graph 0.08, graph 0.12, 0\n";
  else s << "set autoscale xfixmax\n";
  s << "set multiplot layout " << chart.panels.size() << ",1 title " << quoted(chart.title) << " font ',15'"
    << " margins screen 0.08, 0.97, " << fraction(kBottomMarginPx) << ", " << 1 - fraction(top_px)
    << " spacing screen 0, " << fraction(kPanelGapPx) << "\n";
  for (std::size_t p = 0; p < chart.panels.size(); ++p) {
    const Panel& panel = chart.panels[p];
    if (p == key_panel)
      s << "set key at screen 0.5, screen " << 1 - fraction(kTitleHeightPx) << " center top horizontal maxcols "
        << legend_columns(chart) << " maxrows " << legend_rows(chart)
        << " Left reverse noautotitle samplen 4 width 3\n";
    else s << "unset key\n";
    // A panel's own x axis, then the chart's again for the next panel.
    const bool own_x_range = panel.x_log || panel.x_fits_data;
    if (panel.x_log) s << "set logscale x\n";
    if (own_x_range) s << "set xrange [*:*]\nset autoscale xfix\nset offsets graph 0.06, graph 0.06, 0, 0\n";
    if (!panel.x_categories.empty()) {
      s << "set xrange [-0.5:" << static_cast<double>(panel.x_categories.size()) - 0.5 << "]\nset xtics (";
      for (std::size_t i = 0; i < panel.x_categories.size(); ++i)
        s << (i ? ", " : "") << quoted(panel.x_categories[i]) << " " << i;
      s << ")\n";
    }
    s << "set title " << quoted(panel.title) << " font ',13'\n"
      << "set xlabel " << quoted(panel.x_label.empty() ? chart.x_label : panel.x_label) << "\n"
      << "set ylabel " << quoted(panel.y_label) << "\n"
      << (panel.y_is_share ? "set yrange [0:1]\n" : panel.y_from_zero ? "set yrange [0:*]\n" : "set autoscale y\n") << "plot ";
    for (std::size_t c = 0; c < panel.curves.size(); ++c) {
      const Curve& curve = panel.curves[c];
      if (c > 0) s << ", \\\n     ";
      s << quoted(data_file(p, c)) << " using 1:2 " << curve_style(curve) << " title " << quoted(curve.label);
      if (!curve.point_labels.empty())
        s << ", \\\n     " << quoted(labels_file(p, c))
          << " using 1:2:3 with labels offset char 0,1.2 font ',11' tc rgb '#333333' notitle";
    }
    s << "\n";
    if (panel.x_log) s << "unset logscale x\n";
    if (own_x_range) s << "set xrange [0:*]\nset offsets 0, 0, 0, 0\n";
    if (!panel.x_categories.empty()) s << "set xtics autofreq\nset xrange [0:*]\n";
  }
  s << "unset multiplot\nset output\n";
  return s.str();
}

void draw_chart(const Chart& chart, const std::string& path) {
  const PictureFormat format = picture_format_of(path);
  const fs::path target = fs::absolute(path);
  if (!fs::is_directory(target.parent_path()))
    throw UsageError("plot: -o " + path + ": directory " + target.parent_path().string() + " does not exist");
  const std::string gnuplot = find_gnuplot();

  TemporaryDirectory dir("plot");
  for (std::size_t p = 0; p < chart.panels.size(); ++p) {
    for (std::size_t c = 0; c < chart.panels[p].curves.size(); ++c) {
      const Curve& curve = chart.panels[p].curves[c];
      std::ostringstream points, labels;
      points << std::setprecision(17);
      labels << std::setprecision(17);
      for (std::size_t i = 0; i < curve.points.size(); ++i) {
        points << curve.points[i].first << " " << curve.points[i].second << "\n";
        if (i < curve.point_labels.size())
          labels << curve.points[i].first << " " << curve.points[i].second << " \""
                 << without_double_quotes(curve.point_labels[i]) << "\"\n";
      }
      write_text(dir.path() / data_file(p, c), points.str());
      if (!curve.point_labels.empty()) write_text(dir.path() / labels_file(p, c), labels.str());
    }
  }
  const fs::path picture = dir.path() / (format == PictureFormat::svg ? "chart.svg" : "chart.png");
  // The data files are named relative to the script's directory: gnuplot runs there.
  std::string script = "cd " + quoted(dir.path().string()) + "\n" + gnuplot_script(chart, format, picture.string());
  write_text(dir.path() / "chart.gp", script);

  const fs::path log = dir.path() / "gnuplot.log";
  const int status = run_program(gnuplot, {(dir.path() / "chart.gp").string()}, log);
  if (status == -1) throw Error("plot: cannot run " + gnuplot + "; reinstall it with `apt-get install gnuplot-nox`");
  if (status != 0 || !fs::exists(picture) || fs::file_size(picture) == 0)
    throw Error("plot: gnuplot failed (exit " + std::to_string(status) + "): " + first_line_of_file(log));
  move_into_place(picture, target);
}

}  // namespace orchestrate::plot
