// Behaviour of the public Tokenizer API beyond the golden ids: loading by every kind of name,
// errors that name the file and JSON path, invalid UTF-8, decode, thread safety, special tokens.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "tok/errors.hpp"
#include "tok/resolve.hpp"
#include "tok/tokenizer.hpp"

namespace overhead::tok {
namespace {

namespace fs = std::filesystem;

const Tokenizer& llama() {
  static const auto t = Tokenizer::load("llama-3.3-70b-instruct");
  return *t;
}
const Tokenizer& gemma() {
  static const auto t = Tokenizer::load("gemma-2-27b-it");
  return *t;
}

fs::path temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("overhead-tok-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A minimal byte-level BPE tokenizer.json with one step replaced, to probe the loader.
nlohmann::json tiny_tokenizer() {
  nlohmann::json vocab = nlohmann::json::object();
  const std::string chars = "abc";
  for (std::size_t i = 0; i < chars.size(); ++i) vocab[std::string(1, chars[i])] = i;
  vocab["ab"] = 3;
  return {{"version", "1.0"},
          {"added_tokens", nlohmann::json::array()},
          {"normalizer", nullptr},
          {"pre_tokenizer", nullptr},
          {"post_processor", nullptr},
          {"decoder", nullptr},
          {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"a b"}}}}};
}

std::string write_tokenizer(const std::string& name, const nlohmann::json& j) {
  const fs::path dir = temp_dir(name);
  std::ofstream(dir / "tokenizer.json") << j.dump();
  return dir.string();
}

TEST(TokenizerTest, LoadsByShortNameFolderAndFile) {
  const auto by_folder = Tokenizer::load(resolve_tokenizer_dir("llama-3.3-70b-instruct"));
  const auto by_file = Tokenizer::load(resolve_tokenizer_dir("llama-3.3-70b-instruct") + "/tokenizer.json");
  const std::string text = "Hello, world! こんにちは";
  EXPECT_EQ(by_folder->encode(text), llama().encode(text));
  EXPECT_EQ(by_file->encode(text), llama().encode(text));
  EXPECT_EQ(llama().name(), "llama-3.3-70b-instruct");
}

TEST(TokenizerTest, LoadsFromTheHuggingFaceCache) {
  const fs::path home = temp_dir("hf-home");
  const fs::path snapshot = home / "hub" / "models--meta-llama--Llama-3.3-70B-Instruct" / "snapshots" / "0123abcd";
  fs::create_directories(snapshot);
  fs::create_directories(home / "hub" / "models--meta-llama--Llama-3.3-70B-Instruct" / "refs");
  std::ofstream(home / "hub" / "models--meta-llama--Llama-3.3-70B-Instruct" / "refs" / "main") << "0123abcd";
  fs::copy_file(resolve_tokenizer_dir("llama-3.3-70b-instruct") + "/tokenizer.json", snapshot / "tokenizer.json");
  ::setenv("HF_HOME", home.c_str(), 1);
  const auto t = Tokenizer::load("meta-llama/Llama-3.3-70B-Instruct");
  ::unsetenv("HF_HOME");
  EXPECT_EQ(t->encode("cache hit"), llama().encode("cache hit"));
  fs::remove_all(home);
}

TEST(TokenizerTest, UnknownNameListsWhatWasTried) {
  try {
    Tokenizer::load("no-such-tokenizer");
    FAIL() << "expected LoadError";
  } catch (const LoadError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("no-such-tokenizer"), std::string::npos);
    EXPECT_NE(message.find("phi-4"), std::string::npos);
  }
}

