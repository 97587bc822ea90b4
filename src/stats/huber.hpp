// A robust fit for heavy-tailed times: Huber's M-estimator (t = 1.345) by iteratively reweighted
// least squares, step for step as statsmodels' RLM(M=HuberT()).fit() does it (OLS start, scale by
// MAD about 0, convergence when the deviance sum(rho(resid / wls_scale)) changes by <= tol, at
// most maxiter), with its default H1 covariance and normal-based p-values and intervals. So the
// committed statsmodels goldens check it too.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "stats/ols.hpp"

namespace overhead::stats {

struct HuberOptions {
  double t = 1.345;
  int max_iterations = 50;
  double tolerance = 1e-8;
  // statsmodels compares the absolute change of the deviance with `tolerance`. The deviance is a
  // sum over all items, so for a million items an absolute 1e-8 is never met and every fit runs to
  // max_iterations. relative = true compares |change| with tolerance * |deviance| instead (the
  // report's setting); false reproduces statsmodels step for step (the goldens' setting).
  bool relative = false;
};

struct RobustFit {
  std::vector<Coefficient> coefficients;  // t and p are z statistics (normal), as statsmodels reports
  std::size_t n = 0;
  double scale = 0;        // the MAD scale of the last iteration
  int iterations = 0;      // counted as statsmodels counts them (the OLS start is 1)
  bool converged = false;  // false when max_iterations stopped it
  double downweighted_share = 0;  // share of items with |resid/scale| > t
};

RobustFit huber(std::span<const double> y, std::span<const Regressor> regressors, const HuberOptions& options = {});

}  // namespace overhead::stats
