// Parsing the seed's JSONL and the queue bodies: every kind of bad input gives an ItemError of
// its kind naming the line or message.
#include <gtest/gtest.h>

#include <simdjson.h>

#include "ports/errors.hpp"
#include "pipe/work_item.hpp"
#include "fake_processor.hpp"

namespace overhead::pipe {
using ports::is_plain_queue_name;
using ports::ItemError;
namespace {

std::string kind_of(const std::string& line) {
  try {
    parse_source_line(line, 7);
  } catch (const ItemError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("line 7: ", 0), 0u) << e.what();
    return e.kind();
  }
  return "ok";
}

// Found by jsonl_record_fuzz and queue_body_fuzz: of duplicate keys the checks and counters took
// the first while the prompt (what is rendered) kept the last, so prompt_bytes/prompt_chars and
// the role check described another message than the one tokenized. The last counts everywhere,
// as with Python's json.loads.
TEST(WorkItem, DuplicateKeysTakeTheLastEverywhere) {
  auto rec = parse_source_line(
      R"({"id":"a","id":"b","model":"m","prompt":[{"role":"user","content":"long first text","content":"hi"}],)"
      R"("usage":{"input":1,"input":2}})",
      1);
  EXPECT_EQ(rec->id, "b");
  EXPECT_EQ(rec->prompt[0]["content"], "hi");
  EXPECT_EQ(rec->prompt_bytes, 2);
  EXPECT_EQ(rec->prompt_chars, 2);
  EXPECT_EQ(rec->api_input, 2);
  EXPECT_EQ(kind_of(R"({"id":"a","model":"m","prompt":[{"role":"user","role":5,"content":"x"}]})"), "bad_prompt");
  EXPECT_EQ(kind_of(R"({"id":"a","model":"m","prompt":[{"role":"user","content":"x"}],"prompt":"no"})"), "bad_prompt");
  const WorkItem item = parse_item_body(encode_item_body(*rec, "phi-4"), "message 1");
  EXPECT_EQ(item.source->prompt_bytes, 2);
  EXPECT_EQ(parse_item_body(R"({"tokenizer":"x","tokenizer":"phi-4","id":"a","model":"m","prompt":[{"role":"user","content":"x"}]})",
                             "message 2").tokenizer,
            "phi-4");
}

TEST(WorkItem, ParsesTheSeedShape) {
  auto rec = parse_source_line(testing::source_line("1-1", "日本語"), 3);
  EXPECT_EQ(rec->id, "1-1");
  EXPECT_EQ(rec->model, "m");
  EXPECT_EQ(rec->line, 3u);
  EXPECT_EQ(rec->prompt.size(), 1u);
  EXPECT_EQ(rec->prompt_chars, 3);
  EXPECT_EQ(rec->prompt_bytes, 9);
  EXPECT_EQ(rec->api_input, 3);
  EXPECT_EQ(rec->api_output, 4);
  auto nulls = parse_source_line(R"({"id":"x","model":"m","prompt":[{"role":"user","content":"hi"}],"usage":null})", 1);
  EXPECT_FALSE(nulls->api_input.has_value());
}

TEST(WorkItem, EachBadInputHasItsKind) {
  EXPECT_EQ(kind_of("{not json"), "malformed_json");
  EXPECT_EQ(kind_of("[1,2]"), "malformed_json");
  EXPECT_EQ(kind_of(R"({"model":"m","prompt":[]})"), "missing_field");
  EXPECT_EQ(kind_of(R"({"id":"1","prompt":[{"role":"user","content":"x"}]})"), "missing_field");
  EXPECT_EQ(kind_of(R"({"id":"1","model":"m"})"), "missing_field");
  EXPECT_EQ(kind_of(R"({"id":1,"model":"m","prompt":[]})"), "missing_field");
  EXPECT_EQ(kind_of(R"({"id":"1","model":"m","prompt":"hello"})"), "bad_prompt");
  EXPECT_EQ(kind_of(R"({"id":"1","model":"m","prompt":[]})"), "bad_prompt");
  EXPECT_EQ(kind_of(R"({"id":"1","model":"m","prompt":["hello"]})"), "bad_prompt");
  EXPECT_EQ(kind_of(R"({"id":"1","model":"m","prompt":[{"content":"x"}]})"), "bad_prompt");
  EXPECT_EQ(kind_of(R"({"id":"1","model":"m","prompt":[{"role":"user","content":5}]})"), "bad_prompt");
  EXPECT_EQ(kind_of(R"({"id":"1","model":"m","prompt":[{"role":"user","content":[{"type":"text","text":"x"}]}]})"), "ok");
}

// A /v1/completions request's prompt text travels in a queue body as a JSON string (never in the
// seed's JSONL, whose prompts are conversations: EachBadInputHasItsKind).
TEST(WorkItem, AQueueBodyCarriesACompletionsPromptText) {
  SourceRecord rec;
  rec.id = "cmpl-1";
  rec.model = "m";
  rec.prompt_text = "Once \"upon\" 日本";
  rec.prompt_json = nlohmann::json(*rec.prompt_text).dump();
  rec.max_tokens = 16;
  const WorkItem item = parse_item_body(encode_item_body(rec, "phi-4"), "message 3");
  ASSERT_TRUE(item.source->prompt_text);
  EXPECT_EQ(*item.source->prompt_text, *rec.prompt_text);
  EXPECT_TRUE(item.source->prompt.is_array() && item.source->prompt.empty());
  EXPECT_EQ(item.source->prompt_bytes, static_cast<std::int64_t>(rec.prompt_text->size()));
  EXPECT_EQ(item.source->prompt_chars, 14);
  EXPECT_THROW(parse_item_body(R"({"tokenizer":"phi-4","id":"a","model":"m","prompt":""})", "message 4"), ItemError);
}

TEST(WorkItem, QueueBodyRoundTripsWithoutTheAnswer) {
  auto rec = parse_source_line(testing::source_line("1-1", "a \\\"quoted\\\" line"), 12);
  const std::string body = encode_item_body(*rec, "phi-4");
  EXPECT_EQ(body.find("answer"), std::string::npos);
  WorkItem item = parse_item_body(body, "message 5");
  EXPECT_EQ(item.tokenizer, "phi-4");
  EXPECT_EQ(item.origin, "message 5");
  EXPECT_EQ(item.source->id, "1-1");
  EXPECT_EQ(item.source->line, 12u);
  EXPECT_EQ(item.source->prompt, rec->prompt);
  EXPECT_EQ(item.source->prompt_bytes, rec->prompt_bytes);
  EXPECT_EQ(item.source->api_input, 3);
  try {
    parse_item_body("{\"id\":\"x\"}", "message 9");
    FAIL();
  } catch (const ItemError& e) {
    EXPECT_EQ(e.kind(), "bad_message");
    EXPECT_EQ(std::string(e.what()).rfind("message 9: ", 0), 0u);
  }
}

// The decoder stage's inputs: the answer is parsed from the line; a body carries it only when
// asked (a worker with a decoder), and max_tokens only when the source has one, so a body
// without a decoder is byte for byte what it was.
TEST(WorkItem, TheAnswerAndMaxTokensTravelOnlyWhenThereAndAsked) {
  auto rec = parse_source_line(testing::source_line("1-1"), 3);
  ASSERT_TRUE(rec->answer.has_value());
  EXPECT_EQ(*rec->answer, "a");
  EXPECT_FALSE(rec->max_tokens.has_value());
  const std::string plain = encode_item_body(*rec, "phi-4");
  EXPECT_EQ(plain,
            "{\"tokenizer\":\"phi-4\",\"line\":3,\"id\":\"1-1\",\"model\":\"m\",\"usage\":{\"input\":3,\"output\":4},"
            "\"prompt\":[{\"role\":\"user\",\"content\":\"hello\"}]}");
  EXPECT_FALSE(parse_item_body(plain, "m").source->answer.has_value());
  const std::string with = encode_item_body(*rec, "phi-4", true);
  EXPECT_EQ(with, plain.substr(0, plain.size() - 1) + ",\"answer\":\"a\"}");
  EXPECT_EQ(parse_item_body(with, "m").source->answer, "a");

  SourceRecord copy = *rec;
  copy.answer.reset();
  copy.max_tokens = 64;
  const WorkItem back = parse_item_body(encode_item_body(copy, "phi-4", true), "m");
  EXPECT_EQ(back.source->max_tokens, 64);
  EXPECT_FALSE(back.source->answer.has_value());
}

// A gateway's constraint (its kind and JSON Schema) and chat_template_kwargs travel in the body;
// the kwargs reach the template variables beside the tools. None: no field.
TEST(WorkItem, ConstraintAndTemplateKwargsTravelInTheBody) {
  auto rec = parse_source_line(testing::source_line("1-1"), 3);
  const std::string plain = encode_item_body(*rec, "phi-4");
  EXPECT_EQ(plain.find("constraint"), std::string::npos);
  EXPECT_EQ(plain.find("chat_template_kwargs"), std::string::npos);
  const auto none = parse_item_body(plain, "m").source;
  EXPECT_EQ(none->constraint, "");
  EXPECT_EQ(none->json_schema, "");
  SourceRecord copy = *rec;
  copy.constraint = "json_schema";
  copy.json_schema = R"({"type":"object","properties":{"b":{"enum":["x"]},"a":{"type":"integer"}}})";
  copy.template_kwargs_json = R"({"enable_thinking":false,"tools":"not these"})";
  copy.tools_json = R"([{"type":"function","function":{"name":"f"}}])";
  const auto back = parse_item_body(encode_item_body(copy, "phi-4"), "m").source;
  EXPECT_EQ(back->constraint, "json_schema");
  EXPECT_EQ(back->json_schema, copy.json_schema) << "key order kept";
  EXPECT_EQ(back->template_kwargs_json, R"({"enable_thinking":false,"tools":"not these"})");
  ASSERT_NE(back->template_extra, nullptr);
  EXPECT_EQ(back->template_extra->json["enable_thinking"], false);
  EXPECT_TRUE(back->template_extra->json["tools"].is_array()) << "a kwarg never replaces the tools";
  // A constraint without its schema is a bad item.
  std::string broken = encode_item_body(copy, "phi-4");
  broken.replace(broken.find("\"json_schema\":"), 14, "\"json_schemx\":");
  EXPECT_THROW((void)parse_item_body(broken, "m"), ItemError);
}

// A request's sampling travels in the body to the worker's decoder, exactly; none: no field.
TEST(WorkItem, SamplingTravelsInTheBodyWhenSet) {
  auto rec = parse_source_line(testing::source_line("1-1"), 3);
  const std::string plain = encode_item_body(*rec, "phi-4");
  EXPECT_EQ(parse_item_body(plain, "m").source->sampling, nullptr);
  SourceRecord copy = *rec;
  auto s = std::make_shared<overhead::ports::SamplingParams>();
  s->temperature = 0.0;
  s->top_p = 0.1;
  s->frequency_penalty = -0.25;
  s->seed = -7;
  s->stop = {"\n", "\"end\""};
  s->user = "user-\u00e9";
  copy.sampling = s;
  const std::string body = encode_item_body(copy, "phi-4");
  const auto back = parse_item_body(body, "m").source->sampling;
  ASSERT_NE(back, nullptr) << body;
  EXPECT_EQ(back->temperature, 0.0);
  EXPECT_EQ(back->top_p, 0.1);
  EXPECT_FALSE(back->presence_penalty.has_value());
  EXPECT_EQ(back->frequency_penalty, -0.25);
  EXPECT_EQ(back->seed, -7);
  EXPECT_EQ(back->stop, s->stop);
  EXPECT_EQ(back->user, s->user);
  // Only the set fields are written.
  auto seed_only = std::make_shared<overhead::ports::SamplingParams>();
  seed_only->seed = 3;
  copy.sampling = seed_only;
  EXPECT_EQ(encode_item_body(copy, "phi-4"), plain.substr(0, plain.size() - 1) + ",\"sampling\":{\"seed\":3}}");
  // A hand-made body with a field of the wrong type is refused naming it.
  try {
    (void)parse_item_body(plain.substr(0, plain.size() - 1) + ",\"sampling\":{\"temperature\":\"hot\"}}", "message 4");
    ADD_FAILURE() << "accepted";
  } catch (const ItemError& e) {
    EXPECT_NE(std::string(e.what()).find("sampling\".temperature"), std::string::npos) << e.what();
  }
}

TEST(WorkItem, AReplyQueueTravelsOnlyInBodiesAndOnlyAsAPlainName) {
  auto rec = parse_source_line(testing::source_line("1-1"), 3);
  const std::string plain = encode_item_body(*rec, "phi-4");
  EXPECT_FALSE(parse_item_body(plain, "m").source->reply_to.has_value());
  const std::string with = encode_item_body(*rec, "phi-4", false, "in-reply-gw-1");
  EXPECT_EQ(with, plain.substr(0, plain.size() - 1) + ",\"reply_to\":\"in-reply-gw-1\"}");
  EXPECT_EQ(parse_item_body(with, "m").source->reply_to, "in-reply-gw-1");
  // A source file cannot name one: the field is not read there.
  EXPECT_FALSE(parse_source_line(with, 1)->reply_to.has_value());
  // Anything but 1..80 of [A-Za-z0-9_-] is refused as a bad message: no key pattern, no URL.
  for (const std::string& bad : std::initializer_list<std::string>{"\"\"", "\"in*\"", "\"redis://h/x\"", "\"a b\"", "17", "\"" + std::string(81, 'a') + "\""}) {
    const std::string body = plain.substr(0, plain.size() - 1) + ",\"reply_to\":" + bad + "}";
    try {
      (void)parse_item_body(body, "message 9");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const ItemError& e) {
      EXPECT_EQ(e.kind(), "bad_message") << bad;
      EXPECT_NE(std::string(e.what()).find("reply_to"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(is_plain_queue_name(std::string(80, 'a')));
}

// prompt_json and tools_json are written by our own minifier (simdjson's was half of a queue
// body's decoding): byte for byte what simdjson::minify writes, escapes and numbers included.
TEST(WorkItem, PromptJsonIsWhatSimdjsonMinifyWrites) {
  const std::string prompt =
      R"([ {"role" : "user", "content": "line\none\ttab \"q\" back\\slash \u0001\u001f\u007f\b\f\r / \u00e9 \ud83d\ude00",)"
      R"( "z": [1, -2, 18446744073709551615, 1.5, 1e300, -0.0, 2.50, true, false, null, {}, []], "a\nkey": {"k": "v"}} ])";
  const std::string tools = R"([{"type": "function", "function": {"name": "f", "parameters": {"x": 0.1, "y": "\n"}}}])";
  const std::string line = R"({"id":"a","model":"m","prompt":)" + prompt + R"(,"tools":)" + tools + "}";
  const auto rec = parse_source_line(line, 1);
  simdjson::dom::parser parser;
  EXPECT_EQ(rec->prompt_json, simdjson::minify(parser.parse(prompt).value()));
  EXPECT_EQ(rec->tools_json, simdjson::minify(parser.parse(tools).value()));
  const WorkItem item = parse_item_body(encode_item_body(*rec, "phi-4"), "message 1");
  EXPECT_EQ(item.source->tools_json, rec->tools_json);
  // A decoded item's prompt is not written again (nothing sends it on): it costs no minify.
  EXPECT_TRUE(item.source->prompt_json.empty());
  EXPECT_EQ(item.source->prompt, rec->prompt);
}

}  // namespace
}  // namespace overhead::pipe