TEST(TokenizerTest, UnsupportedStepsFailAtLoadNamingFileAndPath) {
  struct Case {
    std::string name;
    std::function<void(nlohmann::json&)> change;
    std::string path;
  };
  const std::vector<Case> cases = {
      {"normalizer", [](nlohmann::json& j) { j["normalizer"] = {{"type", "BertNormalizer"}}; }, "$.normalizer.type"},
      {"nested", [](nlohmann::json& j) {
         j["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", {{{"type", "Whitespace"}}}}};
       }, "$.pre_tokenizer.pretokenizers[0].type"},
      {"model", [](nlohmann::json& j) { j["model"]["type"] = "Unigram"; }, "$.model.type"},
      {"dropout", [](nlohmann::json& j) { j["model"]["dropout"] = 0.1; }, "$.model.dropout"},
      {"merge", [](nlohmann::json& j) { j["model"]["merges"] = {"a z"}; }, "$.model"},
      {"merge-shape", [](nlohmann::json& j) { j["model"]["merges"] = {"a b c"}; }, "$.model.merges[0]"},
      {"regex", [](nlohmann::json& j) {
         j["pre_tokenizer"] = {{"type", "Split"}, {"pattern", {{"Regex", "("}}}, {"behavior", "Isolated"}, {"invert", false}};
       }, "$.pre_tokenizer.pattern.Regex"},
      {"truncation", [](nlohmann::json& j) { j["truncation"] = {{"max_length", 8}}; }, "$.truncation"},
      {"decoder", [](nlohmann::json& j) { j["decoder"] = {{"type", "WordPiece"}}; }, "$.decoder.type"},
  };
  for (const auto& c : cases) {
    nlohmann::json j = tiny_tokenizer();
    c.change(j);
    const std::string dir = write_tokenizer(c.name, j);
    try {
      Tokenizer::load(dir);
      ADD_FAILURE() << c.name << ": expected LoadError";
    } catch (const LoadError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(dir + "/tokenizer.json"), std::string::npos) << message;
      EXPECT_NE(message.find(c.path), std::string::npos) << c.name << ": " << message;
    }
    fs::remove_all(dir);
  }
}

TEST(TokenizerTest, TinyTokenizerMerges) {
  const std::string dir = write_tokenizer("tiny", tiny_tokenizer());
  const auto t = Tokenizer::load(dir);
  EXPECT_EQ(t->encode("abcab"), (Ids{3, 2, 3}));
  EXPECT_EQ(t->decode(Ids{3, 2}), "ab c");  // no decoder: HF joins tokens with spaces
  fs::remove_all(dir);
}

// A vocabulary with one id far above the token count (and an added token likewise) loads at a
// cost bounded by the number of tokens, not by the largest id: the id table would be 8 GB dense.
TEST(TokenizerTest, SparseIdsLoadInMemoryBoundedByTheVocabulary) {
  nlohmann::json j = tiny_tokenizer();
  j["model"]["vocab"] = {{"a", 0}, {"b", 1}, {"ab", 255555555}};
  j["added_tokens"] = {{{"id", 4000000000u}, {"content", "<x>"}, {"special", true}}};
  const std::string dir = write_tokenizer("sparse", j);
  rusage before{};
  ::getrusage(RUSAGE_SELF, &before);
  const auto t = Tokenizer::load(dir);
  rusage after{};
  ::getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 * 1024) << "KiB of peak RSS grown by the load";
  EXPECT_EQ(t->encode("ab<x>b"), (Ids{255555555, 4000000000u, 1}));
  EXPECT_EQ(t->id_to_token(255555555), "ab");
  EXPECT_EQ(t->id_to_token(4000000000u), "<x>");
  EXPECT_FALSE(t->id_to_token(2));
  EXPECT_EQ(t->vocab_size(), 4000000001u);
  fs::remove_all(dir);
}

// A normalizer Sequence of Replace("a" -> 100 x "a") steps grows a text a hundredfold per step;
// the normalized text is refused (EncodeError) once it would pass max_normalized_size, before it
// is built, rather than grown without bound (five such steps once took a line to 15 GB).
nlohmann::json growing_normalizer(std::size_t steps) {
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t k = 0; k < steps; ++k)
    list.push_back({{"type", "Replace"}, {"pattern", {{"String", "a"}}}, {"content", std::string(100, 'a')}});
  return {{"type", "Sequence"}, {"normalizers", list}};
}

