// `ufq sim --plot DIR`: data files and a gnuplot script written into DIR,
// every plot drawn as PNG and SVG. Each run has its own colour (a
// colour-blind-safe palette) and its own marker, legends sit outside the
// data, and a sweep is drawn against the swept value on a numeric axis
// (logarithmic when it spans two decades or more), docs/simulator.md.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "sim/gnuplot.hpp"
#include "sim/report.hpp"
#include "ufq/tc/units.hpp"

namespace ufq::sim {
namespace {

double per_s(std::uint64_t n, Time span) {
  return span ? static_cast<double>(n) * 1e9 / static_cast<double>(span) : 0.0;
}

// Okabe and Ito's colour-blind-safe palette, then four of Paul Tol's: twelve
// runs get twelve colours; beyond that the markers still differ.
constexpr const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
                                    "#000000", "#999933", "#882255", "#332288", "#44AA99", "#AA4499"};
// gnuplot point types: filled circle, square, triangle, inverted triangle,
// diamond, pentagon, then open ones and crosses.
constexpr int kPoints[] = {7, 5, 9, 11, 13, 15, 6, 4, 8, 10, 12, 14, 1, 2, 3};

std::string style(std::size_t run) {
  return fmt::format("lc rgb '{}' pt {} ps 1.1", kColours[run % std::size(kColours)],
                     kPoints[run % std::size(kPoints)]);
}

// The swept values as numbers for the x axis.
struct SweptAxis {
  std::vector<double> x;
  std::string label;
  bool log = false;
  bool categorical = false;  // values that are not numbers: evenly spaced, named
  std::string extra_tics;    // "0" where a log axis cannot put it
};

bool plain_number(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return *end == '\0' && std::isfinite(out);
}

SweptAxis swept_axis(const std::string& key, const std::vector<std::string>& values) {
  SweptAxis a;
  const bool any_suffix = std::any_of(values.begin(), values.end(), [](const std::string& v) {
    return std::any_of(v.begin(), v.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
  });
  std::vector<double> x;
  const auto all = [&](auto parse) {
    x.clear();
    for (const std::string& v : values) {
      const std::optional<double> d = parse(v);
      if (!d) return false;
      x.push_back(*d);
    }
    return true;
  };
  if (any_suffix && all([](const std::string& v) {
        const auto ns = tc::parse_time_value(v, tc::TimeUnit::ns);
        return ns ? std::optional<double>(*ns / 1e3) : std::nullopt;
      })) {
    a.label = key + " (us)";
  } else if (all([](const std::string& v) {
               double d = 0;
               return plain_number(v, d) ? std::optional<double>(d) : std::nullopt;
             })) {
    a.label = key;
  } else if (all([](const std::string& v) {
               const auto bits = tc::parse_rate_bits(v);
               return bits ? std::optional<double>(*bits / 1e6) : std::nullopt;
             })) {
    a.label = key + " (Mbit/s)";
  } else {
    a.categorical = true;
    a.label = key;
    for (std::size_t i = 0; i < values.size(); ++i) a.x.push_back(static_cast<double>(i));
    return a;
  }
  a.x = x;
  double lo = 0, hi = 0;
  bool zero = false;
  for (double v : x) {
    if (v <= 0) {
      zero = zero || v == 0;
      continue;
    }
    lo = lo == 0 ? v : std::min(lo, v);
    hi = std::max(hi, v);
  }
  const bool negative = std::any_of(x.begin(), x.end(), [](double v) { return v < 0; });
  if (!negative && lo > 0 && hi / lo >= 100) {
    a.log = true;
    if (zero) {
      // 0 has no place on a log axis: drawn one decade left of the smallest value, labelled 0.
      const double at = lo / 10;
      for (double& v : a.x)
        if (v == 0) v = at;
      a.extra_tics = fmt::format("set xtics add ('0' {})\n", at);
      a.label += ", log scale; 0 drawn at the left";
    } else {
      a.label += ", log scale";
    }
  }
  return a;
}

// One plot drawn twice: PNG, then the same plot again as SVG.
std::string draw(const std::string& name, const std::string& body) {
  return fmt::format("reset\nset encoding utf8\nset grid\n"
                     "set terminal pngcairo size 960,600 noenhanced font ',11'\nset output '{0}.png'\n{1}"
                     "set terminal svg size 960,600 noenhanced dynamic font ',11'\nset output '{0}.svg'\nreplot\n"
                     "unset output\n",
                     name, body);
}

}  // namespace

std::vector<std::string> write_plots(const std::string& dir, const std::string& swept,
                                     const std::vector<std::string>& labels, const std::vector<SimResult>& runs) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  std::vector<std::string> files;
  auto open = [&](const std::string& name) {
    const std::string path = (fs::path(dir) / name).string();
    std::ofstream f(path);
    if (!f) throw std::runtime_error("cannot write " + path);
    files.push_back(path);
    return f;
  };
  const auto q = gnuplot_quote;
  // gnuplot runs in `dir`: the script names only files there, so the
  // directory's own name never appears in it.
  std::string script;

