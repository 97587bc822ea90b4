#include "stats/huber.hpp"

#include <cmath>

#include "stats/quantile.hpp"

namespace overhead::stats {

namespace {

// scipy.stats.norm.ppf(0.75): MAD of a normal sample / this = its standard deviation.
constexpr double kMadNormal = 0.6744897501960817;

double mad_about_zero(const std::vector<double>& resid, std::vector<double>& scratch) {
  scratch.resize(resid.size());
  for (std::size_t i = 0; i < resid.size(); ++i) scratch[i] = std::fabs(resid[i]);
  return median_inplace(scratch) / kMadNormal;
}

double huber_rho(double z, double t) {
  const double a = std::fabs(z);
  return a <= t ? 0.5 * z * z : t * a - 0.5 * t * t;
}

// statsmodels' deviance: sum rho(resid / scale_wls), scale_wls = sum(w r^2) / (n - p).
double deviance(const std::vector<double>& resid, std::span<const double> w, double df_resid, double t) {
  double wss = 0;
  for (std::size_t i = 0; i < resid.size(); ++i) wss += (w.empty() ? 1.0 : w[i]) * resid[i] * resid[i];
  const double scale_wls = wss / df_resid;
  double dev = 0;
  for (double r : resid) dev += huber_rho(r / scale_wls, t);
  return dev;
}

}  // namespace

RobustFit huber(std::span<const double> y, std::span<const Regressor> regressors, const HuberOptions& options) {
  const std::size_t n = y.size();
  const std::size_t p = regressors.size() + 1;
  LeastSquaresSolution ls = solve_least_squares(y, regressors);
  const Eigen::MatrixXd unweighted_inv = ls.xtwx_inv;  // statsmodels' normalized_cov_params
  const double df_resid = static_cast<double>(n - p);

  std::vector<double> resid, scratch, weights(n, 1.0);
  residuals(y, regressors, ls.beta, resid);
  double scale = mad_about_zero(resid, scratch);
  double previous_dev = deviance(resid, {}, df_resid, options.t);
  int iteration = 1;
  bool converged = false;
  while (true) {
    if (scale == 0.0) break;  // a perfect fit of the weighted data: nothing left to reweight
    for (std::size_t i = 0; i < n; ++i) {
      const double z = std::fabs(resid[i] / scale);
      weights[i] = z <= options.t ? 1.0 : options.t / z;
    }
    ls = solve_least_squares(y, regressors, weights, /*checked=*/true);
    residuals(y, regressors, ls.beta, resid);
    scale = mad_about_zero(resid, scratch);
    const double dev = deviance(resid, weights, df_resid, options.t);
    ++iteration;
    const double limit = options.relative ? options.tolerance * std::fabs(dev) : options.tolerance;
    const bool small_change = !(std::fabs(dev - previous_dev) > limit);
    previous_dev = dev;
    if (small_change) {
      converged = true;
      break;
    }
    if (iteration >= options.max_iterations) break;
  }

  // H1 covariance (Huber 1981): k^2 * [sum psi^2 / (n-p)] * scale^2 / [mean psi']^2 * (X'X)^-1.
  double sum_psi2 = 0, sum_dpsi = 0;
  std::size_t outside = 0;
  for (double r : resid) {
    const double z = scale == 0.0 ? 0.0 : r / scale;
    const bool inside = std::fabs(z) <= options.t;
    const double psi = inside ? z : options.t * (z > 0 ? 1.0 : (z < 0 ? -1.0 : 0.0));
    sum_psi2 += psi * psi;
    sum_dpsi += inside ? 1.0 : 0.0;
    outside += inside ? 0 : 1;
  }
  const double nd = static_cast<double>(n);
  const double m = sum_dpsi / nd;
  const double var_dpsi = m - m * m;  // psi' is 0/1, so its variance is m(1-m)
  const double k = 1.0 + static_cast<double>(p) / nd * var_dpsi / (m * m);
  const double factor = k * k * (sum_psi2 / df_resid) * scale * scale / (m * m);

  RobustFit fit;
  fit.n = n;
  fit.scale = scale;
  fit.iterations = iteration;
  fit.converged = converged;
  fit.downweighted_share = static_cast<double>(outside) / nd;
  for (std::size_t j = 0; j < p; ++j) {
    Coefficient c;
    c.name = j == 0 ? "const" : regressors[j - 1].name;
    const auto jj = static_cast<Eigen::Index>(j);
    c.estimate = ls.beta(jj);
    c.std_error = std::sqrt(factor * unweighted_inv(jj, jj));
    fill_inference(c, 0.0);
    fit.coefficients.push_back(std::move(c));
  }
  return fit;
}

}  // namespace overhead::stats
