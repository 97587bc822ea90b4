// JSON Schema validation of structured outputs and tool arguments: compile a schema once, then
// validate many answers against it, from any number of threads.
//
//   const auto schema = overhead::schema::compile(request["response_format"]["json_schema"]["schema"],
//                                                 {.where = "response_format.json_schema.schema"});
//   // throws SchemaError: "response_format.json_schema.schema/properties/a/$ref: remote references are not supported"
//   const auto result = schema.validate_text(answer_text);
//   if (!result.valid()) reply_error(result.errors[0].to_string());
//   // "/items/2/price: -1 is less than the minimum 0"
//
// What is enforced, annotated, refused: keywords.hpp (and docs/structured-outputs.md). Bounds on
// schema size, nesting and validation cost: limits.hpp; a validation that would pass one is an
// error, reported like any other (the answer is not accepted as valid).
//
// Semantics follow JSON Schema draft 7 and 2020-12 where they agree; where they differ:
//   - keywords beside `$ref` apply (2019-09 and later) unless the root's `$schema` names draft 7 or
//     before, or CompileOptions::dialect says draft 7, in which case they are ignored as draft 7 says;
//   - `items` may be a schema or a draft-7 tuple (then `additionalItems` covers the rest);
//     `prefixItems` is the 2020-12 tuple (then `items` covers the rest);
//   - `dependencies` (draft 7) and `dependentRequired` / `dependentSchemas` (2019-09) are all read;
//   - integers are numbers with a zero fractional part (1.0 is an integer), as since draft 6.
// `$id` does not change how references resolve: every `$ref` is a pointer into the whole document.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "schema/schema_error.hpp"

namespace overhead::schema {

namespace internal {
struct Program;
}

// Which rule for keywords beside `$ref` when the schema's root `$schema` does not say.
enum class Dialect {
  kCurrent,  // 2019-09 / 2020-12 (and OpenAI's structured outputs): they apply
  kDraft7,   // draft 7 and before: they are ignored
};

struct CompileOptions {
  // The request field that holds the schema, written before the JSON pointer in errors
  // ("tools[0].function.parameters"); empty: errors start with the pointer.
  std::string where;
  Dialect dialect = Dialect::kCurrent;
};

// One reason an instance does not validate.
struct ValidationError {
  std::string instance_path;  // JSON pointer into the instance ("" = the whole instance)
  std::string schema_path;    // JSON pointer of the keyword that failed, in the schema document
  std::string message;        // "-1 is less than the minimum 0"
  // "<instance_path>: <message>", with "(root)" for the empty path.
  std::string to_string() const;
};

struct ValidationResult {
  std::vector<ValidationError> errors;  // empty when valid; at most the max_errors asked for
  bool valid() const { return errors.empty(); }
};

class CompiledSchema {
 public:
  // Validates a parsed instance. max_errors: 1 stops at the first error (the fast path); more
  // collects up to min(max_errors, kMaxReportedErrors). Errors inside anyOf/oneOf/not/if branches
  // are summarized by the combinator's own error.
  [[nodiscard]] ValidationResult validate(const nlohmann::json& instance, std::size_t max_errors = 1) const;

  // Parses `text` as one JSON document and validates it. Text that is not JSON is one error at the
  // root: "the answer is not valid JSON: ... at byte N"; nesting deeper than util::kMaxJsonDepth
  // is refused before parsing.
  [[nodiscard]] ValidationResult validate_text(std::string_view text, std::size_t max_errors = 1) const;

  // The schema as given to compile().
  const nlohmann::json& source() const;

 private:
  friend CompiledSchema compile(const nlohmann::json& schema, const CompileOptions& options);
  explicit CompiledSchema(std::shared_ptr<const internal::Program> program) : program_(std::move(program)) {}
  std::shared_ptr<const internal::Program> program_;  // immutable, shared by copies
};

// Checks and compiles `schema` (an object or a boolean). Throws SchemaError naming
// options.where + the JSON pointer of the offending place when a keyword's value has the wrong
// form, a pattern does not compile, a `$ref` is remote or points to nothing, a refused keyword is
// used (keywords.hpp), or a limit of limits.hpp is passed.
[[nodiscard]] CompiledSchema compile(const nlohmann::json& schema, const CompileOptions& options = {});

// Parses `text` (a model's answer) as one JSON document, as validate_text and the tool-call parsers
// do: nesting deeper than util::kMaxJsonDepth is refused first. On failure returns false and sets
// `error` to a message for the client ("the answer is not valid JSON: ... at byte N").
[[nodiscard]] bool parse_answer(std::string_view text, nlohmann::json& out, std::string& error);

}  // namespace overhead::schema
