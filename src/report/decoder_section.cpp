#include "report/decoder_section.hpp"

#include <map>
#include <string>
#include <tuple>

namespace overhead::report {

namespace {

struct Sums {
  std::size_t n = 0;
  double e_us = 0, ttft_us = 0, d_us = 0, tokens = 0;
  std::size_t with_token = 0;  // records whose first token came (TTFT is their mean)
};

constexpr const char* kNote =
    "E = `encode_end - render_start` (render + encode), TTFT = `first_token - decode_start`, D = `decode_end - "
    "decode_start`, E share = mean E / (mean E + mean D). The worker waits for D before it publishes, so the cycle "
    "times and the E(x) fits above include D for these records: read E from this table.";

}  // namespace

std::optional<ReportSection> decoder_section(std::span<const ports::Record> records) {
  std::map<std::tuple<int, std::string>, Sums> by;
  for (const auto& r : records) {
    if (r.decode_end <= 0 || r.decode_start <= 0 || r.render_start <= 0 || r.encode_end < r.render_start) continue;
    Sums& s = by[{r.case_number, r.tokenizer}];
    ++s.n;
    s.e_us += double(r.encode_end - r.render_start) / 1e3;
    s.d_us += double(r.decode_end - r.decode_start) / 1e3;
    s.tokens += double(r.output_tokens);
    if (r.first_token > 0) {
      ++s.with_token;
      s.ttft_us += double(r.first_token - r.decode_start) / 1e3;
    }
  }
  if (by.empty()) return std::nullopt;
  Table t{"decoder", "The decoder stage: D next to E",
          {"case", "tokenizer", "n", "E mean (µs)", "TTFT mean (ms)", "D mean (ms)", "output tokens mean", "E share of T"},
          {}};
  for (const auto& [key, s] : by) {
    const double n = double(s.n), e = s.e_us / n, d = s.d_us / n;
    t.rows.push_back({std::to_string(std::get<0>(key)), std::get<1>(key), count(n), fixed(e, 1),
                      s.with_token ? fixed(s.ttft_us / double(s.with_token) / 1e3, 3) : "n/a", fixed(d / 1e3, 3),
                      fixed(s.tokens / n, 1), percent(e / (e + d), 3)});
  }
  ReportSection section;
  section.markdown = "## " + t.title + "\n\n" + std::string(kNote) + "\n\n" + to_markdown(t) + "\n";
  section.html = "<h2>" + html_escape(t.title) + "</h2>\n<p>" + html_escape(kNote) + "</p>\n" + to_html(t);
  section.tables.push_back(std::move(t));
  return section;
}

}  // namespace overhead::report
