#include "stats/ols.hpp"

#include <cmath>

#include <gsl/gsl_cdf.h>

#include "stats/distributions.hpp"

namespace overhead::stats {

void fill_inference(Coefficient& c, double df) {
  c.t = c.estimate / c.std_error;
  const bool normal = df <= 0;
  c.p = normal ? normal_two_sided_p(c.t) : student_t_two_sided_p(c.t, df);
  const double q = normal ? normal_quantile(0.975) : student_t_quantile(0.975, df);
  c.ci_low = c.estimate - q * c.std_error;
  c.ci_high = c.estimate + q * c.std_error;
}

OlsFit ols(std::span<const double> y, std::span<const Regressor> regressors) {
  const LeastSquaresSolution ls = solve_least_squares(y, regressors);
  std::vector<double> resid;
  residuals(y, regressors, ls.beta, resid);

  OlsFit fit;
  fit.n = y.size();
  const std::size_t p = regressors.size() + 1;
  fit.df_resid = static_cast<double>(fit.n - p);
  double ssr = 0;
  for (double r : resid) ssr += r * r;
  double mean = 0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(fit.n);
  double tss = 0;
  for (double v : y) tss += (v - mean) * (v - mean);
  fit.ssr = ssr;
  const double sigma2 = ssr / fit.df_resid;
  fit.resid_sd = std::sqrt(sigma2);
  fit.r_squared = 1.0 - ssr / tss;
  fit.adj_r_squared = 1.0 - (static_cast<double>(fit.n) - 1.0) / fit.df_resid * (1.0 - fit.r_squared);
  const double df_model = static_cast<double>(p - 1);
  fit.f_statistic = ((tss - ssr) / df_model) / sigma2;
  fit.f_p = gsl_cdf_fdist_Q(fit.f_statistic, df_model, fit.df_resid);

  for (std::size_t j = 0; j < p; ++j) {
    Coefficient c;
    c.name = j == 0 ? "const" : regressors[j - 1].name;
    const auto jj = static_cast<Eigen::Index>(j);
    c.estimate = ls.beta(jj);
    c.std_error = std::sqrt(sigma2 * ls.xtwx_inv(jj, jj));
    fill_inference(c, fit.df_resid);
    fit.coefficients.push_back(std::move(c));
  }
  return fit;
}

}  // namespace overhead::stats
