// The C API (include/overhead/overhead.h) against the C++ API it wraps: the same ids, counts,
// decodes and renders, and every failure a status code with a message, never an exception or a
// crash (NULL pointers, ill-formed or too deeply nested JSON, a bad date, an unknown tokenizer).
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "binding/chat_binding.hpp"
#include "overhead/overhead.h"
#include "tok/tokenizer.hpp"

namespace {

const std::filesystem::path kPhi = std::filesystem::path(OVERHEAD_MODELS_DIR) / "phi-4";

std::vector<std::uint32_t> take(overhead_ids& ids) {
  std::vector<std::uint32_t> v(ids.data, ids.data + ids.size);
  overhead_ids_free(&ids);
  EXPECT_EQ(ids.data, nullptr);
  return v;
}

class CApi : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kPhi / "tokenizer.json")) GTEST_SKIP() << "tokenizer files not fetched: " << kPhi;
    ASSERT_EQ(overhead_chat_load(kPhi.c_str(), &chat_), OVERHEAD_OK) << overhead_last_error();
    tok_ = overhead_chat_tokenizer(chat_);
    cxx_ = overhead::binding::ChatBinding::load(kPhi.string());
  }
  void TearDown() override { overhead_chat_free(chat_); }

  overhead_chat* chat_ = nullptr;
  const overhead_tokenizer* tok_ = nullptr;
  std::shared_ptr<const overhead::binding::ChatBinding> cxx_;
};

TEST_F(CApi, EncodeCountDecodeAsTheCxxApi) {
  const std::vector<std::string> texts = {"", "Hello, world!", "こんにちは 🌸\n\tcode()", std::string("a\0b", 3)};
  for (const std::string& text : texts) {
    for (int special : {0, 1}) {
      overhead_ids ids{};
      ASSERT_EQ(overhead_encode(tok_, text.data(), text.size(), special, &ids), OVERHEAD_OK);
      const auto got = take(ids);
      EXPECT_EQ(got, cxx_->tokenizer().encode(text, special != 0)) << text;
      std::size_t n = 0;
      ASSERT_EQ(overhead_count(tok_, text.data(), text.size(), special, &n), OVERHEAD_OK);
      EXPECT_EQ(n, got.size());
      char* back = nullptr;
      std::size_t length = 0;
      ASSERT_EQ(overhead_decode(tok_, got.data(), got.size(), special, &back, &length), OVERHEAD_OK);
      EXPECT_EQ(std::string(back, length), cxx_->tokenizer().decode(got, special != 0));
      overhead_string_free(back);
    }
  }
  EXPECT_EQ(overhead_vocab_size(tok_), cxx_->tokenizer().vocab_size());
}

TEST_F(CApi, InvalidUtf8IsRepairedAsHfDoes) {
  const std::string bad = "ok \xff\xfe then";
  overhead_ids ids{};
  ASSERT_EQ(overhead_encode(tok_, bad.data(), bad.size(), 0, &ids), OVERHEAD_OK);
  EXPECT_EQ(take(ids), cxx_->tokenizer().encode("ok \xEF\xBF\xBD\xEF\xBF\xBD then", false));
}

