// Validation errors: where (instance and schema pointers), the message, how many; answers that are
// not JSON; the $ref dialect rule; and the bounds that keep validation cheap whatever the client sent.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "schema/compiled_schema.hpp"
#include "schema/limits.hpp"

namespace {

using nlohmann::json;
using overhead::schema::compile;
using overhead::schema::CompileOptions;
using overhead::schema::Dialect;

const json kOrderSchema = json::parse(R"({
  "type": "object",
  "properties": {
    "customer": {"type": "string", "minLength": 1},
    "status": {"enum": ["open", "paid", "shipped"]},
    "items": {"type": "array", "minItems": 1, "items": {
      "type": "object",
      "properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"},
                     "price": {"type": "number", "minimum": 0},
                     "qty": {"type": "integer", "exclusiveMinimum": 0}},
      "required": ["sku", "price", "qty"], "additionalProperties": false}}
  },
  "required": ["customer", "status", "items"],
  "additionalProperties": false})");

TEST(Validate, TheHeadersExample) {
  const auto schema = compile(kOrderSchema);
  const auto result = schema.validate_text(R"({"customer": "ann", "status": "paid", "items": [
      {"sku": "ABC-0001", "price": 2.5, "qty": 1}, {"sku": "ABC-0002", "price": 0, "qty": 3},
      {"sku": "ABC-0003", "price": -1, "qty": 2}]})");
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_EQ(result.errors[0].to_string(), "/items/2/price: -1 is less than the minimum 0");
  EXPECT_EQ(result.errors[0].instance_path, "/items/2/price");
  EXPECT_EQ(result.errors[0].schema_path, "/properties/items/items/properties/price/minimum");
}

TEST(Validate, MessagesOfEachKind) {
  const auto schema = compile(kOrderSchema);
  auto first = [&](const char* text) { return schema.validate_text(text).errors.at(0).to_string(); };
  EXPECT_EQ(first(R"({"customer": "a", "status": "lost", "items": [{"sku": "ABC-0001", "price": 1, "qty": 1}]})"),
            "/status: \"lost\" is not one of [\"open\",\"paid\",\"shipped\"]");
  EXPECT_EQ(first(R"({"customer": "a", "status": "open", "items": []})"),
            "/items: the array has 0 items, fewer than the minimum 1");
  EXPECT_EQ(first(R"({"customer": "a", "status": "open"})"), "(root): the required property \"items\" is missing");
  EXPECT_EQ(first(R"({"customer": "a", "status": "open", "items": [{"sku": "x", "price": 1, "qty": 1}]})"),
            "/items/0/sku: \"x\" does not match the pattern \"^[A-Z]{3}-[0-9]{4}$\"");
  EXPECT_EQ(first(R"({"customer": "a", "status": "open", "items": [{"sku": "ABC-0001", "price": 1, "qty": 1.5}]})"),
            "/items/0/qty: 1.5 is not of type integer");
  EXPECT_EQ(first(R"({"customer": "a", "status": "open", "items": [{"sku": "ABC-0001", "price": 1, "qty": 1}], "x": 1})"),
            "(root): the property \"x\" is not allowed (additionalProperties is false)");
}

TEST(Validate, AllErrorsUpToTheBound) {
  const auto schema = compile(kOrderSchema);
  const json answer = json::parse(R"({"customer": "", "status": "x", "items": [{"sku": 1, "price": -1, "qty": 0}]})");
  EXPECT_EQ(schema.validate(answer).errors.size(), 1u);
  const auto all = schema.validate(answer, 100);
  ASSERT_EQ(all.errors.size(), 5u);  // in the order of the members' names (as parsed)
  EXPECT_EQ(all.errors[0].instance_path, "/customer");
  EXPECT_EQ(all.errors[2].to_string(), "/items/0/qty: 0 is not greater than the exclusive minimum 0");
  EXPECT_EQ(all.errors[4].instance_path, "/status");
  EXPECT_EQ(schema.validate(answer, 2).errors.size(), 2u);
}

