#include "report/table.hpp"

#include <cmath>
#include <cstdio>

namespace overhead::report {

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string to_markdown(const Table& t) {
  std::string out = "| ";
  for (const auto& h : t.header) out.append(h).append(" | ");
  out.pop_back();
  out += "\n|";
  for (std::size_t i = 0; i < t.header.size(); ++i) out += i == 0 ? "---|" : "---:|";
  out += "\n";
  for (const auto& row : t.rows) {
    out += "| ";
    for (const auto& cell : row) {
      std::string c = cell;
      for (std::size_t p = c.find('|'); p != std::string::npos; p = c.find('|', p + 2)) c.replace(p, 1, "\\|");
      out.append(c).append(" | ");
    }
    out.pop_back();
    out += "\n";
  }
  return out;
}

std::string to_csv(const Table& t) {
  auto cell = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) {
      if (c == '"') q.push_back('"');
      q.push_back(c);
    }
    q.push_back('"');
    return q;
  };
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) out.push_back(',');
      out.append(cell(cells[i]));
    }
    out += "\n";
  };
  line(t.header);
  for (const auto& row : t.rows) line(row);
  return out;
}

std::string to_html(const Table& t) {
  std::string out = "<table id=\"table-" + t.name + "\"><thead><tr>";
  for (const auto& h : t.header) out += "<th>" + html_escape(h) + "</th>";
  out += "</tr></thead><tbody>";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (const auto& c : row) out += "<td>" + html_escape(c) + "</td>";
    out += "</tr>";
  }
  return out + "</tbody></table>\n";
}

std::string fixed(double v, int decimals) {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string count(double v) {
  if (std::isnan(v)) return "n/a";
  std::string digits = fixed(std::fabs(v), 0);
  std::string out;
  if (v < 0) out.push_back('-');
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string general(double v) {
  if (std::isnan(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string percent(double share, int decimals) {
  if (std::isnan(share)) return "n/a";
  return fixed(share * 100.0, decimals) + "%";
}

}  // namespace overhead::report
