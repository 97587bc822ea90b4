#include "backends/postgres_side_table.hpp"

#include <charconv>
#include <stdexcept>

#include "backends/postgres_store.hpp"

namespace overhead::backends {

std::string pg_qualified(const std::string& schema, const std::string& table) {
  return (schema.empty() ? "" : postgres_quote_ident(schema) + ".") + postgres_quote_ident(table);
}

void check_pg_side_names(const ports::BackendUrl& url, const std::string& records_table, std::string_view longest_suffix) {
  if (records_table.size() + longest_suffix.size() > kPostgresMaxIdentifier)
    throw std::invalid_argument(url.describe(
        "store", "parameter \"table\" is too long for the tables beside it (TABLE" + std::string(longest_suffix) + ": at most " +
                     std::to_string(kPostgresMaxIdentifier) + " bytes, PostgreSQL's longest name)"));
}

std::string pg_create_under_lock(const std::string& lock_name, const std::string& schema, const std::string& statements) {
  std::string sql = "BEGIN; SET LOCAL client_min_messages = warning; SELECT pg_advisory_xact_lock(hashtext('" + lock_name + "'));";
  if (!schema.empty()) sql += "CREATE SCHEMA IF NOT EXISTS " + postgres_quote_ident(schema) + ";";
  return sql + statements + "COMMIT;";
}

std::int64_t pg_int_cell(const char* text, const std::string& where) {
  std::int64_t v = 0;
  const std::string_view s(text ? text : "");
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty())
    throw ports::StoreError(where + ": not an integer: " + std::string(s.substr(0, 40)), ports::Failure::permanent);
  return v;
}

}  // namespace overhead::backends