TEST(Validate, TextThatIsNotJsonSaysWhere) {
  const auto schema = compile(json::object());
  const auto result = schema.validate_text(R"({"a": 1,, "b": 2})");
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_EQ(result.errors[0].instance_path, "");
  EXPECT_NE(result.errors[0].message.find("the answer is not valid JSON"), std::string::npos) << result.errors[0].message;
  EXPECT_NE(result.errors[0].message.find("(at byte 8)"), std::string::npos) << result.errors[0].message;
  EXPECT_NE(schema.validate_text("").errors.at(0).message.find("not valid JSON"), std::string::npos);
  EXPECT_NE(schema.validate_text("Sure! {\"a\": 1}").errors.at(0).message.find("at byte 0"), std::string::npos);
  EXPECT_NE(schema.validate_text("{} {}").errors.at(0).message.find("not valid JSON"), std::string::npos);
  EXPECT_TRUE(schema.validate_text(" {\"a\": 1}\n").valid());
  std::string deep(300, '[');
  deep += std::string(300, ']');
  EXPECT_NE(schema.validate_text(deep).errors.at(0).message.find("256 levels"), std::string::npos);
}

TEST(Validate, LengthsCountCodePoints) {
  const auto schema = compile(json::parse(R"({"minLength": 3, "maxLength": 3})"));
  EXPECT_TRUE(schema.validate(json("héé")).valid());   // 5 bytes, 3 code points
  EXPECT_TRUE(schema.validate(json("a😀b")).valid());  // a 4-byte character is one
  EXPECT_FALSE(schema.validate(json("ab")).valid());
}

TEST(Validate, IntegersAreNumbersWithoutFraction) {
  const auto schema = compile(json::parse(R"({"type": "integer"})"));
  EXPECT_TRUE(schema.validate(json::parse("1.0")).valid());
  EXPECT_TRUE(schema.validate(json::parse("18446744073709551615")).valid());
  EXPECT_FALSE(schema.validate(json::parse("1.5")).valid());
  const auto number = compile(json::parse(R"({"type": "number", "maximum": 9007199254740993})"));
  EXPECT_TRUE(number.validate(json::parse("9007199254740993")).valid());
  EXPECT_FALSE(number.validate(json::parse("9007199254740994")).valid());  // exact between integers
}

TEST(Validate, SiblingsOfRefApplyUnlessDraft7) {
  const json schema = json::parse(R"({"$defs": {"a": {"type": "array"}}, "$ref": "#/$defs/a", "maxItems": 1})");
  EXPECT_FALSE(compile(schema).validate(json::parse("[1, 2]")).valid());
  EXPECT_TRUE(compile(schema, CompileOptions{.where = "", .dialect = Dialect::kDraft7}).validate(json::parse("[1, 2]")).valid());
  json declared = schema;
  declared["$schema"] = "http://json-schema.org/draft-07/schema#";
  declared["definitions"] = declared["$defs"];
  EXPECT_TRUE(compile(declared).validate(json::parse("[1, 2]")).valid());
}

TEST(Validate, PrefixItemsThenItems) {
  const auto schema = compile(json::parse(R"({"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false})"));
  EXPECT_TRUE(schema.validate(json::parse(R"(["a", 1])")).valid());
  EXPECT_TRUE(schema.validate(json::parse(R"(["a"])")).valid());
  const auto extra = schema.validate(json::parse(R"(["a", 1, null])"));
  ASSERT_FALSE(extra.valid());
  EXPECT_EQ(extra.errors[0].to_string(), "/2: no value is allowed here (the schema is false)");
  EXPECT_EQ(extra.errors[0].schema_path, "/items");
}

TEST(Validate, CombinatorMessagesPointToTheClosestBranch) {
  const auto schema = compile(json::parse(R"({"anyOf": [{"type": "string"},
      {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}]})"));
  const auto result = schema.validate(json::parse(R"({"n": "x"})"));
  ASSERT_FALSE(result.valid());
  EXPECT_EQ(result.errors[0].to_string(),
            "(root): matches none of the 2 schemas of anyOf; closest: /n: \"x\" is not of type integer");
  const auto one = compile(json::parse(R"({"oneOf": [{"type": "integer"}, {"minimum": 0}]})"));
  EXPECT_EQ(one.validate(json(1)).errors.at(0).message, "matches more than one schema of oneOf (0 and 1)");
}

