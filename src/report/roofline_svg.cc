#include "report/roofline_svg.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

namespace oaprof::report {
namespace {

// The roofline's canvas: plot area and legend column, in SVG user units.
constexpr double kWidth = 900, kHeight = 500;
constexpr double kPlotLeft = 80, kPlotRight = 560, kPlotTop = 40, kPlotBottom = 450;
constexpr double kLegendX = 580;
constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                    "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

// What tells the performance roofline and the power roofline apart.
struct ChartText {
  const char* id;
  const char* y_label;
  const char* compute_unit;
  const char* memory_unit;
  const char* point_class;  // the page counts `circle.point`: the performance roofline's
  const char* axes_class;
};
constexpr ChartText kPerformance{"roofline", "GFLOP/s", "GFLOP/s", "GB/s", "point", "axes"};
constexpr ChartText kPower{"power-roofline", "GFLOP/s per W", "GFLOP/s/W",
                           "GB/s/W",         "power-point",   "power-axes"};

double decade_floor(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double decade_ceil(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

std::string num(double v) { return fmt::format("{:.2f}", v); }

std::string si(double v) { return fmt::format("{:g}", v); }

double top_ceiling(const std::vector<Ceiling>& ceilings, bool compute) {
  double c = 0;
  for (const auto& ce : ceilings)
    if (ce.compute == compute) c = std::max(c, ce.value);
  return c;
}

RooflineLayout layout_of(const std::vector<Ceiling>& ceilings,
                         const std::vector<RooflinePoint>& points);

std::string axis_ticks(const LogScale& s, bool x_axis) {
  std::string out;
  for (double v = s.d0; v <= s.d1 * 1.0001; v *= 10) {
    const double p = s.map(v);
    if (x_axis) {
      out += fmt::format(
          "<line class=\"grid\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>"
          "<text class=\"tick\" x=\"{0}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
          num(p), kPlotTop, kPlotBottom, kPlotBottom + 16, si(v));
    } else {
      out += fmt::format(
          "<line class=\"grid\" x1=\"{1}\" x2=\"{2}\" y1=\"{0}\" y2=\"{0}\"/>"
          "<text class=\"tick\" x=\"{3}\" y=\"{0}\" text-anchor=\"end\" "
          "dominant-baseline=\"middle\">{4}</text>\n",
          num(p), kPlotLeft, kPlotRight, kPlotLeft - 6, si(v));
    }
  }
  return out;
}

// The title, the plot's frame, its ticks and axis labels; the group carries the axes' ranges
// for the page's script.
std::string chart_axes(const RooflineLayout& L, const std::string& title, const ChartText& text) {
  std::string s;
  s += fmt::format("<text class=\"title\" x=\"{}\" y=\"24\">{}</text>\n", kPlotLeft,
                   xml_escape(title));
  s += fmt::format(
      "<g class=\"{}\" data-x-min=\"{}\" data-x-max=\"{}\" data-y-min=\"{}\" "
      "data-y-max=\"{}\" data-left=\"{}\" data-right=\"{}\" data-top=\"{}\" "
      "data-bottom=\"{}\">\n",
      text.axes_class, si(L.x.d0), si(L.x.d1), si(L.y.d0), si(L.y.d1), kPlotLeft, kPlotRight,
      kPlotTop, kPlotBottom);
  s += fmt::format("<rect class=\"plot\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n",
                   kPlotLeft, kPlotTop, kPlotRight - kPlotLeft, kPlotBottom - kPlotTop);
  s += axis_ticks(L.x, true) + axis_ticks(L.y, false);
  s += fmt::format(
      "<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">arithmetic "
      "intensity (FLOP/byte)</text>\n",
      (kPlotLeft + kPlotRight) / 2, kPlotBottom + 38);
  s += fmt::format(
      "<text class=\"label\" transform=\"translate(20 {}) rotate(-90)\" "
      "text-anchor=\"middle\">{}</text>\n</g>\n",
      (kPlotTop + kPlotBottom) / 2, text.y_label);
  return s;
}

// Each ceiling's line in the plot (appended to `plot`) and its legend entry (to `legend`, from
// height `ly` down). A compute roof starts where the highest memory roof meets it; a memory roof
// ends where it meets the highest compute roof.
void chart_ceilings(const RooflineLayout& L, const std::vector<Ceiling>& ceilings,
                    const ChartText& text, std::string& plot, std::string& legend, double& ly) {
  const double cmax = top_ceiling(ceilings, true), bmax = top_ceiling(ceilings, false);
  for (std::size_t i = 0; i < ceilings.size(); ++i) {
    const Ceiling& c = ceilings[i];
    const char* colour = kPalette[i % std::size(kPalette)];
    const char* dash = c.measured ? "" : " stroke-dasharray=\"6 4\"";
    double x0, x1, y0, y1;
    if (c.compute) {
      x0 = bmax > 0 ? std::max(L.x.d0, c.value / bmax) : L.x.d0;
      x1 = L.x.d1;
      y0 = y1 = c.value;
    } else {
      x0 = std::max(L.x.d0, L.y.d0 / c.value);
      x1 = cmax > 0 ? std::min(L.x.d1, cmax / c.value) : L.x.d1;
      y0 = c.value * x0;
      y1 = c.value * x1;
    }
    plot += fmt::format(
        "<line class=\"ceiling {}\" data-label=\"{}\" data-value=\"{}\" x1=\"{}\" "
        "y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"{}><title>{} ({}): {:.4g} {}</title></line>\n",
        c.measured ? "measured" : "theoretical", xml_escape(c.label), si(c.value), num(L.x.map(x0)),
        num(L.y.map(y0)), num(L.x.map(x1)), num(L.y.map(y1)), colour, dash, xml_escape(c.label),
        xml_escape(c.device), c.value, c.compute ? text.compute_unit : text.memory_unit);
    legend += fmt::format(
        "<g class=\"legend-entry\"><line x1=\"{0}\" x2=\"{1}\" y1=\"{2}\" y2=\"{2}\" "
        "stroke=\"{3}\"{4}/><text x=\"{5}\" y=\"{2}\" dominant-baseline=\"middle\">"
        "{6} {7:.4g} {8}<title>{9}</title></text></g>\n",
        kLegendX, kLegendX + 24, num(ly), colour, dash, kLegendX + 30, xml_escape(c.label), c.value,
        c.compute ? text.compute_unit : text.memory_unit, xml_escape(c.device));
    ly += 18;
  }
}

// A kernel's point: filled for known work, hollow for an estimate from counters.
std::string chart_points(const RooflineLayout& L, const std::vector<RooflinePoint>& points,
                         const ChartText& text) {
  std::string s;
  for (const RooflinePoint& p : points) {
    const double cx = L.x.map(p.intensity), cy = L.y.map(p.gflops);
    s += fmt::format(
        "<g class=\"point-group\"><circle class=\"{}{}\" data-kernel=\"{}\" "
        "data-intensity=\"{}\" data-gflops=\"{}\" cx=\"{}\" cy=\"{}\" r=\"5\" {}>"
        "<title>{}{}</title></circle>",
        text.point_class, p.estimate ? " estimate" : " exact", xml_escape(p.kernel),
        si(p.intensity), si(p.gflops), num(cx), num(cy),
        p.estimate ? "fill=\"none\" stroke=\"#000\" stroke-width=\"1.5\"" : "fill=\"#000\"",
        xml_escape(p.detail), p.flags.empty() ? "" : xml_escape(" [flags: " + p.flags + "]"));
    s += fmt::format("<text class=\"point-label\" x=\"{}\" y=\"{}\">{}{}{}</text></g>\n",
                     num(cx + 7), num(cy - 7), xml_escape(p.kernel),
                     p.estimate ? " (estimate)" : "", p.modelled_energy ? " ~modelled" : "");
  }
  return s;
}

// The legend below the ceilings: the two point kinds, where the ceilings come from, and whether
// the figures are simulated.
std::string legend_tail(const std::vector<Ceiling>& ceilings, bool simulated, double ly) {
  std::string legend;
  ly += 8;
  legend += fmt::format(
      "<g class=\"legend-entry\"><circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"#000\"/>"
      "<text x=\"{}\" y=\"{}\" dominant-baseline=\"middle\">kernel, known work "
      "(kernel_runner)</text></g>\n",
      kLegendX + 12, num(ly), kLegendX + 30, num(ly));
  ly += 18;
  legend += fmt::format(
      "<g class=\"legend-entry\"><circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"none\" "
      "stroke=\"#000\" stroke-width=\"1.5\"/><text x=\"{}\" y=\"{}\" "
      "dominant-baseline=\"middle\">kernel, estimate from counters</text></g>\n",
      kLegendX + 12, num(ly), kLegendX + 30, num(ly));
  ly += 18;
  std::vector<std::string> sources;  // "dashed: peaks of DEVICE", "solid: measured on DEVICE"
  for (const Ceiling& c : ceilings) {
    std::string dev = c.device.size() > 36 ? c.device.substr(0, 35) + "…" : c.device;
    std::string line = (c.measured ? "solid: measured on " : "dashed: peaks of ") + dev;
    if (std::find(sources.begin(), sources.end(), line) == sources.end()) sources.push_back(line);
  }
  for (const std::string& line : sources) {
    legend += fmt::format(
        "<text class=\"legend-source\" x=\"{}\" y=\"{}\" "
        "dominant-baseline=\"middle\">{}</text>\n",
        kLegendX, num(ly), xml_escape(line));
    ly += 16;
  }
  if (simulated) {
    legend += fmt::format(
        "<text class=\"simulated\" x=\"{}\" y=\"{}\">simulated device: the "
        "counter figures are a model</text>\n",
        kLegendX, num(ly + 10));
  }
  return legend;
}

// The roofline's body (no <svg> wrapper): axes, ceilings, points, legend.
std::string chart_body(const std::vector<Ceiling>& ceilings,
                       const std::vector<RooflinePoint>& points, bool simulated,
                       const std::string& title, const ChartText& text) {
  const RooflineLayout L = layout_of(ceilings, points);
  std::string s = chart_axes(L, title, text);
  std::string legend;
  double ly = kPlotTop + 10;
  chart_ceilings(L, ceilings, text, s, legend, ly);
  s += chart_points(L, points, text);
  legend += legend_tail(ceilings, simulated, ly);
  s += "<g class=\"legend\">\n" + legend + "</g>\n";
  return s;
}

constexpr const char* kSvgStyle =
    ".grid{stroke:#ddd;stroke-width:1}.plot{fill:none;stroke:#444}.tick,.legend text,"
    ".point-label{font:11px sans-serif;fill:#222}.label{font:13px sans-serif}"
    ".title{font:bold 15px sans-serif}.ceiling{stroke-width:2}.simulated{font:bold 11px "
    "sans-serif;fill:#b00}";

std::string sweep_svg(const Sweep& sw, std::size_t index) {
  constexpr double w = 520, h = 260, l = 70, r = 500, t = 20, b = 220;
  double xmax = 0, ymax = 0;
  for (const auto& p : sw.points) {
    xmax = std::max(xmax, p.x);
    ymax = std::max(ymax, p.rate);
  }
  if (xmax <= 0) xmax = 1;
  if (ymax <= 0) ymax = 1;
  auto X = [&](double v) { return l + v / xmax * (r - l); };
  auto Y = [&](double v) { return b - v / (ymax * 1.1) * (b - t); };
  std::string s = fmt::format(
      "<svg class=\"sweep\" id=\"sweep-{}\" xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\">\n",
      index, w, h, w, h);
  s += fmt::format("<rect class=\"plot\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n", l, t,
                   r - l, b - t);
  for (int i = 0; i <= 4; ++i) {
    s += fmt::format(
        "<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{:.3g}</text>"
        "<text class=\"tick\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{:.3g}</text>\n",
        l - 4, num(Y(ymax * 1.1 * i / 4)), ymax * 1.1 * i / 4, num(X(xmax * i / 4)), b + 14,
        xmax * i / 4);
  }
  std::string line;
  for (const auto& p : sw.points) line += fmt::format("{},{} ", num(X(p.x)), num(Y(p.rate)));
  s += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"#1f77b4\"/>\n", line);
  for (const auto& p : sw.points) {
    if (!p.fills_hw_threads) continue;
    s += fmt::format(
        "<circle class=\"fill-mark\" cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"#d62728\">"
        "<title>all hardware threads filled: {} = {:g}, {:.4g} {}</title></circle>\n",
        num(X(p.x)), num(Y(p.rate)), sw.axis, p.x, p.rate, xml_escape(sw.unit));
  }
  s += fmt::format(
      "<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>"
      "<text class=\"label\" x=\"{}\" y=\"14\">{} ({}; red: all hardware threads "
      "filled)</text>\n</svg>\n",
      (l + r) / 2, b + 32, sw.axis, l, xml_escape(sw.kernel), xml_escape(sw.unit));
  return s;
}

std::string opt(const std::optional<double>& v, const char* fmtspec = "{:.4g}") {
  return v ? fmt::format(fmt::runtime(fmtspec), *v) : "–";
}

std::string flags_cell(const std::string& flags) {
  if (flags.empty()) return "<td class=\"flags clean\">clean</td>";
  return fmt::format("<td class=\"flags flagged\">⚠ {}</td>", xml_escape(flags));
}

std::string kernel_table(const RooflineModel& m) {
  std::string s =
      "<table id=\"kernels\"><thead><tr><th>kernel</th><th>source</th><th>launches</th>"
      "<th>time (ms)</th><th>GFLOP/s</th><th>GB/s</th><th>figures</th><th>flags</th>"
      "</tr></thead><tbody>\n";
  for (const KernelRow& k : m.kernels) {
    s += fmt::format(
        "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{:.4g}</td><td>{}</td>"
        "<td>{}</td><td>{}</td>{}</tr>\n",
        k.flags.empty() ? "clean" : "flagged", xml_escape(k.kernel), xml_escape(k.source),
        k.launches, k.time_ns / 1e6, opt(k.gflops), opt(k.gbps),
        k.estimate ? (k.simulated ? "estimate, simulated device" : "estimate from counters")
                   : "known work (kernel_runner)",
        flags_cell(k.flags));
  }
  return s + "</tbody></table>\n";
}

// Where a kernel's power is the energy model's (no launch had a measured window), the table's ~
// and the points' "~modelled" say so; this line says what they mean.
std::string modelled_energy_legend(const RooflineModel& m) {
  if (!m.any_modelled_energy) return "";
  return "<p id=\"modelled-energy\">~ modelled, not measured: the iGPU power of a kernel none of "
         "whose launches had a measured energy window is the energy model's (oaprof "
         "--energy-model: energy_model_j over the launches' GPU time; docs/energy.md).</p>\n";
}

std::string energy_section(const RooflineModel& m) {
  std::string s = "<h2>Energy</h2>\n";
  if (!m.any_energy) {
    return s +
           "<p class=\"none\">No input has iGPU energy (run oaprof with --energy and "
           "--json).</p>\n";
  }
  s += "<table id=\"energy\"><thead><tr><th>kernel</th><th>iGPU power (W)</th><th>energy per "
       "launch (mJ)</th><th>GFLOP/s per W</th><th>flags</th></tr></thead><tbody>\n";
  for (const KernelRow& k : m.kernels) {
    if (!k.power_w) continue;
    s += fmt::format(
        "<tr><td>{}</td><td>{}{}</td><td>{}</td><td>{}</td>{}</tr>\n", xml_escape(k.kernel),
        opt(k.power_w), k.power_modelled ? " ~" : "",
        k.energy_per_launch_j ? fmt::format("{:.4g}", *k.energy_per_launch_j * 1e3) : "–",
        opt(k.gflops_per_w), flags_cell(k.flags));
  }
  s += "</tbody></table>\n";
  if (m.power_ceilings.empty()) return s;
  s += fmt::format(
      "<svg id=\"{0}\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{1}\" "
      "height=\"{2}\" viewBox=\"0 0 {1} {2}\">\n{3}</svg>\n",
      kPower.id, kWidth, kHeight,
      chart_body(m.power_ceilings, m.power_points, m.any_simulated,
                 "Power roofline: GFLOP/s per watt", kPower));
  return s + modelled_energy_legend(m) +
         "<p>The power roofline's ceilings are the best efficiencies these inputs show "
         "(GFLOP/s per W and GB/s per W of their kernels), not theoretical figures.</p>\n";
}

std::string metadata(const RooflineModel& m) {
  std::string s = "<h2>Runs</h2>\n";
  for (const RunMeta& r : m.runs) {
    s += fmt::format("<table class=\"run\"><caption>{} ({})</caption><tbody>\n",
                     xml_escape(r.source), r.kind);
    for (const auto& [k, v] : r.fields) {
      s += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", xml_escape(k), xml_escape(v));
    }
    s += "</tbody></table>\n";
  }
  return s;
}

constexpr const char* kPageStyle =
    "body{font:14px sans-serif;margin:24px;color:#111;max-width:1100px}"
    "table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:3px 8px;"
    "text-align:left}caption{text-align:left;font-weight:bold}.flagged{background:#fff3cd}"
    ".flags.clean{color:#2a7}.banner{background:#fde2e1;border:1px solid #b00;padding:8px;"
    "font-weight:bold}tr.highlight{outline:2px solid #1f77b4}circle.highlight{stroke:#1f77b4;"
    "stroke-width:4}";

// Clicking a row of the kernel table rings the kernel's point; errors land in the page so that a
// headless browser's DOM shows them.
constexpr const char* kPageScript =
    "window.onerror=function(m){document.body.setAttribute('data-script-error',String(m));};"
    "document.querySelectorAll('#kernels tbody tr').forEach(function(tr){tr.addEventListener("
    "'click',function(){var k=tr.cells[0].textContent;document.querySelectorAll('circle.point')."
    "forEach(function(c){c.classList.toggle('highlight',c.getAttribute('data-kernel')===k);});"
    "tr.classList.toggle('highlight');});});"
    "document.body.setAttribute('data-points',String(document.querySelectorAll('circle.point')."
    "length));"
    "document.body.setAttribute('data-ready','1');";

}  // namespace

double LogScale::map(double v) const {
  return r0 + (std::log10(v) - std::log10(d0)) / (std::log10(d1) - std::log10(d0)) * (r1 - r0);
}

RooflineLayout roofline_layout(const RooflineModel& m) { return layout_of(m.ceilings, m.points); }

namespace {

RooflineLayout layout_of(const std::vector<Ceiling>& ceilings,
                         const std::vector<RooflinePoint>& points) {
  double xmin = 1e300, xmax = 0, ymin = 1e300, ymax = 0;
  auto x_in = [&](double v) {
    if (v > 0 && std::isfinite(v)) {
      xmin = std::min(xmin, v);
      xmax = std::max(xmax, v);
    }
  };
  auto y_in = [&](double v) {
    if (v > 0 && std::isfinite(v)) {
      ymin = std::min(ymin, v);
      ymax = std::max(ymax, v);
    }
  };
  for (const auto& p : points) {
    x_in(p.intensity);
    y_in(p.gflops);
  }
  for (const auto& c : ceilings) {
    if (c.compute) {
      y_in(c.value);
      for (const auto& b : ceilings)
        if (!b.compute) x_in(c.value / b.value);  // ridge points
    }
  }
  if (xmax == 0) xmin = 0.1, xmax = 10;
  if (ymax == 0) ymin = 1, ymax = 100;
  RooflineLayout L;
  L.x = {decade_floor(xmin / 2), decade_ceil(xmax * 2), kPlotLeft, kPlotRight};
  // The memory ceilings start at the left edge; their lowest value there sets the floor.
  for (const auto& c : ceilings)
    if (!c.compute) y_in(c.value * L.x.d0);
  L.y = {decade_floor(ymin), decade_ceil(ymax * 1.5), kPlotBottom, kPlotTop};
  if (L.y.d1 / L.y.d0 > 1e6) L.y.d0 = L.y.d1 / 1e6;  // six decades at most
  return L;
}

}  // namespace

std::string roofline_svg(const RooflineModel& m, const std::string& title) {
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg id=\"roofline\" "
      "xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 "
      "0 {0} {1}\">\n<style>{2}</style>\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"#fff\"/>\n{3}</svg>\n",
      kWidth, kHeight, kSvgStyle,
      chart_body(m.ceilings, m.points, m.any_simulated, title, kPerformance));
}

std::string html_report(const RooflineModel& m, const std::string& title) {
  std::string s = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>{}</title><style>{}{}</style></head>\n<body>\n<h1>{}</h1>\n",
      xml_escape(title), kPageStyle, kSvgStyle, xml_escape(title));
  if (m.any_simulated) {
    s += "<p class=\"banner\" id=\"simulated\">device: simulated — counter figures from a run on "
         "oaprof's simulated GPU are a model of the hardware, not measurements.</p>\n";
  }
  s += "<h2>Roofline</h2>\n";
  s += fmt::format(
      "<svg id=\"roofline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" "
      "height=\"{1}\" viewBox=\"0 0 {0} {1}\">\n{2}</svg>\n",
      kWidth, kHeight, chart_body(m.ceilings, m.points, m.any_simulated, title, kPerformance));
  s += "<p>Hollow markers are estimates from hardware counters (hover for the counters used); "
       "filled markers have known work. Dashed ceilings are theoretical peaks, solid ones measured "
       "by kernel_runner.</p>\n";
  s += energy_section(m);
  s += "<h2>Sweeps</h2>\n";
  if (m.sweeps.empty()) s += "<p class=\"none\">No kernel_runner sweep in the inputs.</p>\n";
  for (std::size_t i = 0; i < m.sweeps.size(); ++i) s += sweep_svg(m.sweeps[i], i);
  s += "<h2>Kernels</h2>\n" + kernel_table(m) + metadata(m);
  s += fmt::format("<script>{}</script>\n</body></html>\n", kPageScript);
  return s;
}

}  // namespace oaprof::report
