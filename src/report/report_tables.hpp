// The analysis as tables, shared by the Markdown, HTML and CSV writers.
#pragma once

#include <vector>

#include "report/analysis.hpp"
#include "report/table.hpp"

namespace overhead::report {

Table token_table(const Analysis& a);
Table case_table(const Analysis& a);
Table fit_table(const Analysis& a);          // every fit, one row per coefficient
Table headline_table(const Analysis& a);     // OLS (a) of the cycle time: alpha, beta, R^2
Table modes_table(const Analysis& a);
Table prediction_table(const Analysis& a);
Table histogram_table(const Analysis& a);    // the bins, for plotting elsewhere
std::vector<Table> all_tables(const Analysis& a);

}  // namespace overhead::report