TEST(Validate, UniqueItemsComparesNumbersByValue) {
  const auto schema = compile(json::parse(R"({"uniqueItems": true})"));
  EXPECT_EQ(schema.validate(json::parse(R"([1, {"a": [1]}, 2, {"a": [1.0]}])")).errors.at(0).message,
            "items 1 and 3 are equal ({\"a\":[1]})");
  json many = json::array();
  for (int i = 0; i < 100000; ++i) many.push_back(i);
  EXPECT_TRUE(schema.validate(many).valid());
}

// The bounds: a pattern that backtracks forever, a reference that loops without progress, and
// work multiplied by nested combinators all end in bounded time with an error.
TEST(ValidateLimits, PatternMatchLimit) {
  const auto schema = compile(json::parse(R"({"pattern": "^(a+)+$"})"));
  const std::string evil = std::string(40, 'a') + "!";
  const auto start = std::chrono::steady_clock::now();
  const auto result = schema.validate(json(evil));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(result.valid());
  EXPECT_NE(result.errors[0].message.find("passed its match limit"), std::string::npos) << result.errors[0].message;
  EXPECT_LT(elapsed, std::chrono::seconds(1));
  EXPECT_TRUE(schema.validate(json(std::string(40, 'a'))).valid());
}

TEST(ValidateLimits, MatchLimitUnderNotIsAnErrorNotASuccess) {
  const auto schema = compile(json::parse(R"({"not": {"pattern": "^(a+)+$"}})"));
  const auto result = schema.validate(json(std::string(40, 'a') + "!"));
  ASSERT_FALSE(result.valid());
  EXPECT_NE(result.errors[0].message.find("match limit"), std::string::npos);
}

TEST(ValidateLimits, RefLoopWithoutProgress) {
  const auto schema = compile(json::parse(R"({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"})"));
  const auto result = schema.validate(json(1));
  ASSERT_FALSE(result.valid());
  EXPECT_NE(result.errors[0].message.find("nests more than 512 subschemas"), std::string::npos) << result.errors[0].message;
}

TEST(ValidateLimits, StepsAreBounded) {
  // Every item is tried against every branch of nested anyOfs that all fail: 8^4 leaves per item.
  json branch = {{"type", "integer"}};
  for (int level = 0; level < 4; ++level) branch = {{"anyOf", json::array({branch, branch, branch, branch, branch, branch, branch, branch})}};
  const auto schema = compile(json{{"items", {{"not", branch}}}});
  json many = json::array();
  for (int i = 0; i < 2000; ++i) many.push_back("x");
  const auto start = std::chrono::steady_clock::now();
  const auto result = schema.validate(many);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_FALSE(result.valid());
  EXPECT_NE(result.errors[0].message.find("steps"), std::string::npos) << result.errors[0].message;
}

// One compiled schema, validated from several threads at once (the gateway's use): patterns keep
// their matching state per thread.
TEST(Validate, ConcurrentUseOfOneSchema) {
  const auto schema = compile(kOrderSchema);
  const std::string good = R"({"customer": "a", "status": "open", "items": [{"sku": "ABC-0001", "price": 1, "qty": 1}]})";
  const std::string bad = R"({"customer": "a", "status": "open", "items": [{"sku": "ABC-001", "price": 1, "qty": 1}]})";
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        if (!schema.validate_text(good).valid() || schema.validate_text(bad).valid()) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Validate, DollarMatchesAtTheVeryEndOnlyAsInEcma262) {
  const auto schema = compile(json::parse(R"({"pattern": "^abc$"})"));
  EXPECT_TRUE(schema.validate(json("abc")).valid());
  EXPECT_FALSE(schema.validate(json("abc\n")).valid());
}

TEST(ValidateLimits, PatternSearchesCountAsSteps) {
  const auto schema = compile(json::parse(R"({"items": {"pattern": "^a"}})"));
  const json fine(10'000, "abc");
  EXPECT_TRUE(schema.validate(fine).valid());
  const json too_many(30'000, "abc");  // 30,000 searches x 100 steps > 2,000,000
  const auto result = schema.validate(too_many);
  ASSERT_FALSE(result.valid());
  EXPECT_NE(result.errors[0].message.find("steps"), std::string::npos) << result.errors[0].message;
}

TEST(Validate, FormatIsNotEnforced) {
  const auto schema = compile(json::parse(R"({"type": "string", "format": "email"})"));
  EXPECT_TRUE(schema.validate(json("not an email")).valid());
}

}  // namespace
