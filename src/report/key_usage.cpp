#include "report/key_usage.hpp"

#include <map>

namespace overhead::report {

namespace {

constexpr const char* kKeyUsageNote =
    "Each request's cost_usd = E + D as the worker priced it (docs/cost-model.md, \"Every request priced\"): E its CPU "
    "time at the worker's price per vCPU-second, D its share of the GPU at the GPU's price. Requests of a worker given "
    "no price count 0 $. Prompt tokens are our count of the rendered prompt, completion tokens the engine's.";

void add_usage(KeyUsage& to, const KeyUsage& row) {
  to.requests += row.requests;
  to.prompt_tokens += row.prompt_tokens;
  to.completion_tokens += row.completion_tokens;
  to.e_usd += row.e_usd;
  to.d_usd += row.d_usd;
  to.usd += row.usd;
}

}  // namespace

std::vector<KeyUsage> usage_by_key(std::span<const ports::Record> records) {
  std::map<std::string, KeyUsage> by;
  KeyUsage none{kNoKey};
  for (const auto& r : records) {
    KeyUsage one;
    one.requests = 1;
    one.prompt_tokens = r.token_count;
    one.completion_tokens = r.output_tokens;
    one.e_usd = r.cost_e_usd;
    one.d_usd = r.cost_d_usd;
    one.usd = r.cost_usd;
    if (r.key_name.empty()) {
      add_usage(none, one);
    } else {
      KeyUsage& k = by[r.key_name];
      k.key = r.key_name;
      add_usage(k, one);
    }
  }
  std::vector<KeyUsage> rows;
  KeyUsage all{"all"};
  for (auto& [name, k] : by) {
    add_usage(all, k);
    rows.push_back(std::move(k));
  }
  if (none.requests > 0) {
    add_usage(all, none);
    rows.push_back(std::move(none));
  }
  rows.push_back(std::move(all));
  return rows;
}

Table key_usage_table(const std::vector<KeyUsage>& rows) {
  Table t{"by_key", "Usage by key",
          {"key", "requests", "prompt tokens", "completion tokens", "E (USD)", "D (USD)", "total (USD)", "USD per request"},
          {}};
  for (const auto& k : rows)
    t.rows.push_back({k.key, count(double(k.requests)), count(double(k.prompt_tokens)), count(double(k.completion_tokens)),
                      general(k.e_usd), general(k.d_usd), general(k.usd),
                      k.requests ? general(k.usd / double(k.requests)) : "n/a"});
  return t;
}

ReportSection key_usage_section(std::span<const ports::Record> records) {
  Table t = key_usage_table(usage_by_key(records));
  ReportSection section;
  section.markdown = "## " + t.title + "\n\n" + std::string(kKeyUsageNote) + "\n\n" + to_markdown(t) + "\n";
  section.html = "<h2>" + html_escape(t.title) + "</h2>\n<p>" + html_escape(kKeyUsageNote) + "</p>\n" + to_html(t);
  section.tables.push_back(std::move(t));
  return section;
}

}  // namespace overhead::report
