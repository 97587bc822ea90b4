// Micro-benchmarks of the schema validation the gateway does on a finished answer: a schema is
// compiled once (outside the timing), then one answer is validated per iteration, both from its
// text (parse + validate: what the gateway pays) and already parsed (the validator alone), with the
// parse alone for scale. Two schemas: a realistic structured output (an order with nested arrays,
// enums, patterns, required fields; a ~1 KiB answer) and a tool's arguments (a small object with a
// $ref). Counters: per_answer is seconds per answer ("2.1u" = 2.1 us), bytes_per_second the answer
// text's bytes through.
//
//   build/bench/schema_validate_bench [--benchmark_filter=order]
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>

#include "schema/compiled_schema.hpp"

namespace {

using nlohmann::json;
using overhead::schema::CompiledSchema;

const char* const kOrderSchema = R"({
  "type": "object",
  "properties": {
    "order_id": {"type": "string", "pattern": "^ORD-[0-9]{6}$"},
    "status": {"enum": ["pending", "paid", "shipped", "delivered", "cancelled"]},
    "customer": {"type": "object",
      "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 100},
                     "email": {"type": "string", "format": "email"},
                     "vip": {"type": "boolean"}},
      "required": ["name", "email", "vip"], "additionalProperties": false},
    "items": {"type": "array", "minItems": 1, "maxItems": 50, "items": {"$ref": "#/$defs/item"}},
    "shipping": {"type": "object",
      "properties": {"method": {"enum": ["standard", "express", "pickup"]},
                     "address": {"type": ["string", "null"]},
                     "cost": {"type": "number", "minimum": 0}},
      "required": ["method", "address", "cost"], "additionalProperties": false},
    "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
    "total": {"type": "number", "minimum": 0},
    "notes": {"type": ["string", "null"], "maxLength": 500}
  },
  "required": ["order_id", "status", "customer", "items", "shipping", "tags", "total", "notes"],
  "additionalProperties": false,
  "$defs": {
    "item": {"type": "object",
      "properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
                     "description": {"type": "string"},
                     "category": {"enum": ["books", "electronics", "garden", "toys", "food"]},
                     "quantity": {"type": "integer", "minimum": 1},
                     "unit_price": {"type": "number", "exclusiveMinimum": 0}},
      "required": ["sku", "description", "category", "quantity", "unit_price"],
      "additionalProperties": false}
  }
})";

const char* const kOrderAnswer = R"({"order_id": "ORD-004217", "status": "shipped",
 "customer": {"name": "Ada Lovelace", "email": "ada@example.org", "vip": true},
 "items": [
  {"sku": "BOO-0001", "description": "Sketch of the Analytical Engine, annotated edition", "category": "books", "quantity": 1, "unit_price": 34.5},
  {"sku": "ELE-0420", "description": "Brass gear set, 12 pieces", "category": "electronics", "quantity": 2, "unit_price": 12.99},
  {"sku": "GAR-1100", "description": "Punched-card planter", "category": "garden", "quantity": 1, "unit_price": 8.0},
  {"sku": "TOY-0077", "description": "Difference engine kit for children", "category": "toys", "quantity": 3, "unit_price": 19.95},
  {"sku": "FOO-3141", "description": "Tea, Earl Grey, loose leaf, 250 g", "category": "food", "quantity": 4, "unit_price": 6.25},
  {"sku": "BOO-0002", "description": "Notes on the notes: a commentary", "category": "books", "quantity": 1, "unit_price": 22.0}
 ],
 "shipping": {"method": "express", "address": "12 St James's Square, London", "cost": 9.9},
 "tags": ["gift", "fragile", "priority"],
 "total": 209.23,
 "notes": "Leave with the concierge if nobody answers."})";

const char* const kToolSchema = R"({
  "type": "object",
  "properties": {"location": {"type": "string", "description": "City and country"},
                 "unit": {"$ref": "#/$defs/unit"},
                 "days": {"type": "integer", "minimum": 1, "maximum": 14}},
  "required": ["location", "unit", "days"],
  "additionalProperties": false,
  "$defs": {"unit": {"enum": ["celsius", "fahrenheit"]}}
})";

const char* const kToolAnswer = R"({"location": "Paris, France", "unit": "celsius", "days": 3})";

void per_answer_counters(benchmark::State& state, std::size_t bytes) {
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
  state.counters["per_answer"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void check_valid(const CompiledSchema& schema, const std::string& answer) {
  const auto result = schema.validate_text(answer);
  if (!result.valid()) {
    std::fprintf(stderr, "benchmark answer does not validate: %s\n", result.errors[0].to_string().c_str());
    std::abort();
  }
}

void validate_text(benchmark::State& state, const char* schema_text, const char* answer_text) {
  const CompiledSchema schema = overhead::schema::compile(json::parse(schema_text));
  const std::string answer = answer_text;
  check_valid(schema, answer);
  for (auto _ : state) benchmark::DoNotOptimize(schema.validate_text(answer).valid());
  per_answer_counters(state, answer.size());
}

void validate_parsed(benchmark::State& state, const char* schema_text, const char* answer_text) {
  const CompiledSchema schema = overhead::schema::compile(json::parse(schema_text));
  const std::string answer = answer_text;
  check_valid(schema, answer);
  const json parsed = json::parse(answer);
  for (auto _ : state) benchmark::DoNotOptimize(schema.validate(parsed).valid());
  per_answer_counters(state, answer.size());
}

void parse_only(benchmark::State& state, const char* answer_text) {
  const std::string answer = answer_text;
  for (auto _ : state) benchmark::DoNotOptimize(json::parse(answer).size());
  per_answer_counters(state, answer.size());
}

void compile_only(benchmark::State& state, const char* schema_text) {
  const json schema = json::parse(schema_text);
  for (auto _ : state) benchmark::DoNotOptimize(overhead::schema::compile(schema).source().size());
  state.counters["per_schema"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK_CAPTURE(validate_text, order, kOrderSchema, kOrderAnswer);
BENCHMARK_CAPTURE(validate_parsed, order, kOrderSchema, kOrderAnswer);
BENCHMARK_CAPTURE(parse_only, order, kOrderAnswer);
BENCHMARK_CAPTURE(validate_text, tool_arguments, kToolSchema, kToolAnswer);
BENCHMARK_CAPTURE(validate_parsed, tool_arguments, kToolSchema, kToolAnswer);
BENCHMARK_CAPTURE(parse_only, tool_arguments, kToolAnswer);
BENCHMARK_CAPTURE(compile_only, order, kOrderSchema);

}  // namespace

BENCHMARK_MAIN();
