// The JSON Schema Test Suite (draft 7, the Debian package json-schema-test-suite) against the
// validator: every case of every file whose keywords are enforced must pass; the files and groups
// left out are listed with the reason, and a test checks that each of them is something this
// module refuses at compile time or does not enforce by design (an annotation, an optional part of
// the specification), never an enforced keyword silently skipped.
//
// The suite's folder comes from OVERHEAD_JSON_SCHEMA_SUITE_DIR (tests/schema/CMakeLists.txt). A
// missing suite fails these tests: it is a test package of scripts/setup.sh.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <string_view>

#include "schema/compiled_schema.hpp"
#include "schema/keywords.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using overhead::schema::compile;
using overhead::schema::CompileOptions;
using overhead::schema::Dialect;
using overhead::schema::SchemaError;

const fs::path kSuiteDir = OVERHEAD_JSON_SCHEMA_SUITE_DIR;

// Files run whole: every case must pass.
constexpr std::string_view kRunFiles[] = {
    "additionalItems.json", "additionalProperties.json", "allOf.json", "anyOf.json", "boolean_schema.json",
    "const.json", "contains.json", "default.json", "dependencies.json", "enum.json", "exclusiveMaximum.json",
    "exclusiveMinimum.json", "if-then-else.json", "items.json", "maxItems.json", "maxLength.json",
    "maxProperties.json", "maximum.json", "minItems.json", "minLength.json", "minProperties.json", "minimum.json",
    "multipleOf.json", "not.json", "oneOf.json", "pattern.json", "patternProperties.json", "properties.json",
    "propertyNames.json", "ref.json", "required.json", "type.json", "uniqueItems.json",
    // Optional in the suite, and passing: integers and numbers beyond 64 bits (compared as doubles,
    // which the cases allow), and 1.0 as an integer.
    "optional/bignum.json", "optional/zeroTerminatedFloats.json"};

// Why a file or group is left out.
enum class Because {
  kRefused,     // its schemas use what compile() refuses (remote $ref): checked to throw SchemaError
  kAnnotation,  // a keyword this module reads as an annotation only (keywords.hpp)
  kOptional,    // the suite's optional/ folder: behaviour the specification does not require
};

struct SkippedFile {
  std::string_view path;  // relative to the suite folder; a trailing '/' covers a folder
  Because because;
  std::string_view keyword;
  std::string_view why;
};

constexpr SkippedFile kSkippedFiles[] = {
    {"refRemote.json", Because::kRefused, "$ref", "remote references (http://localhost:1234/...) are refused"},
    {"definitions.json", Because::kRefused, "$ref", "its schemas are a remote $ref to the draft-07 meta-schema"},
    {"optional/format/", Because::kAnnotation, "format", "format is an annotation: not checked"},
    {"optional/content.json", Because::kAnnotation, "contentMediaType", "content keywords are annotations"},
    {"optional/ecmascript-regex.json", Because::kOptional, "pattern",
     "its one case wants \\Z refused as not ECMA-262; PCRE2 reads it (end of subject)"},
};

struct SkippedGroup {
  std::string_view file;
  std::string_view description;
  std::string_view why;
};

// Groups of a run file left out; each group's schema must be refused by compile().
constexpr SkippedGroup kSkippedGroups[] = {
    {"ref.json", "remote ref, containing refs itself", "a remote $ref to the draft-07 meta-schema"},
    {"ref.json", "Recursive references between schemas", "$ref resolved against $id (\"node\", \"tree\")"},
};

bool group_skipped(std::string_view file, std::string_view description) {
  return std::any_of(std::begin(kSkippedGroups), std::end(kSkippedGroups),
                     [&](const SkippedGroup& g) { return g.file == file && g.description == description; });
}

json read_suite_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path
                  << ": install the json-schema-test-suite package (scripts/setup.sh) or set OVERHEAD_JSON_SCHEMA_SUITE_DIR";
    return json::array();
  }
  return json::parse(in);
}

// Draft 7's suite: keywords beside $ref are ignored there.
CompileOptions draft7() { return CompileOptions{.where = "", .dialect = Dialect::kDraft7}; }

class Draft7 : public testing::TestWithParam<std::string_view> {};

