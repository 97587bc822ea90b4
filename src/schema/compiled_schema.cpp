#include "schema/compiled_schema.hpp"

#include <algorithm>

#include "schema/internal/program.hpp"
#include "schema/limits.hpp"
#include "util/json_depth.hpp"

namespace overhead::schema {

std::string ValidationError::to_string() const {
  return (instance_path.empty() ? std::string("(root)") : instance_path) + ": " + message;
}

CompiledSchema compile(const nlohmann::json& schema, const CompileOptions& options) {
  return CompiledSchema(internal::compile_program(schema, options.where, options.dialect == Dialect::kDraft7));
}

ValidationResult CompiledSchema::validate(const nlohmann::json& instance, std::size_t max_errors) const {
  ValidationResult result;
  internal::validate_program(*program_, instance, std::min(max_errors, kMaxReportedErrors), result.errors);
  return result;
}

bool parse_answer(std::string_view text, nlohmann::json& out, std::string& error) {
  if (util::json_too_deep(text)) {
    error = "the answer nests arrays and objects more than " + std::to_string(util::kMaxJsonDepth) + " levels deep";
    return false;
  }
  try {
    out = nlohmann::json::parse(text);
    return true;
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based and points just past the byte that broke the parse; say which byte (0-based).
    const std::size_t at = e.byte == 0 ? 0 : e.byte - 1;
    std::string what = e.what();
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..."
    if (const auto colon = what.find(": "); colon != std::string::npos) what = what.substr(colon + 2);
    error = "the answer is not valid JSON: " + what + " (at byte " + std::to_string(at) + ")";
    return false;
  }
}

ValidationResult CompiledSchema::validate_text(std::string_view text, std::size_t max_errors) const {
  nlohmann::json instance;
  std::string error;
  if (!parse_answer(text, instance, error)) {
    ValidationResult result;
    result.errors.push_back(ValidationError{"", "", std::move(error)});
    return result;
  }
  return validate(instance, max_errors);
}

const nlohmann::json& CompiledSchema::source() const { return program_->source; }

}  // namespace overhead::schema