  // Interrupts/s over time: all interrupts solid, timer interrupts dashed, one colour per run.
  {
    auto f = open("interrupts.dat");
    for (std::size_t i = 0; i < runs.size(); ++i) {
      f << "# " << labels[i] << "\n";
      for (const Sample& s : runs[i].samples)
        f << static_cast<double>(s.end) / 1e9 << ' ' << per_s(s.n.interrupts(), s.end - s.start) << ' '
          << per_s(s.n.timer_interrupts, s.end - s.start) << '\n';
      f << "\n\n";
    }
    std::string body =
        "set title 'interrupts/s over time (solid: all interrupts, dashed: timer interrupts)'\n"
        "set xlabel 'simulated time (s)'\nset ylabel 'interrupts/s'\nset xrange [0:*]\nset yrange [0:*]\n"
        "set key outside right top vertical\nplot ";
    for (std::size_t i = 0; i < runs.size(); ++i)
      body += fmt::format("{}'interrupts.dat' index {} using 1:2 with linespoints {} lw 2 title {}, "
                          "'interrupts.dat' index {} using 1:3 with linespoints {} lw 1 dt 2 title {}",
                          i ? ", " : "", i, style(i), q(labels[i] + ": all"), i, style(i),
                          q(labels[i] + ": timer"));
    script += draw("interrupts", body + "\n");
  }
  // Lateness CDF (log x; a lateness of 0 is drawn at 1 ns).
  {
    auto f = open("lateness_cdf.dat");
    std::vector<std::size_t> points(runs.size(), 0);
    for (std::size_t i = 0; i < runs.size(); ++i) {
      f << "# " << labels[i] << "\n";
      const Histogram& h = runs[i].lateness;
      std::uint64_t seen = 0;
      for (unsigned b = 0; b < Histogram::kBuckets; ++b) {
        if (!h.bucket_count(b)) continue;
        seen += h.bucket_count(b);
        f << std::max(static_cast<double>(Histogram::lower(b)), 1.0) / 1e3 << ' '
          << static_cast<double>(seen) / static_cast<double>(h.count()) << '\n';
        ++points[i];
      }
      f << "\n\n";
    }
    std::string body =
        "set title 'lateness (departure - due), CDF over packets'\n"
        "set xlabel 'lateness (us, log scale; 0 drawn at 0.001)'\nset ylabel 'fraction of packets'\n"
        "set yrange [0:1.02]\nset logscale x\nset key outside right top vertical\nplot ";
    for (std::size_t i = 0; i < runs.size(); ++i)
      body += fmt::format("{}'lateness_cdf.dat' index {} using 1:2 with linespoints {} lw 2 pi {} title {}",
                          i ? ", " : "", i, style(i), std::max<std::size_t>(1, points[i] / 10), q(labels[i]));
    script += draw("lateness_cdf", body + "\n");
  }
  // Batch sizes.
  {
    auto f = open("batch.dat");
    for (std::size_t i = 0; i < runs.size(); ++i) {
      f << "# " << labels[i] << "\n";
      const Histogram& h = runs[i].batch;
      for (unsigned b = 1; b <= 64; ++b)
        f << b << ' ' << (h.count() ? static_cast<double>(h.bucket_count(b)) / static_cast<double>(h.count()) : 0)
          << '\n';
      f << "\n\n";
    }
    std::string body =
        "set title 'packets per qdisc run (runs that sent)'\nset xlabel 'packets per run'\n"
        "set ylabel 'fraction of runs'\nset yrange [0:*]\nset xrange [0.5:32.5]\nset xtics 1,2,32\n"
        "set key outside right top vertical\nplot ";
    for (std::size_t i = 0; i < runs.size(); ++i)
      body += fmt::format("{}'batch.dat' index {} using 1:2 with linespoints {} lw 2 title {}", i ? ", " : "", i,
                          style(i), q(labels[i]));
    script += draw("batch", body + "\n");
  }
  // The sweep: interrupts/s (left axis) and p99 lateness (right axis) against the swept value.
  if (runs.size() > 1) {
    std::vector<std::string> values;
    for (const std::string& l : labels) values.push_back(l.substr(l.find('=') + 1));
    const SweptAxis axis = swept_axis(swept, values);
    auto f = open("sweep.dat");
    f << "# " << swept << " (as plotted), value, interrupts/s, timer interrupts/s, p99 lateness (us)\n";
    for (std::size_t i = 0; i < runs.size(); ++i)
      f << fmt::format("{} \"{}\" {} {} {}\n", axis.x[i], values[i], runs[i].per_s(runs[i].total.n.interrupts()),
                       runs[i].per_s(runs[i].total.n.timer_interrupts),
                       static_cast<double>(runs[i].lateness.quantile(0.99)) / 1e3);
    std::string body = "set title " + q("sweep of " + swept) + "\nset xlabel " + q(axis.label) +
                       "\nset ylabel 'interrupts/s'\nset y2label 'p99 lateness (us)'\n"
                       "set ytics nomirror\nset y2tics\nset yrange [0:*]\nset y2range [0:*]\n"
                       "set key outside bottom center horizontal\n";
    std::string xtic;
    if (axis.categorical) {
      body += "set xtics rotate by -30\nset xrange [-0.5:" + std::to_string(runs.size()) + "-0.5]\n";
      xtic = ":xtic(2)";
    } else if (axis.log) {
      body += "set logscale x\nset xrange [*:*] noextend\nset offsets graph 0.04, graph 0.04, 0, 0\n" + axis.extra_tics;
    } else {
      body += "set offsets graph 0.04, graph 0.04, 0, 0\n";
    }
    body += fmt::format(
        "plot 'sweep.dat' using 1:3{} with linespoints {} lw 2 title 'interrupts/s (left)', "
        "'sweep.dat' using 1:4 with linespoints {} lw 2 title 'timer interrupts/s (left)', "
        "'sweep.dat' using 1:5 axes x1y2 with linespoints {} lw 2 dt 2 title 'p99 lateness, us (right)'\n",
        xtic, style(0), style(1), style(2));
    script += draw("sweep", body);
  }
  {
    auto f = open("plots.gp");
    f << script;
  }
  run_gnuplot(dir, "plots.gp");
  std::vector<std::string> names = {"interrupts", "lateness_cdf", "batch"};
  if (runs.size() > 1) names.push_back("sweep");
  for (const std::string& n : names)
    for (const char* ext : {".png", ".svg"}) files.push_back((fs::path(dir) / (n + ext)).string());
  return files;
}

}  // namespace ufq::sim
