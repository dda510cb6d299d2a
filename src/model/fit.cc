#include "model/fit.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <optimization.h>
#include <Eigen/Dense>

#include "oa/energy_events.h"

namespace oaprof::model {
namespace {

// Below this ratio of smallest to largest singular value of the scaled design, two or more
// columns are taken as collinear: their coefficients cannot be told apart.
constexpr double kCollinearRatio = 1e-7;

struct Design {
  Eigen::MatrixXd x;               // samples × active columns: window seconds, then events
  Eigen::VectorXd y;               // joules
  std::vector<int> columns;        // active columns: -1 static, k event k
  std::vector<std::string> names;  // of the active columns
};

// Non-negative least squares: min ‖x b − y‖ over b ≥ 0, as the convex QP
// ½ bᵀ(xᵀx)b − (xᵀy)ᵀb with b ≥ 0, solved by ALGLIB's BLEIC QP. Columns are scaled to unit norm
// first so the problem is well conditioned whatever the units.
Eigen::VectorXd nnls(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) {
  const auto p = static_cast<alglib::ae_int_t>(x.cols());
  Eigen::VectorXd norms = x.colwise().norm().transpose();
  for (Eigen::Index j = 0; j < norms.size(); ++j) {
    if (norms(j) == 0) norms(j) = 1;
  }
  const double y_norm = y.norm() > 0 ? y.norm() : 1;
  const Eigen::MatrixXd a = x * norms.cwiseInverse().asDiagonal();
  const Eigen::MatrixXd q = a.transpose() * a;
  const Eigen::VectorXd c = -(a.transpose() * (y / y_norm));
  alglib::real_2d_array aq;
  aq.setlength(p, p);
  alglib::real_1d_array ac;
  ac.setlength(p);
  for (alglib::ae_int_t i = 0; i < p; ++i) {
    ac[i] = c(i);
    for (alglib::ae_int_t j = 0; j < p; ++j) aq[i][j] = q(i, j);
  }
  alglib::minqpstate state;
  alglib::minqpcreate(p, state);
  alglib::minqpsetquadraticterm(state, aq);
  alglib::minqpsetlinearterm(state, ac);
  alglib::minqpsetbcall(state, 0.0, alglib::fp_posinf);
  alglib::minqpsetalgobleic(state, 0.0, 0.0, 0.0, 0);
  alglib::minqpoptimize(state);
  alglib::real_1d_array b;
  alglib::minqpreport report;
  alglib::minqpresults(state, b, report);
  if (report.terminationtype <= 0) {
    throw FitError(
        fmt::format("the non-negative least-squares solve failed (ALGLIB termination "
                    "type {})",
                    report.terminationtype));
  }
  Eigen::VectorXd out(p);
  for (alglib::ae_int_t i = 0; i < p; ++i) out(i) = b[i] / norms(i) * y_norm;
  return out;
}

Design build_design(const std::vector<Sample>& samples, const oa::EnergyEventSet& set) {
  const auto n = static_cast<Eigen::Index>(samples.size());
  const auto k = static_cast<Eigen::Index>(set.events.size());
  Eigen::MatrixXd all(n, k + 1);
  Design d;
  d.y.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const Sample& s = samples[static_cast<std::size_t>(i)];
    all(i, 0) = s.window_s;
    for (Eigen::Index e = 0; e < k; ++e) {
      all(i, e + 1) = oa::event_value(set.events[static_cast<std::size_t>(e)], s.deltas);
    }
    d.y(i) = s.energy_j;
  }
  // An event the sweep never moved has no information: left out (uncalibrated).
  for (Eigen::Index j = 0; j <= k; ++j) {
    if (j > 0 && all.col(j).cwiseAbs().maxCoeff() == 0) continue;
    d.columns.push_back(static_cast<int>(j) - 1);
    d.names.emplace_back(j == 0 ? "static_power"
                                : set.events[static_cast<std::size_t>(j - 1)].name);
  }
  d.x.resize(n, static_cast<Eigen::Index>(d.columns.size()));
  for (std::size_t c = 0; c < d.columns.size(); ++c) {
    d.x.col(static_cast<Eigen::Index>(c)) = all.col(d.columns[c] + 1);
  }
  return d;
}

std::set<std::string> kernels_of(const std::vector<Sample>& samples) {
  std::set<std::string> kernels;
  for (const Sample& s : samples) kernels.insert(s.kernel);
  return kernels;
}

void require_enough_kernels(const std::vector<Sample>& samples, const Design& d) {
  const std::size_t kernels = kernels_of(samples).size();
  const std::size_t coefficients = d.columns.size();
  if (kernels <= coefficients || samples.size() <= coefficients + 1) {
    throw FitError(fmt::format(
        "the calibration has {} kernels ({} windows) for {} coefficients ({}): a fit needs more "
        "kernels than coefficients and more windows than coefficients + 1; run the whole "
        "calibration sweep (docs/energy.md)",
        kernels, samples.size(), coefficients, fmt::join(d.names, ", ")));
  }
}

// Columns whose scaled design has a (near) null direction: the coefficients the sweep cannot
// tell apart, named.
void require_independent_columns(const Design& d) {
  Eigen::VectorXd norms = d.x.colwise().norm().transpose();
  const Eigen::MatrixXd a = d.x * norms.cwiseInverse().asDiagonal();
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(a, Eigen::ComputeThinV);
  const Eigen::VectorXd& sv = svd.singularValues();
  if (sv(sv.size() - 1) >= kCollinearRatio * sv(0)) return;
  const Eigen::VectorXd null = svd.matrixV().col(sv.size() - 1);
  std::vector<std::string> involved;
  for (Eigen::Index j = 0; j < null.size(); ++j) {
    if (std::abs(null(j)) > 0.1) involved.push_back(d.names[static_cast<std::size_t>(j)]);
  }
  throw FitError(fmt::format(
      "the calibration cannot tell {} apart: every kernel moves them in the same proportion "
      "(collinear); add kernels that move one without the others",
      fmt::join(involved, " and ")));
}

// Percentile intervals from refits on the fitted values plus resampled residuals (inflated by
// √(n / (n − p)) for the degrees of freedom the fit used).
std::pair<Eigen::VectorXd, Eigen::VectorXd> bootstrap_intervals(const Design& d,
                                                                const Eigen::VectorXd& beta,
                                                                const FitOptions& o) {
  const Eigen::VectorXd fitted = d.x * beta;
  const Eigen::VectorXd residuals = d.y - fitted;
  const auto n = d.y.size();
  const auto p = beta.size();
  const double inflate = std::sqrt(static_cast<double>(n) / static_cast<double>(n - p));
  std::mt19937_64 rng(o.seed);
  std::uniform_int_distribution<Eigen::Index> pick(0, n - 1);
  std::vector<std::vector<double>> draws(static_cast<std::size_t>(p));
  for (int r = 0; r < o.replicates; ++r) {
    Eigen::VectorXd y = fitted;
    for (Eigen::Index i = 0; i < n; ++i) y(i) += residuals(pick(rng)) * inflate;
    const Eigen::VectorXd b = nnls(d.x, y);
    for (Eigen::Index j = 0; j < p; ++j) draws[static_cast<std::size_t>(j)].push_back(b(j));
  }
  Eigen::VectorXd low(p), high(p);
  const double tail = (1 - o.confidence) / 2;
  for (Eigen::Index j = 0; j < p; ++j) {
    auto& v = draws[static_cast<std::size_t>(j)];
    std::sort(v.begin(), v.end());
    auto at = [&](double q) {
      return v[static_cast<std::size_t>(std::lround(q * static_cast<double>(v.size() - 1)))];
    };
    low(j) = std::min(at(tail), beta(j));
    high(j) = std::max(at(1 - tail), beta(j));
  }
  return {low, high};
}

// Per kernel: measured energy, and what the fit without that kernel predicts for it.
std::vector<KernelError> leave_one_kernel_out(const std::vector<Sample>& samples, const Design& d) {
  std::vector<KernelError> out;
  for (const std::string& kernel : kernels_of(samples)) {
    std::vector<Eigen::Index> kept, held;
    for (std::size_t i = 0; i < samples.size(); ++i) {
      (samples[i].kernel == kernel ? held : kept).push_back(static_cast<Eigen::Index>(i));
    }
    KernelError e{kernel, 0, {}};
    for (Eigen::Index i : held) e.measured_j += d.y(i);
    if (kept.size() > d.columns.size()) {
      const Eigen::VectorXd b = nnls(d.x(kept, Eigen::all), d.y(kept));
      double modelled = 0;
      for (Eigen::Index i : held) modelled += d.x.row(i).dot(b);
      e.modelled_j = modelled;
    }
    out.push_back(std::move(e));
  }
  return out;
}

double rms_relative(const std::vector<KernelError>& errors) {
  double sum = 0;
  int n = 0;
  for (const KernelError& e : errors) {
    if (!e.modelled_j || e.measured_j <= 0) continue;
    const double rel = (*e.modelled_j - e.measured_j) / e.measured_j;
    sum += rel * rel;
    ++n;
  }
  return n == 0 ? 0 : std::sqrt(sum / n);
}

std::vector<KernelError> residuals_per_kernel(const std::vector<Sample>& samples, const Design& d,
                                              const Eigen::VectorXd& beta) {
  std::map<std::string, KernelError> by_kernel;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    KernelError& e = by_kernel[samples[i].kernel];
    e.kernel = samples[i].kernel;
    e.measured_j += d.y(static_cast<Eigen::Index>(i));
    e.modelled_j = e.modelled_j.value_or(0) + d.x.row(static_cast<Eigen::Index>(i)).dot(beta);
  }
  std::vector<KernelError> out;
  for (auto& [name, e] : by_kernel) out.push_back(std::move(e));
  return out;
}

