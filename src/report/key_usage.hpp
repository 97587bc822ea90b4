// Who spent what: the records grouped by the API key they were charged to (Record::key_name),
// with each key's requests, prompt and completion tokens, and its E, D and total USD
// (cost_e_usd, cost_d_usd, cost_usd: the worker's price of each request). `overhead analyze
// --by key` prints the table and adds it to the report (by_key.csv). Records without a key are
// one row of their own, "(no key)".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ports/record.hpp"
#include "report/section.hpp"

namespace overhead::report {

inline constexpr const char* kNoKey = "(no key)";

struct KeyUsage {
  std::string key;  // the key's name, or kNoKey
  std::size_t requests = 0;
  std::int64_t prompt_tokens = 0, completion_tokens = 0;
  double e_usd = 0, d_usd = 0, usd = 0;
};

// One row per key, by name ("(no key)" last), then the total over them all ("all").
[[nodiscard]] std::vector<KeyUsage> usage_by_key(std::span<const ports::Record> records);

// The table of those rows ("by_key"), USD to 6 significant digits.
[[nodiscard]] Table key_usage_table(const std::vector<KeyUsage>& rows);

// The report section: the table and how its figures are priced.
[[nodiscard]] ReportSection key_usage_section(std::span<const ports::Record> records);

}  // namespace overhead::report
