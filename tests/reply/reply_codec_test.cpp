// The reply queue's wire format: final replies (done, failed) and deltas round-trip, many events
// share one body, contiguous deltas merge into one event, ill-formed UTF-8 is replaced, a bad line
// does not cost the others, and a bare record (a worker before deltas) still reads as done.
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "ports/record_codec.hpp"
#include "reply/reply_codec.hpp"

namespace {

using namespace overhead;
using reply::Delta;
using reply::Reply;
using reply::ReplyEvent;

ports::Record record(const std::string& id) {
  ports::Record r;
  r.id = id;
  r.experiment_tokenizer = "serve#phi-4";
  r.experiment = "serve";
  r.tokenizer = "phi-4";
  r.model = "phi-4";
  r.token_count = 34;
  r.render_start = 1000;
  r.encode_end = 2000;
  r.output_tokens = 7;
  return r;
}

std::vector<ReplyEvent> decode_all(const std::string& body, std::vector<std::string>* errors = nullptr) {
  std::vector<ReplyEvent> out;
  auto e = reply::decode_events(body, "m", [&](ReplyEvent&& ev) { out.push_back(std::move(ev)); });
  if (errors) *errors = std::move(e);
  return out;
}

// The one reply a body holds (a failure when it holds anything else).
Reply only_reply(const std::string& body) {
  std::vector<std::string> errors;
  auto events = decode_all(body, &errors);
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(events.size(), 1u);
  if (events.size() != 1 || !std::holds_alternative<Reply>(events.front())) {
    ADD_FAILURE() << "not exactly one reply in " << body;
    return Reply{};
  }
  return std::get<Reply>(std::move(events.front()));
}

// A reply alone in a body, with its text (as the worker sends a request that was not streamed).
std::string body_of(const Reply& r) {
  std::string body;
  reply::append_reply(body, r);
  return body;
}

TEST(ReplyCodec, ADoneReplyCarriesItsRecordTextAndFinishReason) {
  const Reply sent = Reply::answered(record("r1"), "Bonjour, \"monde\" \xc3\xa9\n", "stop", "w1-7");
  const Reply back = only_reply(body_of(sent));
  EXPECT_TRUE(back.ok());
  EXPECT_EQ(back.id, "r1");
  EXPECT_EQ(back.attempt, "w1-7");
  EXPECT_EQ(back.text, sent.text);
  EXPECT_EQ(back.text_bytes, static_cast<std::int64_t>(sent.text.size()));
  EXPECT_EQ(back.finish_reason, "stop");
  EXPECT_EQ(back.record.token_count, 34);
  EXPECT_EQ(back.record.render_start, 1000);
  EXPECT_EQ(back.usage().completion_tokens, 7);
  EXPECT_EQ(back.usage().prompt_tokens, 34);
}

// The answer's price rides in its record, exactly, for the gateway's budgets; a reply from a
// worker older than the price fields reads as unpriced.
TEST(ReplyCodec, ADoneReplyCarriesItsPriceAndAnOlderOneReadsAsUnpriced) {
  ports::Record priced = record("r2");
  priced.key_name = "team-a";
  priced.cost_e_usd = 0.1 / 3e6;
  priced.cost_d_usd = 2.0 / 3e4;
  priced.cost_usd = priced.cost_e_usd + priced.cost_d_usd;
  priced.price_source = "cpu: m7i.large $0.1008/h / 2 vCPUs; gpu: h100-sxm $6.88/h";
  const Reply back = only_reply(body_of(Reply::answered(priced, "hi", "stop")));
  EXPECT_EQ(back.usage().cost_usd, priced.cost_usd);
  EXPECT_EQ(back.record.cost_e_usd, priced.cost_e_usd);
  EXPECT_EQ(back.record.cost_d_usd, priced.cost_d_usd);
  EXPECT_EQ(back.record.key_name, "team-a");
  EXPECT_EQ(back.record.price_source, priced.price_source);

  std::string old = body_of(Reply::answered(record("r3"), "hi", "stop"));
  const auto cut = old.find(",\"key_name\":");
  ASSERT_NE(cut, std::string::npos) << old;
  old = old.substr(0, cut) + "}}";  // the record as a worker before the price fields wrote it
  const Reply unpriced = only_reply(old);
  EXPECT_TRUE(unpriced.ok());
  EXPECT_EQ(unpriced.usage().cost_usd, 0.0);
  EXPECT_EQ(unpriced.record.price_source, "");
  EXPECT_EQ(unpriced.record.token_count, 34);
}

TEST(ReplyCodec, AStreamedReplyLeavesItsTextToTheDeltas) {
  std::string body;
  reply::append_reply(body, Reply::answered(record("r1"), "abc", "length"), /*with_text=*/false);
  const Reply back = only_reply(body);
  EXPECT_TRUE(back.text.empty());
  EXPECT_EQ(back.text_bytes, 3);
  EXPECT_EQ(back.finish_reason, "length");
}

TEST(ReplyCodec, RefusalsRoundTripAndIllFormedBytesAreReplaced) {
  const Reply failed = Reply::refused("r2", "template_error", "System role not supported \"quoted\"");
  const Reply f = only_reply(body_of(failed));
  EXPECT_FALSE(f.ok());
  EXPECT_EQ(f.id, "r2");
  EXPECT_EQ(f.error_kind, "template_error");
  EXPECT_EQ(f.error_reason, failed.error_reason);
  // A reason quoting ill-formed UTF-8 still makes a reply (the bytes replaced), not an exception.
  const Reply odd = only_reply(body_of(Reply::refused("r3", "bad_prompt", "content \xff\xfe")));
  EXPECT_EQ(odd.id, "r3");
  EXPECT_EQ(odd.error_reason.find('\xff'), std::string::npos);
}

TEST(ReplyCodec, ManyEventsShareOneBodyInOrderAndContiguousDeltasMerge) {
  std::string body;
  reply::append_delta(body, "a", "w-1", 0, "Hel");
  reply::extend_last_delta(body, "lo \"x\"");
  reply::extend_last_delta(body, "\n\xe2\x82\xac");
  reply::append_delta(body, "b", "w-2", 0, "Hi");
  reply::append_reply(body, Reply::answered(record("a"), "Hello \"x\"\n\xe2\x82\xac", "stop", "w-1"), false);
  reply::append_reply(body, Reply::refused("c", "decode_failed", "engine down"));
  std::vector<std::string> errors;
  const auto events = decode_all(body, &errors);
  ASSERT_TRUE(errors.empty()) << errors.front();
  ASSERT_EQ(events.size(), 4u);
  const auto& a = std::get<Delta>(events[0]);
  EXPECT_EQ(a.id, "a");
  EXPECT_EQ(a.attempt, "w-1");
  EXPECT_EQ(a.offset, 0);
  EXPECT_EQ(a.text, "Hello \"x\"\n\xe2\x82\xac");  // three pieces, one event
  EXPECT_EQ(std::get<Delta>(events[1]).text, "Hi");
  EXPECT_EQ(std::get<Reply>(events[2]).text_bytes, static_cast<std::int64_t>(a.text.size()));
  EXPECT_EQ(std::get<Reply>(events[3]).error_kind, "decode_failed");
}

TEST(ReplyCodec, ABadLineIsReportedAndTheOthersStillArrive) {
  std::string body;
  reply::append_delta(body, "a", "w", 0, "x");
  body += "\nnot json\n{\"delta\":{\"offset\":1}}\n{\"failed\":{}}";
  reply::append_delta(body, "a", "w", 1, "y");
  std::vector<std::string> errors;
  const auto events = decode_all(body, &errors);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(std::get<Delta>(events[1]).offset, 1);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_NE(errors[0].find("m line 2"), std::string::npos) << errors[0];
  // A body with nothing readable delivers nothing and says why; a stamp patch is no reply.
  EXPECT_TRUE(decode_all("not json", &errors).empty());
  EXPECT_EQ(errors.size(), 1u);
  EXPECT_TRUE(decode_all("{\"stamps\":[]}", &errors).empty());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("not a reply"), std::string::npos) << errors[0];
}

TEST(ReplyCodec, ABareRecordReadsAsADoneReply) {
  std::string body;
  ports::append_record_json(body, record("old"));
  const Reply r = only_reply(body);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.id, "old");
  EXPECT_EQ(r.record.token_count, 34);
}

}  // namespace