Coefficient coefficient(const Design& d, std::size_t c, const Eigen::VectorXd& beta,
                        const Eigen::VectorXd& low, const Eigen::VectorXd& high, std::string unit) {
  const auto j = static_cast<Eigen::Index>(c);
  Coefficient out{d.names[c], std::move(unit), beta(j), low(j), high(j), true, 0, 0};
  const Eigen::VectorXd rates = d.x.col(j).cwiseQuotient(d.x.col(0));
  out.rate_min = rates.minCoeff();
  out.rate_max = rates.maxCoeff();
  return out;
}

}  // namespace

EnergyModel fit_energy_model(const std::vector<Sample>& samples, const ModelIdentity& identity,
                             const FitOptions& options) {
  const oa::EnergyEventSet* set = oa::energy_events(identity.generation);
  if (set == nullptr) {
    throw FitError(fmt::format("no energy model is defined for {} (Gen9 and Gen12 only)",
                               oa::generation_name(identity.generation)));
  }
  if (samples.empty()) throw FitError("the calibration has no windows: nothing to fit");
  const Design d = build_design(samples, *set);
  require_enough_kernels(samples, d);
  require_independent_columns(d);
  const Eigen::VectorXd beta = nnls(d.x, d.y);
  const auto [low, high] = bootstrap_intervals(d, beta, options);

  EnergyModel m;
  m.device = identity.device;
  m.platform = identity.platform;
  m.generation = identity.generation;
  m.driver = identity.driver;
  m.metric_set = identity.metric_set;
  m.energy = identity.energy;
  m.freq_min_mhz = std::min_element(samples.begin(), samples.end(), [](auto& a, auto& b) {
                     return a.freq_mhz < b.freq_mhz;
                   })->freq_mhz;
  m.freq_max_mhz = std::max_element(samples.begin(), samples.end(), [](auto& a, auto& b) {
                     return a.freq_mhz < b.freq_mhz;
                   })->freq_mhz;
  m.static_power = coefficient(d, 0, beta, low, high, "W");
  for (std::size_t k = 0; k < set->events.size(); ++k) {
    const auto it = std::find(d.columns.begin(), d.columns.end(), static_cast<int>(k));
    if (it == d.columns.end()) {
      m.events.push_back({std::string(set->events[k].name), std::string(set->events[k].unit), 0, 0,
                          0, false, 0, 0});
      continue;
    }
    m.events.push_back(coefficient(d, static_cast<std::size_t>(it - d.columns.begin()), beta, low,
                                   high, std::string(set->events[k].unit)));
  }
  m.interval_method = fmt::format("residual bootstrap, {} replicates, {:.0f}% percentile interval",
                                  options.replicates, options.confidence * 100);
  m.confidence = options.confidence;
  m.residuals = residuals_per_kernel(samples, d, beta);
  m.leave_one_out = leave_one_kernel_out(samples, d);
  m.loo_rms_relative = rms_relative(m.leave_one_out);
  return m;
}

}  // namespace oaprof::model
