// Issue 21's rules for the gateway, each against a real server over loopback:
//   defect 2: every request gets exactly one answer, whoever refuses it; a request no worker
//     answers fails with `timeout` within --request-timeout, asynchronous ones too, and its
//     --max-queued place is freed (before, an asynchronous request stayed `queued` forever and a
//     few of them locked every client out with 429 until a restart);
//   defect 11: a shutdown is bounded, and a request answered 503 is not stored as done unless its
//     answer says it may be (before, every item the workers held was still processed and stored
//     after its client got 503, and the exit waited for all of them).
#include <httplib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "backends/open.hpp"
#include "backends/queue_siblings.hpp"
#include "chat_fixture.hpp"
#include "ports/clock.hpp"
#include "ports/store.hpp"

namespace {

using namespace overhead;
using namespace std::chrono_literals;
using ChatTest = serve::testing::ChatServeTest;
using nlohmann::json;

const char* kBody = R"({"model":"phi-4","messages":[{"role":"user","content":"hi"}]})";

// A routing-only gateway whose shared input queue no worker reads: nothing ever answers.
TEST_F(ChatTest, AnUnansweredAsynchronousRequestTimesOutAndFreesItsPlace) {
  const std::string input = "mem:unanswered-in";
  const std::string reply_name = backends::reply_queue_name(input, "gw");
  serve::ServerOptions o;
  o.workers.threads = 0;
  o.models = {"phi-4"};
  o.max_queued = 2;
  o.request_timeout = 400ms;
  o.pipeline.input = backends::open_queue(input);
  o.pipeline.log = backends::open_queue("mem:unanswered-log");
  o.pipeline.replies = backends::open_queue(backends::sibling_queue_url(input, reply_name));
  o.pipeline.reply_name = reply_name;
  o.pipeline.family = backends::open_queue_family(input);
  o.pipeline.store = std::shared_ptr<ports::Store>(backends::open_store("sqlite:" + (dir_ / "serve.db").string()));
  launch(o);

  const json a = post("/v1/requests", kBody, 202);
  const json b = post("/v1/requests", kBody, 202);
  (void)post("/v1/requests", kBody, 429);  // two places, both held
  std::this_thread::sleep_for(600ms);
  for (const json& r : {a, b}) {
    auto got = client_->Get(("/v1/requests/" + r["id"].get<std::string>()).c_str());
    ASSERT_TRUE(got);
    const json s = json::parse(got->body);
    EXPECT_EQ(s["status"], "failed") << s.dump();
    EXPECT_EQ(s["error"]["code"], "timeout") << s.dump();
  }
  (void)post("/v1/requests", kBody, 202);  // the places are free again
  const json sync = post("/v1/chat/completions", kBody, 504);
  EXPECT_EQ(sync["error"]["code"], "timeout");
}

// Three requests held by the one in-process worker, each taking 2 s to decode; a shutdown with a
// 300 ms deadline. The worker finishes only what it took up; the others are left unprocessed.
// Every 503 says what becomes of its request, and the store holds exactly the requests that were
// answered 200 or whose 503 said their record may be stored.
TEST_F(ChatTest, AShutdownIsBoundedAndNeverStoresWhatItSaidWasNotDone) {
  serve::ServerOptions o;
  o.workers.worker.decoder = backends::open_decoder("sim:prefill=1e9,decode=10");
  o.workers.worker.max_decodes = 0;  // one item at a time on the worker's thread
  start(o);
  (void)post("/v1/chat/completions", kBody, 200);  // the tokenizer loaded, before the clock starts
  const std::string slow = R"({"model":"phi-4","messages":[{"role":"user","content":"hi"}],"max_tokens":20})";
  struct Answer {
    int status = 0;  // 0: no answer at all
    std::string body;
  };
  std::vector<Answer> results(3);
  std::vector<std::thread> clients;
  for (auto& r : results)
    clients.emplace_back([&r, &slow, this] {
      httplib::Client c("127.0.0.1", server_->bound_port());
      c.set_read_timeout(60, 0);
      if (auto got = c.Post("/v1/chat/completions", slow, "application/json")) r = Answer{got->status, got->body};
    });
  std::this_thread::sleep_for(300ms);  // all three queued, the first one decoding
  const std::int64_t shutdown_start = ports::monotonic_ns();
  server_->shutdown(std::chrono::steady_clock::now() + 300ms);
  for (auto& c : clients) c.join();
  thread_.join();  // run() returned: the pipeline stopped, the store drained
  const double exit_s = double(ports::monotonic_ns() - shutdown_start) / 1e9;
  EXPECT_LT(exit_s, 5.0) << "three 2 s decodes one after another would take 6 s";

  std::size_t may_be_stored = 0, not_done = 0;
  for (const auto& r : results) {
    if (r.status == 200) {
      ++may_be_stored;
      continue;
    }
    ASSERT_EQ(r.status, 503) << r.body;
    const std::string message = json::parse(r.body)["error"]["message"];
    if (message.find("may be stored") != std::string::npos) {
      ++may_be_stored;
    } else {
      EXPECT_NE(message.find("not processed"), std::string::npos) << message;
      ++not_done;
    }
  }
  EXPECT_GE(not_done, 1u) << "the worker left what it had not taken up";
  const auto stored = ports::scan_in_key_order(*store_, "serve");
  EXPECT_EQ(stored.size(), 1 + may_be_stored) << "the warm-up request, and only the requests that may be stored";
}

}  // namespace
