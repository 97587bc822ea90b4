// Every golden of data/chat/goldens (made by scripts/make_chat_goldens.py from Python Jinja2 set up
// as transformers sets it up) must render byte for byte, and every error must carry the same message.
// Built twice: the written conversations (fast, CHAT_GOLDENS_MTBENCH=0) and every MT-Bench record for
// every template (CHAT_GOLDENS_MTBENCH=1, labelled slow).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "chat/chat_template.hpp"
#include "util/hash.hpp"
#include "util/line_reader.hpp"

namespace {

using nlohmann::ordered_json;
using overhead::chat::ChatTemplate;
using overhead::chat::RenderOptions;
using overhead::chat::TemplateError;
namespace fs = std::filesystem;

const fs::path kGoldens = fs::path(OVERHEAD_DATA_DIR) / "chat" / "goldens";

ordered_json read_json(const fs::path& p) { return ordered_json::parse(overhead::util::read_file(p.string())); }

std::string models_dir() {
  if (const char* env = std::getenv("OVERHEAD_MODELS")) return env;
  return OVERHEAD_MODELS_DIR;
}

// The template config of a golden name: a tokenizer set's tokenizer_config.json or a fixture.
bool load_config(const std::string& origin, ordered_json& config) {
  if (origin.rfind("tokenizer:", 0) == 0) {
    const fs::path p = fs::path(models_dir()) / origin.substr(10) / "tokenizer_config.json";
    if (!fs::exists(p)) return false;
    config = read_json(p);
    return true;
  }
  config = read_json(fs::path(OVERHEAD_DATA_DIR) / "chat" / "templates" / origin.substr(8));
  return true;
}

struct Outcome {
  bool ok;
  std::string text;  // render or error message
};

Outcome render(const ChatTemplate& t, const ordered_json& messages, bool agp, const ordered_json& extra) {
  RenderOptions o;
  o.add_generation_prompt = agp;
  o.date = "2025-01-15";
  try {
    return {true, t.render(messages, o, extra)};
  } catch (const TemplateError& e) {
    return {false, e.message()};
  }
}

std::vector<std::string> template_names() {
  std::vector<std::string> names;
  const ordered_json index = read_json(kGoldens / "index.json");
  for (const auto& [k, v] : index["templates"].items()) names.push_back(k);
  return names;
}

class ChatGolden : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const auto index = read_json(kGoldens / "index.json");
    const std::string origin = index["templates"][GetParam()].get<std::string>();
    if (!load_config(origin, config_)) GTEST_SKIP() << "tokenizer files not fetched: " << origin;
    try {
      tmpl_ = ChatTemplate::from_tokenizer_config(config_, GetParam());
    } catch (const TemplateError& e) {
      compile_error_ = e.message();
    }
  }
  ordered_json config_;
  std::shared_ptr<const ChatTemplate> tmpl_;
  std::string compile_error_;
};

#if !CHAT_GOLDENS_MTBENCH
TEST_P(ChatGolden, Conversations) {
  std::map<std::string, ordered_json> cases;
  std::istringstream conv(overhead::util::read_file((fs::path(OVERHEAD_DATA_DIR) / "chat" / "conversations.jsonl").string()));
  for (std::string line; std::getline(conv, line);)
    if (!line.empty()) {
      auto j = ordered_json::parse(line);
      cases[j["id"].get<std::string>()] = j;
    }
  if (config_.contains("example")) {
    cases["example"] = config_["example"];
    cases["example"]["id"] = "example";
  }
  overhead::util::LineReader golden((kGoldens / "conversations" / (GetParam() + ".jsonl")).string());
  std::string line;
  int checked = 0, failures = 0;
  while (golden.next(line)) {
    const auto g = ordered_json::parse(line);
    const std::string id = g["id"].get<std::string>();
    ASSERT_TRUE(cases.count(id)) << id;
    const ordered_json& c = cases[id];
    ordered_json extra = ordered_json::object();
    for (auto it = c.begin(); it != c.end(); ++it)
      if (it.key() != "id" && it.key() != "messages" && it.key() != "add_generation_prompt") extra[it.key()] = it.value();
    Outcome got = tmpl_ ? render(*tmpl_, c["messages"], g["agp"].get<bool>(), extra) : Outcome{false, compile_error_};
    ++checked;
    if (g.contains("text")) {
      if (!got.ok || got.text != g["text"].get<std::string>()) {
        ++failures;
        ADD_FAILURE() << GetParam() << " / " << id << " agp=" << g["agp"] << "\nexpected: " << g["text"].dump()
                      << "\n     got: " << (got.ok ? ordered_json(got.text).dump() : "error: " + got.text);
      }
    } else if (got.ok || got.text != g["error"].get<std::string>()) {
      ++failures;
      ADD_FAILURE() << GetParam() << " / " << id << " agp=" << g["agp"] << "\nexpected error: " << g["error"]
                    << "\n     got: " << (got.ok ? "text " + ordered_json(got.text).dump() : "error: " + got.text);
    }
    if (failures > 5) break;
  }
  EXPECT_GT(checked, 0);
}

#else
TEST_P(ChatGolden, MtBench) {
  std::vector<ordered_json> prompts;
  overhead::util::LineReader records((fs::path(OVERHEAD_DATA_DIR) / "jmtbench" / "records.jsonl.gz").string());
  std::string line;
  while (records.next(line)) prompts.push_back(ordered_json::parse(line)["prompt"]);
  overhead::util::LineReader golden((kGoldens / "mtbench" / (GetParam() + ".jsonl.gz")).string());
  int failures = 0;
  std::size_t checked = 0;
  const ordered_json extra = ordered_json::object();
  while (golden.next(line)) {
    const auto g = ordered_json::parse(line);
    const auto n = g["n"].get<std::size_t>();
    ASSERT_LE(n, prompts.size());
    Outcome got = tmpl_ ? render(*tmpl_, prompts[n - 1], false, extra) : Outcome{false, compile_error_};
    ++checked;
    bool same;
    if (g.contains("error")) {
      same = !got.ok && got.text == g["error"].get<std::string>();
    } else {
      same = got.ok && got.text.size() == g["len"].get<std::size_t>() &&
             overhead::util::text_digest(got.text) == g["fnv"].get<std::string>();
      if (g.contains("text")) same = same && got.text == g["text"].get<std::string>();
    }
    if (!same) {
      ADD_FAILURE() << GetParam() << " MT-Bench record " << n << ": expected " << g.dump().substr(0, 300)
                    << "\n got " << (got.ok ? "" : "error ") << ordered_json(got.text).dump().substr(0, 300);
      if (++failures > 3) break;
    }
  }
  EXPECT_EQ(checked, prompts.size());
}

#endif

INSTANTIATE_TEST_SUITE_P(All, ChatGolden, ::testing::ValuesIn(template_names()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string s = p.param;
                           for (auto& c : s)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

}  // namespace
