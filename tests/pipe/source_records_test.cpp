// Reading the seed's JSONL: a line whose id an earlier line already has is counted, named and
// dead-lettered, never merged into the first (records are keyed by id, so a store would keep one).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "pipe/dead_letter.hpp"
#include "pipe/source.hpp"
#include "test_util.hpp"
#include "util/hash.hpp"

namespace overhead::pipe {
namespace {

namespace fs = std::filesystem;

std::string record_line(const std::string& id, const std::string& content) {
  return R"({"id":")" + id + R"(","model":"m","prompt":[{"role":"user","content":")" + content + R"("}]})";
}

TEST(SourceRecords, DuplicateIdsAreDeadLetteredNamingBothLines) {
  const auto dir = testing::temp_dir("source-dup");
  const auto path = (dir / "dup.jsonl").string();
  {
    std::ofstream out(path);
    out << record_line("a", "one") << "\n"
        << record_line("b", "two") << "\n"
        << record_line("a", "three") << "\n"
        << record_line("c", "four") << "\n"
        << record_line("b", "five") << "\n";
  }
  DeadLetterSink dead;
  const auto records = load_source_records(path, 0, dead);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0]->id, "a");
  EXPECT_EQ(records[0]->line, 1u);  // the first line with the id wins
  EXPECT_EQ(records[1]->id, "b");
  EXPECT_EQ(records[2]->id, "c");
  EXPECT_EQ(dead.counts().at("duplicate_id"), 2u);
  const auto letters = dead.letters();
  ASSERT_EQ(letters.size(), 2u);
  EXPECT_EQ(letters[0].origin, path + ":3");
  EXPECT_NE(letters[0].reason.find("\"a\""), std::string::npos) << letters[0].reason;
  EXPECT_NE(letters[0].reason.find("line 1"), std::string::npos) << letters[0].reason;
  EXPECT_EQ(letters[1].origin, path + ":5");
  EXPECT_NE(letters[1].reason.find("line 2"), std::string::npos) << letters[1].reason;
  EXPECT_EQ(letters[1].payload, record_line("b", "five"));
}

TEST(SourceRecords, LimitCountsDistinctRecords) {
  const auto dir = testing::temp_dir("source-dup-limit");
  const auto path = (dir / "dup.jsonl").string();
  {
    std::ofstream out(path);
    out << record_line("a", "one") << "\n" << record_line("a", "again") << "\n" << record_line("b", "two") << "\n";
  }
  DeadLetterSink dead;
  const auto records = load_source_records(path, 2, dead);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1]->id, "b");
  EXPECT_EQ(dead.total(), 1u);
}


// A long payload is cut at a whole UTF-8 character, and the line says how long it was.
TEST(DeadLetters, ALongPayloadIsAnExcerptOfWholeCharacters) {
  const auto dir = testing::temp_dir("dl-excerpt");
  const std::string path = (dir / "dl.jsonl").string();
  std::string payload;
  for (int i = 0; i < 3000; ++i) payload += "\xE3\x81\x82";  // あ, 3 bytes
  {
    DeadLetterSink sink(path);
    sink.add(DeadLetter{kind_name(DeadLetterKind::prompt_too_large), "line 1", "phi-4", "too large", payload});
    sink.add(DeadLetter{kind_name(DeadLetterKind::malformed_json), "line 2", "", "bad", "{short"});
    ASSERT_EQ(sink.letters().size(), 2u);
    EXPECT_EQ(sink.letters()[0].payload.size(), 4095u);  // 1,365 whole characters
  }
  std::ifstream in(path);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  const auto j = nlohmann::json::parse(line);  // throws on a cut character: the excerpt must be valid UTF-8
  EXPECT_EQ(j["payload"].get<std::string>(), payload.substr(0, 4095));
  EXPECT_EQ(j["payload_bytes"], 9000);
  EXPECT_EQ(j["payload_fnv1a64"], util::text_digest(payload));
  ASSERT_TRUE(std::getline(in, line));
  const auto short_one = nlohmann::json::parse(line);
  EXPECT_EQ(short_one["payload"], "{short");
  EXPECT_FALSE(short_one.contains("payload_bytes"));
  fs::remove_all(dir);
}


// An empty data file (or one of blank lines) is an error naming it, not a run of zero items.
TEST(SourceRecords, AFileWithoutRecordsIsAnErrorNamingIt) {
  const auto dir = testing::temp_dir("source-empty");
  DeadLetterSink dead;
  for (const std::string text : {"", "\n\n  \n"}) {
    const auto path = (dir / "empty.jsonl").string();
    std::ofstream(path) << text;
    try {
      (void)load_source_records(path, 0, dead);
      ADD_FAILURE() << "no error for " << text.size() << " bytes";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": no records"), std::string::npos) << e.what();
    }
  }
  // A file whose lines are all bad is not empty: its lines are dead-lettered, as before.
  const auto bad = (dir / "bad.jsonl").string();
  std::ofstream(bad) << "{nope\n";
  EXPECT_TRUE(load_source_records(bad, 0, dead).empty());
  EXPECT_EQ(dead.total(), 1u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace overhead::pipe
