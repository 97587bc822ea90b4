// libFuzzer target for the seed's JSONL record parser (pipe::parse_source_line), the first thing
// every input line meets. The input is one line. What must hold:
//   - a bad line throws ItemError (counted and dead-lettered by its kind), never anything else;
//   - an accepted line is what the worker relies on: a non-empty list of message objects, each
//     with a string role, and the size counters agree with the contents;
//   - its queue body (encode_item_body) decodes to the same record, so a record read from a file
//     and the same record received from a queue are processed alike.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "ports/errors.hpp"
#include "pipe/work_item.hpp"
#include "pipe_fuzz_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace overhead;
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  std::shared_ptr<const pipe::SourceRecord> rec;
  try {
    rec = pipe::parse_source_line(line, 7);
  } catch (const ports::ItemError& e) {
    fuzz::check_item_error(e, "line 7: ");
    return 0;
  }
  fuzz::check_source_record(*rec, "parse_source_line");
  const std::string body = pipe::encode_item_body(*rec, "tok");
  pipe::WorkItem item;
  try {
    item = pipe::parse_item_body(body, "message 1");
  } catch (const std::exception& e) {
    fuzz::fail(std::string("the queue body of an accepted line does not decode: ") + e.what() + "\nbody: " + body);
  }
  if (item.tokenizer != "tok") fuzz::fail("tokenizer changed on the way through the queue body");
  fuzz::check_same_record(*rec, *item.source, "line -> queue body");
  return 0;
}
