// The record field table: every field of Record is in it once, get/set round-trip, and the
// codecs built on it keep the seed's names and order.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "ports/record_codec.hpp"
#include "ports/record_fields.hpp"

namespace overhead::pipe {
using ports::append_record_json;
using ports::FieldType;
using ports::FieldValue;
using ports::find_record_field;
using ports::kRecordFields;
using ports::parse_log_message;
using ports::Record;
using ports::write_records_csv;
namespace {

// A record whose every field differs from a default Record's.
Record distinct_record() {
  Record r;
  std::int64_t n = 100;
  for (const auto& f : kRecordFields) {
    ++n;
    switch (f.type) {
      case FieldType::text: f.set(r, std::string_view(std::string(f.name) + "-value")); break;
      case FieldType::boolean: f.set(r, std::int64_t(1)); break;
      case FieldType::real: f.set(r, static_cast<double>(n) / 7e6); break;  // no short binary fraction
      default: f.set(r, n);
    }
  }
  return r;
}

TEST(RecordFields, EveryFieldOnceAndSetGetRoundTrip) {
  std::set<std::string_view> names, columns;
  for (const auto& f : kRecordFields) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    EXPECT_TRUE(columns.insert(f.column).second) << f.column;
  }
  const Record r = distinct_record();
  const Record blank;
  for (const auto& f : kRecordFields) {
    EXPECT_NE(f.get(r), f.get(blank)) << f.name << " is not wired to its own member";
    Record copy;
    f.set(copy, f.get(r));
    EXPECT_EQ(f.get(copy), f.get(r)) << f.name;
  }
  // Every member wired: setting all fields of a blank record from r reproduces r's JSON.
  Record rebuilt;
  for (const auto& f : kRecordFields) f.set(rebuilt, f.get(r));
  std::string a, b;
  append_record_json(a, r);
  append_record_json(b, rebuilt);
  EXPECT_EQ(a, b);
}

TEST(RecordFields, KeysAndPatchedStampsAreMarked) {
  std::vector<std::string_view> keys, patched;
  for (const auto& f : kRecordFields) {
    if (f.key) keys.push_back(f.name);
    if (f.patched) patched.push_back(f.name);
  }
  EXPECT_EQ(keys, (std::vector<std::string_view>{"experiment_tokenizer", "id"}));
  EXPECT_EQ(patched, (std::vector<std::string_view>{"publish_acked", "input_deleted"}));
  EXPECT_EQ(find_record_field("case")->column, "case_number");
  EXPECT_EQ(find_record_field("nope"), nullptr);
}

TEST(RecordFields, SetRejectsAValueOfTheWrongType) {
  Record r;
  EXPECT_THROW(find_record_field("id")->set(r, std::int64_t(1)), std::invalid_argument);
  EXPECT_THROW(find_record_field("seq")->set(r, std::string_view("x")), std::invalid_argument);
  EXPECT_THROW(find_record_field("seq")->set(r, FieldValue()), std::invalid_argument);
  find_record_field("api_input")->set(r, FieldValue());
  EXPECT_FALSE(r.api_input.has_value());
  EXPECT_THROW(find_record_field("cost_usd")->set(r, std::string_view("1")), std::invalid_argument);
  EXPECT_THROW(find_record_field("cost_usd")->set(r, FieldValue()), std::invalid_argument);
  find_record_field("cost_usd")->set(r, std::int64_t(2));  // an integer is a real too
  EXPECT_EQ(r.cost_usd, 2.0);
}

TEST(RecordFields, CodecsFollowTheTable) {
  const Record r = distinct_record();
  std::string json;
  append_record_json(json, r);
  const auto back = std::get<Record>(parse_log_message(json, "test"));
  for (const auto& f : kRecordFields) EXPECT_EQ(f.get(back), f.get(r)) << f.name;
  std::ostringstream csv;
  write_records_csv(csv, std::span<const Record>(&r, 1));
  const std::string header = csv.str().substr(0, csv.str().find('\n'));
  EXPECT_EQ(header,
            "experiment_tokenizer,id,model,start_time,end_time,token_count,api_input,api_output,experiment,tokenizer,"
            "case,worker,seq,batch,batch_boundary,received,render_start,render_end,encode_end,publish_start,"
            "publish_acked,input_deleted,prompt_chars,prompt_bytes,run_id,decode_start,first_token,decode_end,output_tokens,finish_reason,text,"
            "prompt_tokens_sent,engine_prompt_tokens,tool_calls,reasoning_tokens,constraint,"
            "key_name,cost_usd,cost_e_usd,cost_d_usd,price_source");
}

// A price goes through the log queue and the CSV as the same double, bit for bit: the shortest
// text that reads back exactly, whatever its magnitude.
TEST(RecordFields, ARealFieldRoundTripsExactlyThroughJsonAndCsv) {
  for (const double v : {0.0, 0.1 + 0.2, 1.0 / 3.0, 2.5e-9 / 7, 123456.789, 1e-300, 9.87654321e15}) {
    Record r;
    r.experiment_tokenizer = "e#t";
    r.id = "1";
    r.experiment = "e";
    r.cost_usd = v;
    r.cost_e_usd = v / 3;
    r.cost_d_usd = v - v / 3;
    std::string json;
    append_record_json(json, r);
    const auto back = std::get<Record>(parse_log_message(json, "test"));
    EXPECT_EQ(back.cost_usd, v) << json;
    EXPECT_EQ(back.cost_e_usd, v / 3) << json;
    EXPECT_EQ(back.cost_d_usd, v - v / 3) << json;
    std::ostringstream csv;
    write_records_csv(csv, std::span<const Record>(&r, 1));
    const std::string row = csv.str().substr(csv.str().find('\n') + 1);
    const auto at = row.rfind(',', row.rfind(',', row.rfind(',', row.rfind(',') - 1) - 1) - 1);  // cost_usd's cell
    EXPECT_EQ(std::stod(row.substr(at + 1)), v) << row;
  }
  // An integer in the body (another writer's 0) reads as the real it is.
  Record r = distinct_record();
  std::string json;
  append_record_json(json, r);
  const auto at = json.find("\"cost_usd\":") + 11;
  json.replace(at, json.find(',', at) - at, "3");
  EXPECT_EQ(std::get<Record>(parse_log_message(json, "int")).cost_usd, 3.0);
}

// The parser reads the object in one pass, trying the table's order first: fields in another
// order still parse, and of duplicate keys the first counts (as simdjson's lookup took it).
TEST(RecordFields, ALogMessageParsesInAnyOrderAndTakesTheFirstOfDuplicateKeys) {
  const Record r = distinct_record();
  std::string json;
  append_record_json(json, r);
  // Move "model" to the end and repeat "worker" with another value after the first.
  const auto at = json.find(",\"model\":");
  const auto end = json.find(',', at + 1);
  const std::string model = json.substr(at, end - at);
  std::string moved = json.substr(0, at) + json.substr(end);
  moved.insert(moved.size() - 1, model + ",\"worker\":\"someone else\",\"unknown\":[1,{\"a\":2}]");
  const auto back = std::get<Record>(parse_log_message(moved, "moved"));
  for (const auto& f : kRecordFields) EXPECT_EQ(f.get(back), f.get(r)) << f.name;
}

// run_id was added after log messages without it existed: a message from an older worker (no
// run_id, or null) still parses, with an empty run id; a run_id of another type is refused.
TEST(RecordFields, AFieldAddedLaterMayBeAbsentFromALogMessage) {
  Record r = distinct_record();
  std::string json;
  append_record_json(json, r);
  // The fields added later are the table's last rows; `base` is the body without any of them.
  const auto cut = json.find(",\"run_id\":");
  ASSERT_NE(cut, std::string::npos) << json;
  const std::string base = json.substr(0, cut);
  EXPECT_EQ(std::get<Record>(parse_log_message(base + "}", "old")).run_id, "");
  EXPECT_EQ(std::get<Record>(parse_log_message(base + ",\"run_id\":null}", "null")).run_id, "");
  EXPECT_THROW((void)parse_log_message(base + ",\"run_id\":5}", "number"), std::runtime_error);
  // The decoder's stamps (added later, integers): absent or null read as 0, text is refused.
  const Record old = std::get<Record>(parse_log_message(base + "}", "old"));
  EXPECT_EQ(old.decode_start, 0);
  EXPECT_EQ(old.first_token, 0);
  EXPECT_EQ(old.decode_end, 0);
  EXPECT_EQ(old.output_tokens, 0);
  const Record nulls = std::get<Record>(parse_log_message(base + ",\"decode_end\":null,\"output_tokens\":7}", "partial"));
  EXPECT_EQ(nulls.decode_end, 0);
  EXPECT_EQ(nulls.output_tokens, 7);
  EXPECT_THROW((void)parse_log_message(base + ",\"first_token\":\"x\"}", "text"), std::runtime_error);
  // The prices (added later, reals): absent or null read as 0 with an empty source, text is refused.
  EXPECT_EQ(old.cost_usd, 0.0);
  EXPECT_EQ(old.key_name, "");
  EXPECT_EQ(old.price_source, "");
  EXPECT_EQ(std::get<Record>(parse_log_message(base + ",\"cost_d_usd\":null,\"cost_e_usd\":0.25}", "p")).cost_e_usd, 0.25);
  EXPECT_THROW((void)parse_log_message(base + ",\"cost_usd\":\"1\"}", "text"), std::runtime_error);
  bool after_run_id = false;
  for (const auto& f : kRecordFields) {
    after_run_id = after_run_id || f.name == "run_id";
    EXPECT_EQ(f.added_later, after_run_id) << f.name << ": fields added later are the table's last rows";
  }
  // Fields there from the start stay required.
  std::string no_worker = json;
  no_worker.replace(no_worker.find("\"worker\""), 6, "\"wrkr");
  EXPECT_THROW((void)parse_log_message(no_worker, "old"), std::runtime_error);
  for (const auto& f : kRecordFields) {
    if (f.added_later) {
      EXPECT_FALSE(f.key || f.required) << f.name << ": a key or required field cannot be added later";
    }
  }
}

}  // namespace
}  // namespace overhead::pipe
