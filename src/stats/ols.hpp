// Ordinary least squares with an intercept and the inference statsmodels' OLS reports:
// coefficients, standard errors, t, two-sided p (Student t, n - p degrees of freedom), 95%
// intervals, R^2 (centred), adjusted R^2, residual standard deviation sqrt(SSR / (n - p)), n.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "stats/least_squares.hpp"

namespace overhead::stats {

struct Coefficient {
  std::string name;  // "const" for the intercept, else the regressor's name
  double estimate = 0;
  double std_error = 0;
  double t = 0;        // estimate / std_error (a z statistic for the robust fit)
  double p = 0;        // two-sided
  double ci_low = 0;   // 95% interval
  double ci_high = 0;
};

struct OlsFit {
  std::vector<Coefficient> coefficients;
  std::size_t n = 0;
  double df_resid = 0;
  double r_squared = 0;
  double adj_r_squared = 0;
  double resid_sd = 0;  // sqrt(SSR / df_resid), statsmodels' sqrt(scale)
  double ssr = 0;
  double f_statistic = 0;  // of all slopes = 0
  double f_p = 0;
};

// Throws StatsError on too few observations, non-finite values or a singular design.
OlsFit ols(std::span<const double> y, std::span<const Regressor> regressors);

// Fills t, p and the 95% interval from estimate and std_error (Student t with df; df <= 0 means
// the standard normal, as for the robust fit).
void fill_inference(Coefficient& c, double df);

}  // namespace overhead::stats