TEST_P(Draft7, EveryCasePasses) {
  const std::string file(GetParam());
  ASSERT_TRUE(fs::is_directory(kSuiteDir)) << "the JSON Schema Test Suite is missing at " << kSuiteDir
                                           << ": install json-schema-test-suite (scripts/setup.sh)";
  const json groups = read_suite_file(kSuiteDir / file);
  ASSERT_FALSE(groups.empty()) << file;
  std::size_t run = 0, passed = 0, skipped = 0;
  for (const json& group : groups) {
    const auto description = group.at("description").get<std::string>();
    if (group_skipped(file, description)) {
      skipped += group.at("tests").size();
      continue;
    }
    std::optional<overhead::schema::CompiledSchema> schema;
    try {
      schema = compile(group.at("schema"), draft7());
    } catch (const SchemaError& e) {
      ADD_FAILURE() << file << " / " << description << ": does not compile: " << e.what();
      run += group.at("tests").size();
      continue;
    }
    for (const json& test : group.at("tests")) {
      ++run;
      const bool expected = test.at("valid").get<bool>();
      const auto result = schema->validate(test.at("data"));
      // Collecting every error walks the schema in the other mode: it must come to the same verdict,
      // and so must validating the data's text.
      const auto all = schema->validate(test.at("data"), 100);
      const auto from_text = schema->validate_text(test.at("data").dump());
      EXPECT_EQ(all.valid(), result.valid()) << file << " / " << description << " / " << test.at("description");
      EXPECT_EQ(from_text.valid(), result.valid()) << file << " / " << description << " / " << test.at("description");
      if (result.valid() == expected) {
        ++passed;
      } else {
        ADD_FAILURE() << file << " / " << description << " / " << test.at("description").get<std::string>()
                      << ": expected " << (expected ? "valid" : "invalid") << ", got "
                      << (result.valid() ? "valid" : result.errors[0].to_string()) << "\n  schema "
                      << group.at("schema").dump() << "\n  data " << test.at("data").dump();
      }
    }
  }
  std::cout << "[suite] " << file << ": " << run << " run, " << passed << " passed, " << skipped << " skipped\n";
  EXPECT_EQ(run, passed);
}

std::string test_name(const testing::TestParamInfo<std::string_view>& info) {
  std::string name(info.param.substr(0, info.param.size() - 5));  // without ".json"
  std::replace(name.begin(), name.end(), '-', '_');
  std::replace(name.begin(), name.end(), '/', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(File, Draft7, testing::ValuesIn(kRunFiles), test_name);

bool is_enforced(std::string_view keyword) {
  return std::find(std::begin(overhead::schema::kEnforcedKeywords), std::end(overhead::schema::kEnforcedKeywords),
                   keyword) != std::end(overhead::schema::kEnforcedKeywords);
}

bool is_annotation(std::string_view keyword) {
  return std::find(std::begin(overhead::schema::kAnnotationKeywords),
                   std::end(overhead::schema::kAnnotationKeywords),
                   keyword) != std::end(overhead::schema::kAnnotationKeywords);
}

// Every file of the suite is either run or listed as skipped, never both.
TEST(Draft7Suite, EveryFileIsRunOrSkippedWithAReason) {
  ASSERT_TRUE(fs::is_directory(kSuiteDir)) << "the JSON Schema Test Suite is missing at " << kSuiteDir;
  std::size_t files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kSuiteDir)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    ++files;
    const std::string rel = fs::relative(entry.path(), kSuiteDir).generic_string();
    const bool run = std::find(std::begin(kRunFiles), std::end(kRunFiles), rel) != std::end(kRunFiles);
    const bool skipped = std::any_of(std::begin(kSkippedFiles), std::end(kSkippedFiles), [&](const SkippedFile& s) {
      return s.path == rel || (s.path.back() == '/' && rel.starts_with(s.path));
    });
    EXPECT_NE(run, skipped) << rel << (run ? " is both run and skipped" : " is neither run nor listed as skipped");
  }
  EXPECT_GT(files, std::size(kRunFiles));
}

// The skip list holds only what is not enforced: refused files' schemas really are refused, an
// annotation is an annotation, and optional files are the suite's optional ones.
TEST(Draft7Suite, SkippedListHoldsOnlyWhatIsNotEnforced) {
  ASSERT_TRUE(fs::is_directory(kSuiteDir)) << "the JSON Schema Test Suite is missing at " << kSuiteDir;
  for (const SkippedFile& s : kSkippedFiles) {
    SCOPED_TRACE(std::string(s.path));
    switch (s.because) {
      case Because::kRefused: {
        const json groups = read_suite_file(kSuiteDir / std::string(s.path));
        ASSERT_FALSE(groups.empty());
        for (const json& group : groups) {
          EXPECT_THROW((void)compile(group.at("schema"), draft7()), SchemaError) << group.at("description");
        }
        break;
      }
      case Because::kAnnotation:
        EXPECT_TRUE(is_annotation(s.keyword)) << s.keyword;
        EXPECT_FALSE(is_enforced(s.keyword)) << s.keyword;
        break;
      case Because::kOptional:
        EXPECT_TRUE(s.path.starts_with("optional/"));
        break;
    }
  }
  for (const SkippedGroup& g : kSkippedGroups) {
    bool found = false;
    for (const json& group : read_suite_file(kSuiteDir / std::string(g.file))) {
      if (group.at("description") != g.description) continue;
      found = true;
      EXPECT_THROW((void)compile(group.at("schema"), draft7()), SchemaError) << g.description << ": " << g.why;
    }
    EXPECT_TRUE(found) << g.file << " has no group " << g.description;
  }
}

}  // namespace
