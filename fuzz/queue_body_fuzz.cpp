// libFuzzer target for the two queue bodies a process decodes: the worker's work item
// (pipe::parse_item_body, input queue) and the consumer's log message (ports::parse_log_message,
// log queue: a record or a stamp patch list). The first input byte picks the parser (even: work
// item, odd: log message), the rest is the body. What must hold:
//   - a bad body throws the parser's documented error (ItemError, std::runtime_error naming the
//     message), never anything else and never a crash;
//   - an accepted body re-encodes to one that decodes to the same value (encode/decode is a
//     fixpoint after one round), so a redelivered or forwarded message means the same.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fuzz_support.hpp"
#include "ports/errors.hpp"
#include "ports/record_codec.hpp"
#include "ports/record_fields.hpp"
#include "pipe/work_item.hpp"
#include "pipe_fuzz_checks.hpp"

namespace {

using namespace overhead;

void work_item(std::string_view body) {
  pipe::WorkItem item;
  try {
    item = pipe::parse_item_body(body, "message 3");
  } catch (const ports::ItemError& e) {
    fuzz::check_item_error(e, "message 3: ");
    return;
  }
  fuzz::check_source_record(*item.source, "parse_item_body");
  const std::string again = pipe::encode_item_body(*item.source, item.tokenizer);
  pipe::WorkItem back;
  try {
    back = pipe::parse_item_body(again, "message 4");
  } catch (const std::exception& e) {
    fuzz::fail(std::string("a re-encoded item body does not decode: ") + e.what() + "\nbody: " + again);
  }
  if (back.tokenizer != item.tokenizer) fuzz::fail("tokenizer changed in the round trip");
  fuzz::check_same_record(*item.source, *back.source, "item body round trip");
}

std::string record_json(const ports::Record& r) {
  std::string out;
  ports::append_record_json(out, r);
  return out;
}

void log_message(std::string_view body) {
  ports::LogMessage msg;
  try {
    msg = ports::parse_log_message(body, "log message 5");
  } catch (const std::runtime_error& e) {
    if (std::string_view(e.what()).rfind("log message 5: not a log message: ", 0) != 0)
      fuzz::fail(std::string("error does not name the message: ") + e.what());
    return;
  }
  if (const auto* r = std::get_if<ports::Record>(&msg)) {
    const std::string again = record_json(*r);
    ports::LogMessage back;
    try {
      back = ports::parse_log_message(again, "again");
    } catch (const std::exception& e) {
      fuzz::fail(std::string("a re-encoded record does not parse: ") + e.what() + "\nbody: " + again);
    }
    const auto* r2 = std::get_if<ports::Record>(&back);
    if (!r2) fuzz::fail("a re-encoded record parsed as a stamp patch: " + again);
    for (const auto& f : ports::kRecordFields)
      if (f.get(*r) != f.get(*r2)) fuzz::fail("field " + std::string(f.name) + " changed in the round trip: " + again);
    return;
  }
  const auto& patches = std::get<std::vector<ports::StampPatch>>(msg);
  std::string again;
  ports::append_stamps_json(again, patches);
  ports::LogMessage back;
  try {
    back = ports::parse_log_message(again, "again");
  } catch (const std::exception& e) {
    fuzz::fail(std::string("re-encoded stamps do not parse: ") + e.what() + "\nbody: " + again);
  }
  const auto* p2 = std::get_if<std::vector<ports::StampPatch>>(&back);
  if (!p2 || p2->size() != patches.size()) fuzz::fail("stamp patches changed in the round trip: " + again);
  for (std::size_t i = 0; i < patches.size(); ++i) {
    const auto &a = patches[i], &b = (*p2)[i];
    if (a.experiment_tokenizer != b.experiment_tokenizer || a.id != b.id || a.publish_acked != b.publish_acked ||
        a.input_deleted != b.input_deleted)
      fuzz::fail("stamp patch " + std::to_string(i) + " changed in the round trip: " + again);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] % 2 == 0) work_item(body);
  else log_message(body);
  return 0;
}
