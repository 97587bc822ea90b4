// The structured-output constraint in each engine dialect's /v1/completions body
// (backends/engine_dialect.hpp): vllm structured_outputs.json, sglang json_schema as a string,
// llamacpp json_schema as an object; openai and tgi refuse a constrained request (a permanent
// engine_refused error saying which dialect= to set), and an unconstrained body carries none.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "backends/engine_dialect.hpp"
#include "backends/openai_decoder.hpp"
#include "ports/errors.hpp"

namespace overhead::backends {
namespace {

using nlohmann::json;

const std::string kSchema = R"({"type":"object","properties":{"city":{"type":"string","maxLength":8}},"required":["city"]})";

json body_for(EngineDialect d, std::string_view schema) {
  OpenAiDecoderParams p;
  p.base_url = "http://127.0.0.1:1/v1";
  p.dialect = d;
  p.prompt = ports::PromptForm::text;
  ports::DecodeRequest r;
  r.prompt = "Hello";
  r.tokenizer = "m";
  r.max_tokens = 40;
  r.json_schema = schema;
  return json::parse(completion_request_body(r, p));
}

TEST(EngineConstraint, EachDialectSpellsTheSchemaItsWay) {
  const json schema = json::parse(kSchema);
  const json vllm = body_for(EngineDialect::vllm, kSchema);
  EXPECT_EQ(vllm["structured_outputs"], json({{"json", schema}}));
  EXPECT_FALSE(vllm.contains("guided_json"));
  const json sglang = body_for(EngineDialect::sglang, kSchema);
  ASSERT_TRUE(sglang["json_schema"].is_string()) << "SGLang's json_schema is Optional[str]";
  EXPECT_EQ(json::parse(sglang["json_schema"].get<std::string>()), schema);
  const json llamacpp = body_for(EngineDialect::llamacpp, kSchema);
  EXPECT_EQ(llamacpp["json_schema"], schema);
  for (const json& b : {vllm, sglang, llamacpp}) {
    EXPECT_EQ(b["prompt"], "Hello");
    EXPECT_EQ(b["max_tokens"], 40);
  }
}

TEST(EngineConstraint, ABooleanSchemaIsSpelledToo) {
  EXPECT_EQ(body_for(EngineDialect::llamacpp, "true")["json_schema"], true);
}

TEST(EngineConstraint, DialectsWithoutAConstraintFieldRefuseTheRequest) {
  for (const EngineDialect d : {EngineDialect::openai, EngineDialect::tgi}) {
    try {
      (void)body_for(d, kSchema);
      ADD_FAILURE() << "dialect " << dialect_traits(d).name << " sent a constrained request unconstrained";
    } catch (const ports::DecoderError& e) {
      EXPECT_EQ(e.failure(), ports::Failure::permanent);
      EXPECT_NE(e.refusal().find("dialect=" + std::string(dialect_traits(d).name) + " cannot constrain"), std::string::npos) << e.refusal();
      EXPECT_NE(e.refusal().find("dialect=vllm|sglang|llamacpp"), std::string::npos) << e.refusal();
    }
  }
}

TEST(EngineConstraint, NoConstraintNoField) {
  for (const EngineDialect d : {EngineDialect::openai, EngineDialect::vllm, EngineDialect::sglang, EngineDialect::llamacpp,
                                EngineDialect::tgi}) {
    const json b = body_for(d, "");
    EXPECT_FALSE(b.contains("json_schema")) << dialect_traits(d).name;
    EXPECT_FALSE(b.contains("structured_outputs")) << dialect_traits(d).name;
    EXPECT_FALSE(b.contains("grammar")) << dialect_traits(d).name;
  }
}

}  // namespace
}  // namespace overhead::backends
