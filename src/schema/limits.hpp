// The bounds of the schema module, in one place. A schema and the answers checked against it both
// come from a client (a request's `response_format` or `tools`, then the model's text shaped by
// them), so every cost the module can incur is bounded by one of these constants, and going past
// one is an error naming the place, never an unbounded wait or a deep stack.
#pragma once

#include <cstddef>
#include <cstdint>

namespace overhead::schema {

// Subschemas nested inside one another (each `properties/x`, `items`, `anyOf/0`, ... and each
// `$ref` followed while compiling is one level). OpenAI's strict mode allows 10 levels of object
// nesting; generated schemas (Pydantic, Zod) stay well below this.
inline constexpr std::size_t kMaxSchemaDepth = 64;

// Subschemas in one compiled schema (every object or boolean schema counted once, references
// share their target). A large tool list is a few hundred.
inline constexpr std::size_t kMaxSchemaNodes = 20'000;

// JSON values in one schema document, counted before anything else is done with it (enum lists,
// const values and unknown keywords' contents included).
inline constexpr std::size_t kMaxSchemaValues = 200'000;

// Bytes of one `pattern` or `patternProperties` key.
inline constexpr std::size_t kMaxPatternBytes = 4'096;

// PCRE2's match limit (calls of its internal match function) and its depth limit for one match of
// a `pattern` against one string: a pattern that backtracks catastrophically stops there and the
// string is reported as not validated, in bounded time.
// Measured: a search stopped by the limit takes about 0.4 ms (JIT, "^(a+)+$").
inline constexpr std::uint32_t kPatternMatchLimit = 100'000;
inline constexpr std::uint32_t kPatternDepthLimit = 1'000;

// Subschemas entered at once while validating (a recursive `$ref` that makes no progress through
// the instance, such as {"$ref": "#"}, stops here with an error instead of overflowing the stack).
inline constexpr std::size_t kMaxValidationDepth = 512;

// Subschema evaluations (plus uniqueItems comparisons) for one validation: nested anyOf/oneOf over
// large arrays can multiply the work; past this the answer is reported as not validated.
inline constexpr std::size_t kMaxValidationSteps = 2'000'000;

// What one pattern search (a `pattern` on a string, a `patternProperties` key on a property name)
// counts for in kMaxValidationSteps: at most 20,000 searches per validation. A search that hits the
// match limit ends the validation at once, so the worst case is many searches each just under it
// (about 0.3 ms each), which needs as many strings in the answer: the answer's length bounds it.
inline constexpr std::size_t kPatternSearchSteps = 100;

// Errors gathered by a validation that asks for all of them.
inline constexpr std::size_t kMaxReportedErrors = 100;

// Tools in one request's `tools` (OpenAI's own limit) and bytes of a function name (the name must
// match ^[a-zA-Z0-9_-]{1,64}$).
inline constexpr std::size_t kMaxTools = 128;
inline constexpr std::size_t kMaxToolNameBytes = 64;

}  // namespace overhead::schema
