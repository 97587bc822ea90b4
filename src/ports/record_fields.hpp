// The one list of Record's fields: name, type, and how to get and set each. Everything that
// moves a record in or out of a format walks this table instead of naming the 41 fields again:
// the SQLite schema and binds (backends/sqlite_store.cpp), the JSON log-queue body and the CSV
// (record_codec.cpp), and the PostgreSQL columns and DynamoDB attribute maps. A new field is one
// member in record.hpp plus one row here.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>

#include "ports/record.hpp"

namespace overhead::ports {

enum class FieldType {
  text,              // std::string
  integer,           // std::int64_t (or int)
  optional_integer,  // std::optional<std::int64_t>: null when absent
  boolean,           // bool; 0/1 where a format has no booleans (SQL INTEGER)
  real,              // double (prices in USD): written shortest-exact, so every format reads back the same double
};

// A field's value, independent of the format: null (only optional_integer), an integer (also
// for booleans: 0/1), text (a view into the record; copy it before the record changes), or a
// double (only real).
using FieldValue = std::variant<std::monostate, std::int64_t, std::string_view, double>;

struct RecordField {
  using Member = std::variant<std::string Record::*, std::int64_t Record::*, std::optional<std::int64_t> Record::*,
                              int Record::*, bool Record::*, double Record::*>;

  std::string_view name;    // JSON key, CSV header, DynamoDB attribute: the seed's names
  std::string_view column;  // SQL column: as `name` except where that is an SQL keyword ("case", "constraint")
  FieldType type;
  bool key;       // part of the store's key (experiment_tokenizer, id)
  bool required;  // never empty: the key and `experiment` (what scans filter on); NOT NULL in SQL
  // Set after the record was published, by a StampPatch (publish_acked, input_deleted). The
  // replay rule (store.hpp): an upsert whose value is 0 keeps the stored value.
  bool patched;
  Member member;
  // Added after stores and log messages without it existed: a body that lacks it reads as empty
  // (null; 0 for an integer), and every store adds the column to an older table when it opens it (SQLite's
  // ALTER TABLE ADD COLUMN, PostgreSQL's ADD COLUMN IF NOT EXISTS). Never a key or required.
  bool added_later = false;

  [[nodiscard]] FieldValue get(const Record& r) const {
    return std::visit(
        [&](auto m) -> FieldValue {
          const auto& v = r.*m;
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) return std::string_view(v);
          else if constexpr (std::is_same_v<T, std::optional<std::int64_t>>) return v ? FieldValue(*v) : FieldValue();
          else if constexpr (std::is_same_v<T, double>) return FieldValue(v);
          else return static_cast<std::int64_t>(v);
        },
        member);
  }

  // Throws std::invalid_argument naming the field when `v` does not fit its type.
  void set(Record& r, const FieldValue& v) const {
    std::visit(
        [&](auto m) {
          auto& dst = r.*m;
          using T = std::decay_t<decltype(dst)>;
          if constexpr (std::is_same_v<T, std::string>) {
            const auto* s = std::get_if<std::string_view>(&v);
            if (!s) mismatch("text");
            dst.assign(s->data(), s->size());
          } else if constexpr (std::is_same_v<T, std::optional<std::int64_t>>) {
            if (std::holds_alternative<std::monostate>(v)) dst.reset();
            else if (const auto* i = std::get_if<std::int64_t>(&v)) dst = *i;
            else mismatch("an integer or null");
          } else if constexpr (std::is_same_v<T, double>) {
            // An integer is a real too (a format that wrote 0 where it had no fraction).
            if (const auto* d = std::get_if<double>(&v)) dst = *d;
            else if (const auto* i = std::get_if<std::int64_t>(&v)) dst = static_cast<double>(*i);
            else mismatch("a number");
          } else {
            const auto* i = std::get_if<std::int64_t>(&v);
            if (!i) mismatch(type == FieldType::boolean ? "a boolean" : "an integer");
            dst = static_cast<T>(*i);
          }
        },
        member);
  }

 private:
  [[noreturn]] void mismatch(const char* want) const {
    throw std::invalid_argument("field \"" + std::string(name) + "\" must be " + want);
  }
};

