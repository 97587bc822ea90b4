// The validator: walks an instance and the node program of a compiled schema together.
//
// Two modes share one walk. Collecting (the schema's own keywords, allOf, $ref, properties, items,
// then/else) reports each failure with the instance path, the keyword's schema path and a message,
// and goes on until max_errors. Quiet (the branches of anyOf, oneOf, not, if, contains,
// propertyNames, whose failures are not themselves errors) stops at the first failure and builds
// no message. A limit (limits.hpp) aborts the whole validation with one error, whatever the mode:
// otherwise a too-costly branch under `not` would count as a success.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string_view>

#include "schema/compiled_schema.hpp"
#include "schema/internal/program.hpp"
#include "schema/json_pointer.hpp"
#include "schema/limits.hpp"
#include "util/utf8.hpp"

namespace overhead::schema::internal {

namespace {

using nlohmann::json;

// A value as a message shows it: its JSON text, cut to a readable length.
std::string show(const json& v) {
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  constexpr std::size_t kMax = 80;
  if (text.size() > kMax) {
    text = std::string(util::utf8::truncate(text, kMax)) + "...";
  }
  return text;
}

bool is_integral(const json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

std::uint8_t type_bits(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return kNull;
    case json::value_t::boolean: return kBoolean;
    case json::value_t::object: return kObject;
    case json::value_t::array: return kArray;
    case json::value_t::string: return kString;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return kNumber | kInteger;
    case json::value_t::number_float: return is_integral(v) ? kNumber | kInteger : kNumber;
    default: return 0;
  }
}

std::string type_names(std::uint8_t bits) {
  static constexpr std::pair<std::uint8_t, std::string_view> kNames[] = {
      {kNull, "null"},     {kBoolean, "boolean"}, {kObject, "object"}, {kArray, "array"},
      {kNumber, "number"}, {kString, "string"},   {kInteger, "integer"}};
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if ((bits & bit) == 0) continue;
    if (!out.empty()) out += " or ";
    out += name;
  }
  return out;
}

// Three-way comparison of two JSON numbers, exact between integers.
int compare_numbers(const json& a, const json& b) {
  if (a.is_number_integer() && b.is_number_integer()) {
    const bool a_neg = !a.is_number_unsigned() && a.get<std::int64_t>() < 0;
    const bool b_neg = !b.is_number_unsigned() && b.get<std::int64_t>() < 0;
    if (a_neg != b_neg) return a_neg ? -1 : 1;
    if (a_neg) {
      const auto x = a.get<std::int64_t>(), y = b.get<std::int64_t>();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    const auto x = a.get<std::uint64_t>(), y = b.get<std::uint64_t>();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  const double x = a.get<double>(), y = b.get<double>();
  return x < y ? -1 : (x > y ? 1 : 0);
}

bool is_multiple_of(const json& v, const json& m) {
  if (v.is_number_integer() && m.is_number_integer()) {
    const auto divisor = m.get<std::uint64_t>();  // > 0, checked when compiled
    std::uint64_t magnitude = 0;
    if (v.is_number_unsigned()) {
      magnitude = v.get<std::uint64_t>();
    } else {
      const auto s = v.get<std::int64_t>();
      magnitude = s < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(s) : static_cast<std::uint64_t>(s);
    }
    return magnitude % divisor == 0;
  }
  const double q = v.get<double>() / m.get<double>();
  if (!std::isfinite(q)) return false;
  // Decimal multiples are not exact in binary (0.0075 / 0.0001 = 75.00000000000001): a quotient
  // within a relative 1e-9 of an integer counts as one.
  return std::abs(q - std::round(q)) <= 1e-9 * std::max(1.0, std::abs(q));
}

std::size_t hash_json(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return 0x9e37;
    case json::value_t::boolean: return v.get<bool>() ? 0x51 : 0x52;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: {
      const double d = v.get<double>();  // 1 and 1.0 are equal, so they hash alike
      return std::hash<double>{}(d == 0 ? 0.0 : d);
    }
    case json::value_t::string: return std::hash<std::string>{}(v.get_ref<const std::string&>());
    case json::value_t::array: {
      std::size_t h = 0xa11a;
      for (const auto& e : v) h = h * 1'000'003u ^ hash_json(e);
      return h;
    }
    case json::value_t::object: {
      std::size_t h = 0x0b1e;  // members come in key order
      for (const auto& [k, e] : v.items()) h = (h * 1'000'003u ^ std::hash<std::string>{}(k)) * 31u ^ hash_json(e);
      return h;
    }
    default: return 0;
  }
}

class Validator {
 public:
  Validator(const Program& program, std::size_t max_errors, std::vector<ValidationError>& out)
      : program_(program), max_errors_(max_errors), out_(&out) {}

  void run(const json& instance) {
    eval(0, instance, true);
    if (aborted_) {
      out_->clear();
      out_->push_back(std::move(abort_error_));
    }
  }

 private:
  struct Segment {
    std::string_view key;
    std::size_t index = 0;
    bool is_index = false;
  };

  struct DepthGuard {
    std::size_t& depth;
    explicit DepthGuard(std::size_t& d) : depth(d) { ++depth; }
    ~DepthGuard() { --depth; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
  };

  std::string instance_path() const {
    std::string out;
    for (const Segment& s : path_) out = s.is_index ? append_pointer(out, s.index) : append_pointer(out, s.key);
    return out;
  }

  static std::string keyword_path(const Node& n, std::string_view keyword) {
    return keyword.empty() ? n.pointer : append_pointer(n.pointer, keyword);
  }

  // Records one failure; true when the walk should go on to find more.
  bool report(const Node& n, std::string_view keyword, std::string message) {
    out_->push_back(ValidationError{instance_path(), keyword_path(n, keyword), std::move(message)});
    return out_->size() < max_errors_;
  }

  bool more() const { return out_->size() < max_errors_; }

  bool abort(const Node& n, std::string_view keyword, std::string message) {
    if (!aborted_) {
      aborted_ = true;
      abort_error_ = ValidationError{instance_path(), keyword_path(n, keyword), std::move(message)};
    }
    return false;
  }

  // A pattern search counts as kPatternSearchSteps validation steps: its cost is bounded by the
  // match limit, and the number of them by the step budget.
  bool count_search(const Node& n) {
    steps_ += kPatternSearchSteps;
    if (steps_ <= kMaxValidationSteps) return true;
    return abort(n, "", "validation needs more than " + std::to_string(kMaxValidationSteps) +
                            " steps: the schema and the answer are too costly to check together");
  }

  bool eval_at_key(NodeIndex i, const json& v, std::string_view key, bool collect) {
    path_.push_back(Segment{key, 0, false});
    const bool ok = eval(i, v, collect);
    path_.pop_back();
    return ok;
  }

  bool eval_at_index(NodeIndex i, const json& v, std::size_t index, bool collect) {
    path_.push_back(Segment{{}, index, true});
    const bool ok = eval(i, v, collect);
    path_.pop_back();
    return ok;
  }

  // Failure handling inside eval(): in quiet mode the first failure ends the node; when collecting,
  // the message is built and the walk goes on while more errors are wanted.
#define OVERHEAD_SCHEMA_FAIL(keyword, message_expr)               \
  do {                                                            \
    ok = false;                                                   \
    if (!collect || !report(n, keyword, message_expr)) return false; \
  } while (0)
  // A subschema evaluated in place reported its own errors.
#define OVERHEAD_SCHEMA_SUB(call)                    \
  do {                                               \
    if (!(call)) {                                   \
      ok = false;                                    \
      if (aborted_ || !collect || !more()) return false; \
    }                                                \
  } while (0)

  bool eval(NodeIndex index, const json& v, bool collect) {
    const Node& n = program_.nodes[static_cast<std::size_t>(index)];
    if (aborted_) return false;
    if (++steps_ > kMaxValidationSteps) {
      return abort(n, "", "validation needs more than " + std::to_string(kMaxValidationSteps) +
                              " steps: the schema and the answer are too costly to check together");
    }
    if (depth_ >= kMaxValidationDepth) {
      return abort(n, "", "validation nests more than " + std::to_string(kMaxValidationDepth) +
                              " subschemas deep (a reference that loops without progress?)");
    }
    DepthGuard guard(depth_);
    bool ok = true;
    if (n.is_boolean) {
      if (n.boolean_value) return true;
      OVERHEAD_SCHEMA_FAIL("", "no value is allowed here (the schema is false)");
      return false;
    }
    if (n.ref != kNone) {
      OVERHEAD_SCHEMA_SUB(eval(n.ref, v, collect));
      if (n.ref_only) return ok;
    }
    if (n.types != 0 && (n.types & type_bits(v)) == 0) {
      OVERHEAD_SCHEMA_FAIL("type", show(v) + " is not of type " + type_names(n.types));
    }
    if (n.enum_values) {
      if (std::find(n.enum_values->begin(), n.enum_values->end(), v) == n.enum_values->end()) {
        OVERHEAD_SCHEMA_FAIL("enum", show(v) + " is not one of " + show(json(*n.enum_values)));
      }
    }
    if (n.const_value && !(*n.const_value == v)) {
      OVERHEAD_SCHEMA_FAIL("const", show(v) + " is not the constant " + show(*n.const_value));
    }
    switch (v.type()) {
      case json::value_t::number_integer:
      case json::value_t::number_unsigned:
      case json::value_t::number_float:
        if (!eval_number(n, v, collect)) {
          ok = false;
          if (!collect || !more()) return false;
        }
        break;
      case json::value_t::string:
        if (!eval_string(n, v, collect)) {
          ok = false;
          if (aborted_ || !collect || !more()) return false;
        }
        break;
      case json::value_t::array:
        if (!eval_array(n, v, collect)) {
          ok = false;
          if (aborted_ || !collect || !more()) return false;
        }
        break;
      case json::value_t::object:
        if (!eval_object(n, v, collect)) {
          ok = false;
          if (aborted_ || !collect || !more()) return false;
        }
        break;
      default: break;
    }
    if (!eval_combinators(n, v, collect)) ok = false;
    return ok && !aborted_;
  }

  bool eval_number(const Node& n, const json& v, bool collect) {
    bool ok = true;
    if (n.minimum && compare_numbers(v, *n.minimum) < 0) {
      OVERHEAD_SCHEMA_FAIL("minimum", show(v) + " is less than the minimum " + show(*n.minimum));
    }
    if (n.maximum && compare_numbers(v, *n.maximum) > 0) {
      OVERHEAD_SCHEMA_FAIL("maximum", show(v) + " is greater than the maximum " + show(*n.maximum));
    }
    if (n.exclusive_minimum && compare_numbers(v, *n.exclusive_minimum) <= 0) {
      OVERHEAD_SCHEMA_FAIL("exclusiveMinimum",
                           show(v) + " is not greater than the exclusive minimum " + show(*n.exclusive_minimum));
    }
    if (n.exclusive_maximum && compare_numbers(v, *n.exclusive_maximum) >= 0) {
      OVERHEAD_SCHEMA_FAIL("exclusiveMaximum",
                           show(v) + " is not less than the exclusive maximum " + show(*n.exclusive_maximum));
    }
    if (n.multiple_of && !is_multiple_of(v, *n.multiple_of)) {
      OVERHEAD_SCHEMA_FAIL("multipleOf", show(v) + " is not a multiple of " + show(*n.multiple_of));
    }
    return ok;
  }

  bool eval_string(const Node& n, const json& v, bool collect) {
    bool ok = true;
    const auto& s = v.get_ref<const std::string&>();
    if (n.min_length || n.max_length) {
      const std::size_t length = util::utf8::count_code_points(s);
      if (n.min_length && length < *n.min_length) {
        OVERHEAD_SCHEMA_FAIL("minLength", show(v) + " is shorter than " + std::to_string(*n.min_length) +
                                              " characters (" + std::to_string(length) + ")");
      }
      if (n.max_length && length > *n.max_length) {
        OVERHEAD_SCHEMA_FAIL("maxLength", show(v) + " is longer than " + std::to_string(*n.max_length) +
                                              " characters (" + std::to_string(length) + ")");
      }
    }
    if (n.pattern) {
      const Pattern& p = *program_.patterns[*n.pattern];
      if (!count_search(n)) return false;
      switch (p.search(s)) {
        case Pattern::Match::kYes: break;
        case Pattern::Match::kNo: OVERHEAD_SCHEMA_FAIL("pattern", show(v) + " does not match the pattern " + show(json(p.source()))); break;
        case Pattern::Match::kTooCostly:
          return abort(n, "pattern", "the pattern " + show(json(p.source())) +
                                         " passed its match limit on this string: it cannot be checked");
      }
    }
    return ok;
  }

  bool eval_array(const Node& n, const json& v, bool collect) {
    bool ok = true;
    const std::size_t size = v.size();
    if (n.min_items && size < *n.min_items) {
      OVERHEAD_SCHEMA_FAIL("minItems", "the array has " + std::to_string(size) + " items, fewer than the minimum " +
                                           std::to_string(*n.min_items));
    }
    if (n.max_items && size > *n.max_items) {
      OVERHEAD_SCHEMA_FAIL("maxItems", "the array has " + std::to_string(size) + " items, more than the maximum " +
                                           std::to_string(*n.max_items));
    }
    if (!n.tuple.empty() || n.rest_items != kNone) {
      for (std::size_t i = 0; i < size; ++i) {
        const NodeIndex item = i < n.tuple.size() ? n.tuple[i] : n.rest_items;
        if (item == kNone) break;
        OVERHEAD_SCHEMA_SUB(eval_at_index(item, v[i], i, collect));
      }
    }
    if (n.unique_items && size > 1) {
      std::size_t first = 0, second = 0;
      if (!all_unique(v, first, second)) {
        if (aborted_) return false;
        OVERHEAD_SCHEMA_FAIL("uniqueItems", "items " + std::to_string(first) + " and " + std::to_string(second) +
                                                " are equal (" + show(v[first]) + ")");
      }
    }
    if (n.contains != kNone) {
      std::size_t matches = 0;
      for (std::size_t i = 0; i < size; ++i) {
        if (eval_at_index(n.contains, v[i], i, false)) ++matches;
        if (aborted_) return false;
      }
      const std::size_t at_least = n.min_contains.value_or(1);
      if (matches < at_least) {
        OVERHEAD_SCHEMA_FAIL("contains", at_least == 1 && !n.min_contains
                                             ? std::string("no item matches the schema of contains")
                                             : std::to_string(matches) + " items match the schema of contains, fewer than minContains " +
                                                   std::to_string(at_least));
      }
      if (n.max_contains && matches > *n.max_contains) {
        OVERHEAD_SCHEMA_FAIL("maxContains", std::to_string(matches) +
                                                " items match the schema of contains, more than maxContains " +
                                                std::to_string(*n.max_contains));
      }
    }
    return ok;
  }

  // Equal items by hashing first (1 and 1.0 hash alike), then comparing equal hashes only; the
  // comparisons count as validation steps.
  bool all_unique(const json& v, std::size_t& first, std::size_t& second) {
    std::vector<std::pair<std::size_t, std::size_t>> hashes;
    hashes.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) hashes.emplace_back(hash_json(v[i]), i);
    std::sort(hashes.begin(), hashes.end());
    steps_ += v.size();
    for (std::size_t a = 0; a < hashes.size(); ++a) {
      for (std::size_t b = a + 1; b < hashes.size() && hashes[b].first == hashes[a].first; ++b) {
        if (++steps_ > kMaxValidationSteps) {
          aborted_ = true;
          abort_error_ = ValidationError{instance_path(), "", "uniqueItems needs too many comparisons"};
          return false;
        }
        if (v[hashes[a].second] == v[hashes[b].second]) {
          first = std::min(hashes[a].second, hashes[b].second);
          second = std::max(hashes[a].second, hashes[b].second);
          return false;
        }
      }
    }
    return true;
  }

  NodeIndex find_property(const Node& n, const std::string& name) const {
    const auto it = std::lower_bound(n.properties.begin(), n.properties.end(), name,
                                     [](const auto& entry, const std::string& key) { return entry.first < key; });
    return it != n.properties.end() && it->first == name ? it->second : kNone;
  }

  bool eval_object(const Node& n, const json& v, bool collect) {
    bool ok = true;
    const std::size_t size = v.size();
    if (n.min_properties && size < *n.min_properties) {
      OVERHEAD_SCHEMA_FAIL("minProperties", "the object has " + std::to_string(size) +
                                                " properties, fewer than the minimum " + std::to_string(*n.min_properties));
    }
    if (n.max_properties && size > *n.max_properties) {
      OVERHEAD_SCHEMA_FAIL("maxProperties", "the object has " + std::to_string(size) +
                                                " properties, more than the maximum " + std::to_string(*n.max_properties));
    }
    for (const std::string& name : n.required) {
      if (!v.contains(name)) OVERHEAD_SCHEMA_FAIL("required", "the required property " + show(json(name)) + " is missing");
    }
    const bool has_members_rules =
        !n.properties.empty() || !n.pattern_properties.empty() || n.additional_properties != kNone;
    if (has_members_rules || n.property_names != kNone) {
      for (const auto& [key, value] : v.items()) {
        if (n.property_names != kNone) {
          if (!eval(n.property_names, json(key), false)) {
            if (aborted_) return false;
            OVERHEAD_SCHEMA_FAIL("propertyNames", "the property name " + show(json(key)) +
                                                      " does not match the schema of propertyNames");
          }
        }
        if (!has_members_rules) continue;
        bool matched = false;
        if (const NodeIndex p = find_property(n, key); p != kNone) {
          matched = true;
          OVERHEAD_SCHEMA_SUB(eval_at_key(p, value, key, collect));
        }
        for (std::size_t i = 0; i < n.pattern_properties.size(); ++i) {
          const auto& [pattern_index, schema] = n.pattern_properties[i];
          const Pattern& pattern = *program_.patterns[pattern_index];
          if (!count_search(n)) return false;
          const auto match = pattern.search(key);
          if (match == Pattern::Match::kTooCostly) {
            return abort(n, append_pointer("patternProperties", pattern.source()),
                         "the pattern " + show(json(pattern.source())) +
                             " passed its match limit on a property name: it cannot be checked");
          }
          if (match == Pattern::Match::kNo) continue;
          matched = true;
          OVERHEAD_SCHEMA_SUB(eval_at_key(schema, value, key, collect));
        }
        if (!matched && n.additional_properties != kNone) {
          const Node& extra = program_.nodes[static_cast<std::size_t>(n.additional_properties)];
          if (extra.is_boolean && !extra.boolean_value) {
            OVERHEAD_SCHEMA_FAIL("additionalProperties",
                                 "the property " + show(json(key)) + " is not allowed (additionalProperties is false)");
          } else {
            OVERHEAD_SCHEMA_SUB(eval_at_key(n.additional_properties, value, key, collect));
          }
        }
      }
    }
    for (const auto& [name, needed] : n.dependent_required) {
      if (!v.contains(name)) continue;
      for (const std::string& other : needed) {
        if (!v.contains(other)) {
          OVERHEAD_SCHEMA_FAIL(append_pointer(n.dependent_required_keyword, name),
                               "the property " + show(json(other)) + " is required when " + show(json(name)) + " is present");
        }
      }
    }
    for (const auto& [name, schema] : n.dependent_schemas) {
      if (v.contains(name)) OVERHEAD_SCHEMA_SUB(eval(schema, v, collect));
    }
    return ok;
  }

  // The best single error of a failed branch, for the message of anyOf/oneOf: the one deepest in
  // the instance (the branch that got furthest).
  std::string closest_error(const std::vector<NodeIndex>& branches, const json& v) {
    std::vector<ValidationError>* saved = out_;
    const std::size_t saved_max = max_errors_;
    std::vector<ValidationError> best;
    for (const NodeIndex b : branches) {
      std::vector<ValidationError> errors;
      out_ = &errors;
      max_errors_ = 1;
      eval(b, v, true);
      if (aborted_) break;
      if (!errors.empty() && (best.empty() || errors[0].instance_path.size() > best[0].instance_path.size())) {
        best = std::move(errors);
      }
    }
    out_ = saved;
    max_errors_ = saved_max;
    return best.empty() ? std::string() : "; closest: " + best[0].to_string();
  }

  bool eval_combinators(const Node& n, const json& v, bool collect) {
    bool ok = true;
    for (const NodeIndex sub : n.all_of) OVERHEAD_SCHEMA_SUB(eval(sub, v, collect));
    if (!n.any_of.empty()) {
      bool any = false;
      for (const NodeIndex sub : n.any_of) {
        if (eval(sub, v, false)) {
          any = true;
          break;
        }
        if (aborted_) return false;
      }
      if (!any) {
        OVERHEAD_SCHEMA_FAIL("anyOf", "matches none of the " + std::to_string(n.any_of.size()) + " schemas of anyOf" +
                                          closest_error(n.any_of, v));
      }
    }
    if (!n.one_of.empty()) {
      std::vector<std::size_t> matching;
      for (std::size_t i = 0; i < n.one_of.size() && matching.size() < 2; ++i) {
        if (eval(n.one_of[i], v, false)) matching.push_back(i);
        if (aborted_) return false;
      }
      if (matching.empty()) {
        OVERHEAD_SCHEMA_FAIL("oneOf", "matches none of the " + std::to_string(n.one_of.size()) + " schemas of oneOf" +
                                          closest_error(n.one_of, v));
      } else if (matching.size() > 1) {
        OVERHEAD_SCHEMA_FAIL("oneOf", "matches more than one schema of oneOf (" + std::to_string(matching[0]) + " and " +
                                          std::to_string(matching[1]) + ")");
      }
    }
    if (n.not_schema != kNone) {
      const bool matched = eval(n.not_schema, v, false);
      if (aborted_) return false;
      if (matched) OVERHEAD_SCHEMA_FAIL("not", show(v) + " matches the schema of not");
    }
    if (n.if_schema != kNone) {
      const bool condition = eval(n.if_schema, v, false);
      if (aborted_) return false;
      const NodeIndex branch = condition ? n.then_schema : n.else_schema;
      if (branch != kNone) OVERHEAD_SCHEMA_SUB(eval(branch, v, collect));
    }
    return ok;
  }

#undef OVERHEAD_SCHEMA_FAIL
#undef OVERHEAD_SCHEMA_SUB

  const Program& program_;
  std::size_t max_errors_;
  std::vector<ValidationError>* out_;
  std::vector<Segment> path_;
  std::size_t steps_ = 0;
  std::size_t depth_ = 0;
  bool aborted_ = false;
  ValidationError abort_error_;
};

}  // namespace

void validate_program(const Program& program, const json& instance, std::size_t max_errors,
                      std::vector<ValidationError>& out) {
  Validator(program, std::max<std::size_t>(1, max_errors), out).run(instance);
}

}  // namespace overhead::schema::internal
