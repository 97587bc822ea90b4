// Student t and standard normal tail probabilities and quantiles (GSL underneath), the pieces
// that turn an estimate and its standard error into t, p and a confidence interval.
#pragma once

namespace overhead::stats {

// Two-sided p-value of a t statistic with `df` degrees of freedom: 2 * P(T > |t|).
double student_t_two_sided_p(double t, double df);
// The quantile t_{p, df} (e.g. p = 0.975 for a 95% interval).
double student_t_quantile(double p, double df);
// Two-sided p-value under the standard normal: 2 * P(Z > |z|).
double normal_two_sided_p(double z);
double normal_quantile(double p);

}  // namespace overhead::stats