TEST_F(CApi, BatchIsEncodeOnAnyThreadCount) {
  const std::vector<std::string> texts = {"one", "", "two words", "日本語のテキスト", std::string(5000, 'x')};
  std::vector<const char*> ptrs;
  std::vector<std::size_t> lengths;
  for (const auto& t : texts) ptrs.push_back(t.data()), lengths.push_back(t.size());
  // A thread count far past the cores is capped (it once started that many threads, up to the
  // host's limit), not refused.
  for (unsigned threads : {0u, 1u, 3u, 1000000u, std::numeric_limits<unsigned>::max()}) {
    std::vector<overhead_ids> out(texts.size());
    ASSERT_EQ(overhead_encode_batch(tok_, ptrs.data(), lengths.data(), texts.size(), 1, threads, out.data()),
              OVERHEAD_OK);
    for (std::size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(take(out[i]), cxx_->tokenizer().encode(texts[i]));
  }
  EXPECT_EQ(overhead_encode_batch(tok_, nullptr, nullptr, 0, 1, 0, nullptr), OVERHEAD_OK);
}

TEST_F(CApi, RenderAsTheCxxApiWithVariablesAndDate) {
  const char* messages = R"([{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}])";
  const char* variables = R"({"tools":[{"type":"function","function":{"name":"f"}}],"x":1})";
  char* text = nullptr;
  std::size_t length = 0;
  ASSERT_EQ(overhead_chat_render(chat_, messages, variables, 1, "2024-07-26", &text, &length), OVERHEAD_OK)
      << overhead_last_error();
  overhead::chat::RenderOptions options;
  options.add_generation_prompt = true;
  options.date = "2024-07-26";
  EXPECT_EQ(std::string(text, length), cxx_->chat_template().render(nlohmann::ordered_json::parse(messages), options,
                                                                      nlohmann::ordered_json::parse(variables)));
  overhead_string_free(text);
}

TEST_F(CApi, BadInputIsAStatusAndAMessage) {
  char* text = reinterpret_cast<char*>(1);
  EXPECT_EQ(overhead_chat_render(chat_, "[{", nullptr, 0, nullptr, &text, nullptr), OVERHEAD_ERROR_JSON);
  EXPECT_EQ(text, nullptr);
  EXPECT_NE(std::string(overhead_last_error()).find("messages: invalid JSON"), std::string::npos);
  EXPECT_EQ(overhead_chat_render(chat_, "{}", nullptr, 0, nullptr, &text, nullptr), OVERHEAD_ERROR_JSON);
  EXPECT_STREQ(overhead_last_error(), "messages: not a JSON array");
  EXPECT_EQ(overhead_chat_render(chat_, "[]", "[1]", 0, nullptr, &text, nullptr), OVERHEAD_ERROR_JSON);
  EXPECT_STREQ(overhead_last_error(), "variables: not a JSON object");
  const std::string deep = "[" + std::string(1000, '[') + std::string(1000, ']') + "]";
  EXPECT_EQ(overhead_chat_render(chat_, deep.c_str(), nullptr, 0, nullptr, &text, nullptr), OVERHEAD_ERROR_JSON);
  EXPECT_STREQ(overhead_last_error(), "messages: nested too deeply (more than 256 levels)");
  EXPECT_EQ(overhead_chat_render(chat_, "[]", nullptr, 0, "2025-02-30", &text, nullptr), OVERHEAD_ERROR_ARGUMENT);
  EXPECT_STREQ(overhead_last_error(), "date: '2025-02-30' is not a real date of the form YYYY-MM-DD");
  EXPECT_EQ(overhead_chat_render(chat_, nullptr, nullptr, 0, nullptr, &text, nullptr), OVERHEAD_ERROR_ARGUMENT);
  EXPECT_STREQ(overhead_last_error(), "messages_json is NULL");

  overhead_ids ids{};
  EXPECT_EQ(overhead_encode(nullptr, "x", 1, 1, &ids), OVERHEAD_ERROR_ARGUMENT);
  EXPECT_EQ(overhead_encode(tok_, nullptr, 3, 1, &ids), OVERHEAD_ERROR_ARGUMENT);
  EXPECT_STREQ(overhead_last_error(), "text is NULL");
  EXPECT_EQ(overhead_encode(tok_, nullptr, 0, 1, &ids), OVERHEAD_OK);  // the empty text
  EXPECT_STREQ(overhead_last_error(), "");
  take(ids);
}

TEST_F(CApi, TemplateErrorsCarryTheTemplatesMessage) {
  char* text = nullptr;
  // Phi-4's template reads message['role'] and ['content']; a message without them renders with
  // undefined values, so a real refusal comes from a template that raises: Gemma-2 on a system turn.
  const auto gemma = std::filesystem::path(OVERHEAD_MODELS_DIR) / "gemma-2-27b-it";
  if (!std::filesystem::exists(gemma / "tokenizer.json")) GTEST_SKIP() << "tokenizer files not fetched: " << gemma;
  overhead_chat* g = nullptr;
  ASSERT_EQ(overhead_chat_load(gemma.c_str(), &g), OVERHEAD_OK);
  EXPECT_EQ(overhead_chat_render(g, R"([{"role":"system","content":"x"}])", nullptr, 0, nullptr, &text, nullptr),
            OVERHEAD_ERROR_TEMPLATE);
  EXPECT_NE(std::string(overhead_last_error()).find("System role not supported"), std::string::npos);
  overhead_chat_free(g);
}

TEST(CApiLoad, UnknownTokenizerIsALoadErrorWithTheCliMessage) {
  overhead_tokenizer* t = reinterpret_cast<overhead_tokenizer*>(1);
  EXPECT_EQ(overhead_tokenizer_load("no-such-tokenizer", &t), OVERHEAD_ERROR_LOAD);
  EXPECT_EQ(t, nullptr);
  std::string cxx;
  try {
    (void)overhead::binding::load_tokenizer("no-such-tokenizer");
  } catch (const std::exception& e) {
    cxx = e.what();
  }
  EXPECT_EQ(overhead_last_error(), cxx);
  EXPECT_EQ(overhead_tokenizer_load(nullptr, &t), OVERHEAD_ERROR_ARGUMENT);
  EXPECT_EQ(overhead_tokenizer_load("x", nullptr), OVERHEAD_ERROR_ARGUMENT);
  overhead_tokenizer_free(nullptr);
  overhead_chat_free(nullptr);
  overhead_ids_free(nullptr);
  overhead_string_free(nullptr);
}

}  // namespace