TEST(TokenizerTest, NormalizerGrowthPastTheLimitIsRefused) {
  nlohmann::json j = tiny_tokenizer();
  j["normalizer"] = growing_normalizer(2);
  const std::string dir = write_tokenizer("growing", j);
  const auto t = Tokenizer::load(dir);
  EXPECT_EQ(t->encode("b"), (Ids{1}));
  try {
    (void)t->encode(std::string(100, 'a'));  // would be 1,000,000 bytes; the limit is 5,696
    ADD_FAILURE() << "a normalized text 175 times the limit was built";
  } catch (const EncodeError& e) {
    EXPECT_NE(std::string(e.what()).find("normalizer"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)t->count(std::string(100, 'a')), EncodeError);
  fs::remove_all(dir);
}

// Normalizers that grow text the way real ones do still give HF's ids: NFKD's widest expansion
// (U+FDFA, 3 bytes to 33) and a Replace of one byte by 16.
TEST(TokenizerTest, NormalizerGrowthWithinTheLimitIsExact) {
  nlohmann::json j = tiny_tokenizer();
  j["normalizer"] = {{"type", "Sequence"},
                     {"normalizers", {{{"type", "NFKD"}},
                                      {{"type", "Replace"}, {"pattern", {{"String", "c"}}}, {"content", std::string(16, 'b')}}}}};
  const std::string dir = write_tokenizer("growing-within", j);
  const auto t = Tokenizer::load(dir);
  EXPECT_EQ(t->encode(std::string(1000, 'c')).size(), 16000u);
  std::string wide;
  for (int i = 0; i < 1000; ++i) wide += "\xEF\xB7\xBA";  // U+FDFA
  EXPECT_NO_THROW((void)t->encode(wide));
  fs::remove_all(dir);
}

// The same growth in an added token's content is the file's fault: refused at load, naming the
// normalizer.
TEST(TokenizerTest, AddedTokenTheNormalizerCannotNormalizeFailsTheLoad) {
  nlohmann::json j = tiny_tokenizer();
  j["normalizer"] = growing_normalizer(2);
  j["added_tokens"] = {{{"id", 9}, {"content", std::string(300, 'a')}, {"special", false}, {"normalized", true}}};
  const std::string dir = write_tokenizer("growing-added", j);
  try {
    (void)Tokenizer::load(dir, LoadOptions{.cache_dir = ""});
    ADD_FAILURE() << "loaded";
  } catch (const LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("$.normalizer"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(TokenizerTest, AddedTokenIdBeyondTheIdRangeNamesItsPath) {
  nlohmann::json j = tiny_tokenizer();
  j["added_tokens"] = {{{"id", 5000000000u}, {"content", "<x>"}}};
  const std::string dir = write_tokenizer("bigid", j);
  try {
    Tokenizer::load(dir);
    ADD_FAILURE() << "loaded an added token id above 32 bits";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("$.added_tokens[0].id"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

// A broken tokenizer.json names the byte, line and column where the JSON goes wrong, as an
// editor shows them, besides what is wrong.
TEST(TokenizerTest, BrokenJsonNamesTheByteLineAndColumn) {
  const std::string dir = write_tokenizer("broken", tiny_tokenizer());
  std::string text = tiny_tokenizer().dump(2);
  const std::size_t cut = text.find("\"merges\"");
  ASSERT_NE(cut, std::string::npos);
  text.insert(cut, "oops ");  // a bare word where a key must be
  std::ofstream(fs::path(dir) / "tokenizer.json", std::ios::trunc) << text;
  const std::size_t line = 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + cut, '\n'));
  const std::size_t column = cut - text.rfind('\n', cut);
  try {
    Tokenizer::load(dir, LoadOptions{.cache_dir = std::string()});
    ADD_FAILURE() << "loaded a broken tokenizer.json";
  } catch (const LoadError& e) {
    const std::string want = "invalid JSON at byte " + std::to_string(cut) + " (line " + std::to_string(line) +
                             ", column " + std::to_string(column) + ")";
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what() << "\nwanted: " << want;
    EXPECT_NE(std::string(e.what()).find("tokenizer.json"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(TokenizerTest, InvalidUtf8IsRepairedWithReplacementCharacters) {
  const std::string bad = "ok \xFF\xFE then \xE6\x97";
  const std::string repaired = "ok \xEF\xBF\xBD\xEF\xBF\xBD then \xEF\xBF\xBD";
  EXPECT_EQ(llama().encode(bad), llama().encode(repaired));
  EXPECT_EQ(gemma().encode(bad), gemma().encode(repaired));
}

TEST(TokenizerTest, SpecialTokensAndConfig) {
  EXPECT_EQ(llama().special_token("bos_token"), "<|begin_of_text|>");
  EXPECT_EQ(llama().special_token("eos_token"), "<|eot_id|>");
  EXPECT_EQ(gemma().special_token("bos_token"), "<bos>");
  EXPECT_FALSE(llama().special_token("no_such_token"));
  ASSERT_TRUE(llama().config().contains("chat_template"));
  EXPECT_NE(llama().config()["chat_template"].get<std::string>().find("Cutting Knowledge Date"), std::string::npos);
  EXPECT_EQ(llama().token_to_id("<|begin_of_text|>"), 128000u);
  EXPECT_TRUE(llama().is_special(128000));
  EXPECT_FALSE(llama().is_special(15339));
  EXPECT_EQ(llama().vocab_size(), 128256u);
  // add_special_tokens=True adds BOS, also before a text that already starts with it (the seed's
  // double BOS).
  const Ids ids = llama().encode("<|begin_of_text|>hi");
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(ids[0], 128000u);
  EXPECT_EQ(ids[1], 128000u);
  EXPECT_EQ(llama().count("<|begin_of_text|>hi"), ids.size());
  EXPECT_EQ(llama().encode("hi", false).size() + 1, llama().encode("hi").size());
}

TEST(TokenizerTest, DecodeRoundTripsAndSkipsSpecials) {
  const std::string text = "Grüße, 世界! 🎉  tabs\tand\nnewlines";
  for (const Tokenizer* t : {&llama(), &gemma()}) {
    EXPECT_EQ(t->decode(t->encode(text, false)), text) << t->name();
    const Ids with_special = t->encode(text, true);
    EXPECT_EQ(t->decode(with_special, true), text) << t->name();
    EXPECT_NE(t->decode(with_special, false), text) << t->name();
  }
}

TEST(TokenizerTest, BatchEqualsSequentialAcrossThreads) {
  std::vector<std::string> texts;
  for (int i = 0; i < 300; ++i)
    texts.push_back("item " + std::to_string(i) + ": 日本語のテキスト、" + std::string(static_cast<std::size_t>(i % 17), 'x'));
  const auto batch = gemma().encode_batch(texts, true, 4);
  ASSERT_EQ(batch.size(), texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(batch[i], gemma().encode(texts[i]));
  // Many threads on one shared tokenizer at once.
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (std::size_t i = static_cast<std::size_t>(k); i < texts.size(); i += 2)
        if (llama().encode(texts[i]) != llama().encode(texts[i])) ++mismatches[static_cast<std::size_t>(k)];
    });
  }
  for (auto& t : threads) t.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

// Batches in the background on the kept pool: the ids of each text whatever else runs meanwhile,
// several batches at once from several threads (the kept pool busy: the others on pools of their
// own), and a batch dropped unfinished (its destructor waits; nothing is written after it).
TEST(TokenizerTest, BackgroundBatchesEqualSequentialEncodes) {
  std::vector<std::string> texts;
  for (int i = 0; i < 400; ++i)
    texts.push_back("line " + std::to_string(i) + " of the batch, with text ever longer" + std::string(static_cast<std::size_t>(i % 29), 'y'));
  const std::vector<std::string_view> views(texts.begin(), texts.end());
  const std::span<const std::string_view> all(views);
  for (const unsigned threads : {0u, 1u, 2u, 8u}) {
    auto batch = llama().start_batch(all, true, threads);
    Ids meanwhile = llama().encode("the caller's own work while the batch runs");
    EXPECT_FALSE(meanwhile.empty());
    const auto ids = batch.finish();
    ASSERT_EQ(ids.size(), texts.size());
    for (std::size_t i = 0; i < texts.size(); ++i) ASSERT_EQ(ids[i], llama().encode(texts[i])) << threads << " " << i;
  }
  std::vector<std::thread> callers;
  std::vector<int> mismatches(3, 0);
  for (int k = 0; k < 3; ++k) {
    callers.emplace_back([&, k] {
      for (int round = 0; round < 5; ++round) {
        const auto ids = llama().start_batch(all, true, 0).finish();
        for (std::size_t i = 0; i < texts.size(); ++i)
          if (ids[i] != llama().encode(texts[i])) ++mismatches[static_cast<std::size_t>(k)];
      }
    });
  }
  for (auto& t : callers) t.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
  { auto dropped = llama().start_batch(all, true, 0); }
  EXPECT_EQ(llama().encode_batch(all, true, 0).size(), texts.size());
}

}  // namespace
}  // namespace overhead::tok