// In the order of the seed's table, then ours (the JSON and CSV order).
inline const std::array<RecordField, 41> kRecordFields = {{
    {"experiment_tokenizer", "experiment_tokenizer", FieldType::text, true, true, false, &Record::experiment_tokenizer},
    {"id", "id", FieldType::text, true, true, false, &Record::id},
    {"model", "model", FieldType::text, false, false, false, &Record::model},
    {"start_time", "start_time", FieldType::text, false, false, false, &Record::start_time},
    {"end_time", "end_time", FieldType::text, false, false, false, &Record::end_time},
    {"token_count", "token_count", FieldType::integer, false, false, false, &Record::token_count},
    {"api_input", "api_input", FieldType::optional_integer, false, false, false, &Record::api_input},
    {"api_output", "api_output", FieldType::optional_integer, false, false, false, &Record::api_output},
    {"experiment", "experiment", FieldType::text, false, true, false, &Record::experiment},
    {"tokenizer", "tokenizer", FieldType::text, false, false, false, &Record::tokenizer},
    {"case", "case_number", FieldType::integer, false, false, false, &Record::case_number},
    {"worker", "worker", FieldType::text, false, false, false, &Record::worker},
    {"seq", "seq", FieldType::integer, false, false, false, &Record::seq},
    {"batch", "batch", FieldType::integer, false, false, false, &Record::batch},
    {"batch_boundary", "batch_boundary", FieldType::boolean, false, false, false, &Record::batch_boundary},
    {"received", "received", FieldType::integer, false, false, false, &Record::received},
    {"render_start", "render_start", FieldType::integer, false, false, false, &Record::render_start},
    {"render_end", "render_end", FieldType::integer, false, false, false, &Record::render_end},
    {"encode_end", "encode_end", FieldType::integer, false, false, false, &Record::encode_end},
    {"publish_start", "publish_start", FieldType::integer, false, false, false, &Record::publish_start},
    {"publish_acked", "publish_acked", FieldType::integer, false, false, true, &Record::publish_acked},
    {"input_deleted", "input_deleted", FieldType::integer, false, false, true, &Record::input_deleted},
    {"prompt_chars", "prompt_chars", FieldType::integer, false, false, false, &Record::prompt_chars},
    {"prompt_bytes", "prompt_bytes", FieldType::integer, false, false, false, &Record::prompt_bytes},
    {"run_id", "run_id", FieldType::text, false, false, false, &Record::run_id, true},
    {"decode_start", "decode_start", FieldType::integer, false, false, false, &Record::decode_start, true},
    {"first_token", "first_token", FieldType::integer, false, false, false, &Record::first_token, true},
    {"decode_end", "decode_end", FieldType::integer, false, false, false, &Record::decode_end, true},
    {"output_tokens", "output_tokens", FieldType::integer, false, false, false, &Record::output_tokens, true},
    {"finish_reason", "finish_reason", FieldType::text, false, false, false, &Record::finish_reason, true},
    {"text", "text", FieldType::text, false, false, false, &Record::text, true},
    {"prompt_tokens_sent", "prompt_tokens_sent", FieldType::integer, false, false, false, &Record::prompt_tokens_sent, true},
    {"engine_prompt_tokens", "engine_prompt_tokens", FieldType::optional_integer, false, false, false,
     &Record::engine_prompt_tokens, true},
    {"tool_calls", "tool_calls", FieldType::integer, false, false, false, &Record::tool_calls, true},
    {"reasoning_tokens", "reasoning_tokens", FieldType::integer, false, false, false, &Record::reasoning_tokens, true},
    {"constraint", "constraint_kind", FieldType::text, false, false, false, &Record::constraint, true},
    {"key_name", "key_name", FieldType::text, false, false, false, &Record::key_name, true},
    {"cost_usd", "cost_usd", FieldType::real, false, false, false, &Record::cost_usd, true},
    {"cost_e_usd", "cost_e_usd", FieldType::real, false, false, false, &Record::cost_e_usd, true},
    {"cost_d_usd", "cost_d_usd", FieldType::real, false, false, false, &Record::cost_d_usd, true},
    {"price_source", "price_source", FieldType::text, false, false, false, &Record::price_source, true},
}};

// The field named `name` (JSON name, not SQL column), or nullptr.
[[nodiscard]] inline const RecordField* find_record_field(std::string_view name) {
  for (const auto& f : kRecordFields)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace overhead::ports
