// A table of formatted cells and its three renderings: Markdown (report.md), CSV (one file per
// table, RFC 4180 quoting) and HTML (index.html).
#pragma once

#include <string>
#include <vector>

namespace overhead::report {

struct Table {
  std::string name;  // file stem of its CSV, e.g. "token_stats"
  std::string title;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

std::string to_markdown(const Table& t);
std::string to_csv(const Table& t);
std::string to_html(const Table& t);
std::string html_escape(const std::string& s);

// Number formatting shared by the writers: fixed decimals, thousands separators for counts, and
// "n/a" for NaN.
std::string fixed(double v, int decimals);
std::string count(double v);
std::string general(double v);  // 6 significant digits
std::string percent(double share, int decimals = 1);

}  // namespace overhead::report
