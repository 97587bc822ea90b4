#include "stats/least_squares.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "stats/errors.hpp"

namespace overhead::stats {

namespace {

std::string format_value(double v) {
  std::ostringstream s;
  s.precision(12);
  s << v;
  return s.str();
}

}  // namespace

void check_design(std::span<const double> y, std::span<const Regressor> regressors) {
  const std::size_t n = y.size();
  const std::size_t p = regressors.size() + 1;
  for (const Regressor& r : regressors) {
    if (r.values.size() != n) {
      throw StatsError("regressor '" + r.name + "' has " + std::to_string(r.values.size()) +
                       " values but the response has " + std::to_string(n));
    }
  }
  if (n < p + 1) {
    throw StatsError("too few observations: " + std::to_string(n) + " for " + std::to_string(p) +
                     " coefficients (need at least " + std::to_string(p + 1) +
                     " to have a residual degree of freedom)");
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(y[i])) throw StatsError("response value " + std::to_string(i) + " is not finite");
  }
  for (const Regressor& r : regressors) {
    for (std::size_t i = 0; i < n; ++i) {
      if (!std::isfinite(r.values[i])) {
        throw StatsError("regressor '" + r.name + "' value " + std::to_string(i) + " is not finite");
      }
    }
  }
}

LeastSquaresSolution solve_least_squares(std::span<const double> y, std::span<const Regressor> regressors,
                                         std::span<const double> weights, bool checked) {
  if (!checked) check_design(y, regressors);
  const std::size_t n = y.size();
  const std::size_t k = regressors.size();
  const bool weighted = !weights.empty();
  auto w_at = [&](std::size_t i) { return weighted ? weights[i] : 1.0; };

  for (const Regressor& r : checked ? std::span<const Regressor>() : regressors) {
    const auto [lo, hi] = std::minmax_element(r.values.begin(), r.values.end());
    if (*lo == *hi) {
      throw StatsError("singular design: regressor '" + r.name + "' is constant (every value is " +
                       format_value(*lo) + "), so its coefficient cannot be told from the intercept");
    }
  }

  // Pass 1: weighted means.
  double sw = 0, sy = 0;
  std::vector<double> sx(k, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double w = w_at(i);
    sw += w;
    sy += w * y[i];
    for (std::size_t j = 0; j < k; ++j) sx[j] += w * regressors[j].values[i];
  }
  if (!(sw > 0)) throw StatsError("weights sum to zero");
  const double my = sy / sw;
  Eigen::VectorXd mx(static_cast<Eigen::Index>(k));
  for (std::size_t j = 0; j < k; ++j) mx(static_cast<Eigen::Index>(j)) = sx[j] / sw;

  // Pass 2: centred cross-products S = Xc' W Xc and c = Xc' W yc.
  Eigen::MatrixXd s = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(k));
  Eigen::VectorXd c = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(k));
  std::vector<double> xc(k);
  for (std::size_t i = 0; i < n; ++i) {
    const double w = w_at(i);
    const double yc = y[i] - my;
    for (std::size_t j = 0; j < k; ++j) xc[j] = regressors[j].values[i] - mx(static_cast<Eigen::Index>(j));
    for (std::size_t a = 0; a < k; ++a) {
      const double wxa = w * xc[a];
      c(static_cast<Eigen::Index>(a)) += wxa * yc;
      for (std::size_t b = 0; b <= a; ++b) s(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) += wxa * xc[b];
    }
  }
  s = s.selfadjointView<Eigen::Lower>();

  // Rank check on the correlation form, so the threshold does not depend on the columns' units.
  const Eigen::VectorXd scale = s.diagonal().cwiseSqrt().cwiseInverse();
  const Eigen::MatrixXd corr = scale.asDiagonal() * s * scale.asDiagonal();
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(corr, Eigen::EigenvaluesOnly);
  if (k > 0 && eig.eigenvalues().minCoeff() < 1e-12) {
    std::string names;
    for (const Regressor& r : regressors) names += (names.empty() ? "'" : ", '") + r.name + "'";
    throw StatsError("singular design: regressors " + names + " are collinear");
  }

  Eigen::LDLT<Eigen::MatrixXd> ldlt(s);
  const Eigen::MatrixXd s_inv = ldlt.solve(Eigen::MatrixXd::Identity(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(k)));
  const Eigen::VectorXd slopes = ldlt.solve(c);

  LeastSquaresSolution out;
  const auto p = static_cast<Eigen::Index>(k + 1);
  out.beta.resize(p);
  out.beta(0) = my - mx.dot(slopes);
  out.beta.tail(p - 1) = slopes;
  // Inverse of the full X'WX from the centred blocks (block inverse of [[sw, sw m'], [sw m, S + sw m m']]).
  out.xtwx_inv.resize(p, p);
  const Eigen::VectorXd s_inv_m = s_inv * mx;
  out.xtwx_inv(0, 0) = 1.0 / sw + mx.dot(s_inv_m);
  out.xtwx_inv.block(1, 0, p - 1, 1) = -s_inv_m;
  out.xtwx_inv.block(0, 1, 1, p - 1) = -s_inv_m.transpose();
  out.xtwx_inv.block(1, 1, p - 1, p - 1) = s_inv;
  out.sum_weights = sw;
  return out;
}

void residuals(std::span<const double> y, std::span<const Regressor> regressors, const Eigen::VectorXd& beta,
               std::vector<double>& out) {
  out.resize(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) {
    double fitted = beta(0);
    for (std::size_t j = 0; j < regressors.size(); ++j) fitted += beta(static_cast<Eigen::Index>(j + 1)) * regressors[j].values[i];
    out[i] = y[i] - fitted;
  }
}

}  // namespace overhead::stats
