// The shared core of OLS and the Huber IRLS steps: (weighted) least squares with an intercept,
// solved through the centred normal equations.
//
// Why centred normal equations rather than a QR of the n x p design: p is 2 or 3 here and n runs
// to millions, so two streaming passes (means, then centred cross-products) cost O(n p^2) with no
// n x p copy, while centring removes the intercept's ill-conditioning (tokens in the hundreds,
// times in the thousands) that makes raw normal equations lose digits. The k x k system
// (k = p - 1 slopes) is then solved by Eigen after an explicit rank check, so a singular design
// gets a message naming the column instead of a NaN.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <Eigen/Dense>

namespace overhead::stats {

// One column of the design besides the intercept.
struct Regressor {
  std::string name;
  std::span<const double> values;
};

struct LeastSquaresSolution {
  Eigen::VectorXd beta;       // intercept first, then one slope per regressor
  Eigen::MatrixXd xtwx_inv;   // (X' W X)^-1 over the full design, intercept included
  double sum_weights = 0;
};

// Checks sizes and finiteness and that n >= p + 1 (at least one residual degree of freedom);
// throws StatsError naming the offending column or row.
void check_design(std::span<const double> y, std::span<const Regressor> regressors);

// Solves min sum w_i (y_i - x_i'b)^2; `weights` empty means all 1. Throws StatsError for a
// constant regressor or collinear regressors (singular design). `checked` = the caller already
// ran check_design and the constant-column test on these columns (IRLS steps skip repeating them).
LeastSquaresSolution solve_least_squares(std::span<const double> y, std::span<const Regressor> regressors,
                                         std::span<const double> weights = {}, bool checked = false);

// y - X beta.
void residuals(std::span<const double> y, std::span<const Regressor> regressors, const Eigen::VectorXd& beta,
               std::vector<double>& out);

}  // namespace overhead::stats
