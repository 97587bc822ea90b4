// What a stream looks like, beyond its fold: with streamed release the id and name come before
// the arguments are complete and the arguments arrive in fragments (what OpenAI clients show
// live); with whole_calls a call is one delta; a bad streamed call is reported; an input split
// inside a UTF-8 character is never split in a delta. The streaming bug classes are from vLLM's
// issues: #10395 (arguments cut mid-JSON), #55082 (empty arguments unless one token per delta),
// #47901 (a call after an empty-argument call), and SGLang's streamed-name cases (a name split
// across deltas).
#include "agent_cases.hpp"

namespace overhead::agent {
namespace {

using testing::options;

constexpr std::string_view kTwoCalls =
    "Checking.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Reykjavík\"}}\n</tool_call>"
    "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>";

// Feeds `text` in pieces of `step` bytes and returns every delta.
std::vector<Delta> feed(AnswerParser& p, std::string_view text, std::size_t step) {
  std::vector<Delta> out;
  for (std::size_t i = 0; i < text.size(); i += step) p.push(text.substr(i, step), out);
  p.finish(out);
  return out;
}

TEST(Streaming, StreamedReleaseSendsTheNameFirstThenFragments) {
  AnswerParser p(options("hermes", "", false, CallRelease::streamed));
  // Up to the middle of the first call's arguments: its head is out, with part of the arguments.
  const std::size_t mid = kTwoCalls.find("Reykj");
  std::vector<Delta> out = p.push(kTwoCalls.substr(0, mid));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, Delta::Kind::content);
  EXPECT_EQ(out[0].text, "Checking.");
  EXPECT_EQ(out[1].kind, Delta::Kind::tool_call);
  EXPECT_EQ(out[1].name, "get_weather");
  EXPECT_EQ(out[1].id, "call_0");
  EXPECT_EQ(out[1].text, "{\"city\":\"");
  std::vector<Delta> rest = p.push(kTwoCalls.substr(mid));
  const std::vector<Delta> tail = p.finish();
  rest.insert(rest.end(), tail.begin(), tail.end());
  ASSERT_FALSE(rest.empty());
  EXPECT_EQ(rest[0].index, 0u);
  EXPECT_TRUE(rest[0].name.empty());
  EXPECT_TRUE(p.bad_calls().empty());
  EXPECT_EQ(p.call_count(), 2u);
}

TEST(Streaming, WholeCallsReleaseSendsEachCallOnce) {
  AnswerParser p(options("hermes"));
  const std::vector<Delta> out = feed(p, kTwoCalls, 3);
  std::vector<Delta> calls;
  for (const Delta& d : out) {
    if (d.kind == Delta::Kind::tool_call) calls.push_back(d);
  }
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0], (Delta{Delta::Kind::tool_call, "{\"city\":\"Reykjavík\"}", 0, "call_0", "get_weather"}));
  EXPECT_EQ(calls[1], (Delta{Delta::Kind::tool_call, "{}", 1, "call_1", "get_time"}));
}

TEST(Streaming, ABadStreamedCallIsReported) {
  AnswerParser p(options("hermes", "", false, CallRelease::streamed));
  const std::vector<Delta> out = feed(p, "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": tru", 4);
  const ParsedAnswer a = accumulate(out);
  ASSERT_EQ(a.calls.size(), 1u);
  EXPECT_EQ(a.calls[0].arguments, "{\"a\":tru");
  EXPECT_EQ(p.bad_calls(), std::vector<std::size_t>{0});
}

TEST(Streaming, WholeCallsNeverSendsHalfACall) {
  AnswerParser p(options("mistral"));
  const std::vector<Delta> out = feed(p, "[TOOL_CALLS]f[ARGS]{\"a\": [1, 2", 1);
  for (const Delta& d : out) {
    EXPECT_NE(d.kind, Delta::Kind::tool_call);
  }
  EXPECT_EQ(accumulate(out).content, "[TOOL_CALLS]f[ARGS]{\"a\": [1, 2");
  EXPECT_TRUE(p.bad_calls().empty());
}

TEST(Streaming, ANameSplitAcrossDeltasArrivesWhole) {
  for (CallRelease release : {CallRelease::whole_calls, CallRelease::streamed}) {
    AnswerParser p(options("mistral", "", false, release));
    const std::vector<Delta> out = feed(p, "[TOOL_CALLS]get_current_weather[ARGS]{\"q\": 1}", 2);
    std::size_t heads = 0;
    for (const Delta& d : out) {
      if (!d.name.empty()) {
        EXPECT_EQ(d.name, "get_current_weather");
        ++heads;
      }
    }
    EXPECT_EQ(heads, 1u);
  }
}

TEST(Streaming, UnicodeSplitInsideACharacterStaysWhole) {
  const std::string text = "Grüße 🌍 <tool_call>{\"name\": \"f\", \"arguments\": {\"e\": \"🌍\"}}</tool_call>";
  AnswerParser p(options("hermes", "", false, CallRelease::streamed));
  const std::vector<Delta> out = feed(p, text, 1);
  for (const Delta& d : out) {
    EXPECT_TRUE(util::utf8::is_valid(d.text)) << d.text;
  }
  EXPECT_EQ(accumulate(out), testing::answer("Grüße 🌍", {{"f", "{\"e\":\"🌍\"}"}}));
}

TEST(Streaming, InvalidUtf8PassesThroughAtTheEnd) {
  const std::string text = "abc\xE2\x82";  // a cut character at the very end
  EXPECT_EQ(parse_whole(options("hermes"), text).content, text);
  testing::expect_split_invariant(options("hermes"), text);
}

}  // namespace
}  // namespace overhead::agent
