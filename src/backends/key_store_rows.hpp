// What the three key stores (sqlite_key_store, postgres_key_store, dynamodb_key_store) share
// between a ports::ApiKey or a ports::KeyUsage and their rows:
//   - a key's models as one JSON array of strings in a TEXT column (SQL), so any model name
//     round-trips whatever characters it holds;
//   - a double (budget_usd, a sum of cost_usd) as text: the shortest decimal that reads back
//     the same double (std::to_chars), and read back from a server's text;
//   - a key's usage put together from its grouped rows: buckets sorted by label, totals summed
//     from the buckets by model (each record is in exactly one of them).
// Malformed stored text is a permanent StoreError naming what it is.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ports/key_store.hpp"

namespace overhead::backends {

[[nodiscard]] std::string key_models_json(const std::vector<std::string>& models);
[[nodiscard]] std::vector<std::string> key_models_from_json(std::string_view text, const std::string& where);

[[nodiscard]] double real_from_text(std::string_view text, const std::string& where);

// The usage of `key` from its buckets by model and by UTC day (any order): sorted, totals filled.
[[nodiscard]] ports::KeyUsage key_usage_from_buckets(const std::string& key, std::vector<ports::UsageBucket> by_model,
                                                     std::vector<ports::UsageBucket> by_day);

// The UTC day "YYYY-MM-DD" of a record's start_time (ISO-8601, UTC): its first ten characters.
[[nodiscard]] inline std::string_view start_day(std::string_view start_time) { return start_time.substr(0, 10); }

}  // namespace overhead::backends
