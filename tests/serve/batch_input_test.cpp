// The Batch API's pieces without a server: multipart forms as the openai clients send them, the
// completion windows OpenAI accepts, input lines read in bounded pieces from an object store, and
// the batch's documents read back as written.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "backends/open.hpp"
#include "serve/batch_input.hpp"
#include "serve/batch_state.hpp"
#include "serve/multipart.hpp"

namespace overhead::serve {
namespace {

TEST(Multipart, ReadsNamedPartsAndFilenames) {
  const std::string body =
      "--XyZ\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n"
      "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"in.jsonl\"\r\nContent-Type: application/jsonl\r\n\r\n"
      "{\"a\":1}\r\n{\"b\":2}\n\r\n--XyZ--\r\n";
  const auto parts = parse_multipart("multipart/form-data; boundary=XyZ", body);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].name, "purpose");
  EXPECT_EQ(parts[0].content, "batch");
  EXPECT_FALSE(parts[0].filename);
  EXPECT_EQ(parts[1].name, "file");
  EXPECT_EQ(parts[1].filename.value_or(""), "in.jsonl");
  EXPECT_EQ(parts[1].content, "{\"a\":1}\r\n{\"b\":2}\n") << "the content's own CRLFs are kept";
}

TEST(Multipart, RefusesWhatIsNotAForm) {
  EXPECT_THROW((void)parse_multipart("application/json", "{}"), std::invalid_argument);
  EXPECT_THROW((void)parse_multipart("multipart/form-data", "--x\r\n"), std::invalid_argument) << "no boundary";
  EXPECT_THROW((void)parse_multipart("multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nunterminated"),
               std::invalid_argument);
  EXPECT_THROW((void)parse_multipart("multipart/form-data; boundary=x", "--x\r\nContent-Type: text/plain\r\n\r\nv\r\n--x--"),
               std::invalid_argument) << "a part without a name";
}

TEST(CompletionWindow, OpenAIsValuesInSeconds) {
  EXPECT_EQ(completion_window_seconds("24h"), 86400);
  EXPECT_EQ(completion_window_seconds("1h"), 3600);
  EXPECT_EQ(completion_window_seconds("168h"), 168 * 3600);
  for (const char* bad : {"", "h", "0h", "169h", "24", "1d", "-1h", "24hh", "1000h"}) EXPECT_FALSE(completion_window_seconds(bad)) << bad;
}

TEST(BatchState, ADocumentReadsBackAsWritten) {
  Batch b;
  b.id = "batch_x";
  b.endpoint = "/v1/chat/completions";
  b.status = BatchStatus::in_progress;
  b.created_at = 10;
  b.in_progress_at = 11;
  b.total = 5;
  b.completed = 2;
  b.enqueued = 4;
  b.enqueued_offset = 1234;
  b.enqueued_line = 6;
  b.window_s = 3600;
  b.metadata = {{"k", "v"}};
  const auto doc = to_document(b);
  EXPECT_TRUE(doc.open);
  const Batch back = batch_from_document(doc);
  EXPECT_EQ(back.status, BatchStatus::in_progress);
  EXPECT_EQ(back.total, 5);
  EXPECT_EQ(back.completed, 2);
  EXPECT_EQ(back.enqueued, 4);
  EXPECT_EQ(back.enqueued_offset, 1234);
  EXPECT_EQ(back.enqueued_line, 6);
  EXPECT_EQ(back.window_s, 3600);
  EXPECT_EQ(back.metadata["k"], "v");
  const auto j = to_json(back);
  EXPECT_TRUE(j["completed_at"].is_null()) << "a stamp not reached is null, as OpenAI shows it";
  EXPECT_EQ(j["request_counts"]["total"], 5);
  EXPECT_FALSE(j.contains("enqueued")) << "our own fields stay out of OpenAI's object";
}

TEST(ObjectLines, ReadsLinesAcrossPiecesWithBoundedMemory) {
  std::random_device rd;
  const auto dir = std::filesystem::temp_directory_path() / ("overhead-batch-lines-" + std::to_string(rd()));
  auto store = backends::open_object_store("file:" + dir.string());
  std::string text;
  for (int i = 0; i < 100; ++i) text += "line " + std::to_string(i) + (i % 7 == 0 ? "\r\n" : "\n");
  text += std::string(50, 'x') + "\n" + "last without newline";
  store->put("in", text);
  ObjectLines lines(*store, "in", 40, 16);  // pieces far smaller than a line
  std::string line;
  bool too_long = false;
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(lines.next(line, too_long));
    EXPECT_EQ(line, "line " + std::to_string(i));
    EXPECT_FALSE(too_long);
  }
  ASSERT_TRUE(lines.next(line, too_long));
  EXPECT_TRUE(too_long) << "a line over the limit is flagged";
  EXPECT_EQ(line.size(), 40u);
  ASSERT_TRUE(lines.next(line, too_long));
  EXPECT_EQ(line, "last without newline");
  EXPECT_EQ(lines.line_number(), 102u);
  EXPECT_FALSE(lines.next(line, too_long));
  std::filesystem::remove_all(dir);
}

// A batch's sending goes on where it stopped (its window, a restart): a reader seeked to another's
// position reads the same lines, with the same numbers.
TEST(ObjectLines, AReaderSeekedToAnothersPositionGoesOnFromThere) {
  std::random_device rd;
  const auto dir = std::filesystem::temp_directory_path() / ("overhead-batch-seek-" + std::to_string(rd()));
  auto store = backends::open_object_store("file:" + dir.string());
  std::string text;
  for (int i = 0; i < 50; ++i) text += "line " + std::to_string(i) + (i % 5 == 0 ? "\r\n\n" : "\n");
  store->put("in", text);
  for (const std::size_t stop : {1u, 17u, 49u}) {
    ObjectLines first(*store, "in", 100, 8);
    std::string line;
    bool too_long = false;
    for (std::size_t i = 0; i < stop; ++i) ASSERT_TRUE(first.next(line, too_long));
    ObjectLines rest(*store, "in", 100, 8);
    rest.seek(first.position(), first.line_number());
    while (first.next(line, too_long)) {
      std::string again;
      ASSERT_TRUE(rest.next(again, too_long));
      EXPECT_EQ(again, line);
      EXPECT_EQ(rest.line_number(), first.line_number());
    }
    std::string none;
    EXPECT_FALSE(rest.next(none, too_long));
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace overhead::serve
