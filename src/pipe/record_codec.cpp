#include "pipe/record_codec.hpp"

#include <charconv>
#include <stdexcept>

#include <simdjson.h>

#include "util/json_writer.hpp"

namespace overhead::pipe {

namespace {

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void field_str(std::string& out, const char* name, std::string_view v) {
  out += '"';
  out += name;
  out += "\":";
  util::append_json_string(out, v);
  out += ',';
}

void field_int(std::string& out, const char* name, std::int64_t v) {
  out += '"';
  out += name;
  out += "\":";
  append_int(out, v);
  out += ',';
}

void field_opt(std::string& out, const char* name, const std::optional<std::int64_t>& v) {
  out += '"';
  out += name;
  out += "\":";
  if (v) append_int(out, *v);
  else out += "null";
  out += ',';
}

namespace dom = simdjson::dom;

dom::parser& thread_parser() {
  thread_local dom::parser parser;
  return parser;
}

std::string get_str(dom::object o, const char* k) {
  std::string_view s;
  if (o[k].get(s) != simdjson::SUCCESS) throw std::runtime_error(std::string("missing string field \"") + k + "\"");
  return std::string(s);
}

std::int64_t get_int(dom::object o, const char* k) {
  std::int64_t v = 0;
  if (o[k].get(v) != simdjson::SUCCESS) throw std::runtime_error(std::string("missing integer field \"") + k + "\"");
  return v;
}

std::optional<std::int64_t> get_opt(dom::object o, const char* k) {
  std::int64_t v = 0;
  if (o[k].get(v) == simdjson::SUCCESS) return v;
  return std::nullopt;
}

void csv_field(std::ostream& out, std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) {
    out << s;
    return;
  }
  out << '"';
  for (const char c : s) {
    if (c == '"') out << '"';
    out << c;
  }
  out << '"';
}

}  // namespace

void append_record_json(std::string& out, const Record& r) {
  out += '{';
  field_str(out, "experiment_tokenizer", r.experiment_tokenizer);
  field_str(out, "id", r.id);
  field_str(out, "model", r.model);
  field_str(out, "start_time", r.start_time);
  field_str(out, "end_time", r.end_time);
  field_int(out, "token_count", r.token_count);
  field_opt(out, "api_input", r.api_input);
  field_opt(out, "api_output", r.api_output);
  field_str(out, "experiment", r.experiment);
  field_str(out, "tokenizer", r.tokenizer);
  field_int(out, "case", r.case_number);
  field_str(out, "worker", r.worker);
  field_int(out, "seq", r.seq);
  field_int(out, "batch", r.batch);
  out += "\"batch_boundary\":";
  out += r.batch_boundary ? "true," : "false,";
  field_int(out, "received", r.received);
  field_int(out, "render_start", r.render_start);
  field_int(out, "render_end", r.render_end);
  field_int(out, "encode_end", r.encode_end);
  field_int(out, "publish_start", r.publish_start);
  field_int(out, "publish_acked", r.publish_acked);
  field_int(out, "input_deleted", r.input_deleted);
  field_int(out, "prompt_chars", r.prompt_chars);
  field_int(out, "prompt_bytes", r.prompt_bytes);
  out.back() = '}';
}

void append_stamps_json(std::string& out, std::span<const StampPatch> patches) {
  out += "{\"stamps\":[";
  for (std::size_t i = 0; i < patches.size(); ++i) {
    if (i) out += ',';
    out += '{';
    field_str(out, "experiment_tokenizer", patches[i].experiment_tokenizer);
    field_str(out, "id", patches[i].id);
    field_int(out, "publish_acked", patches[i].publish_acked);
    field_int(out, "input_deleted", patches[i].input_deleted);
    out.back() = '}';
  }
  out += "]}";
}

LogMessage parse_log_message(std::string_view body, const std::string& origin) {
  try {
    dom::element doc;
    if (auto err = thread_parser().parse(body.data(), body.size(), true).get(doc); err)
      throw std::runtime_error(std::string("invalid JSON (") + simdjson::error_message(err) + ")");
    dom::object o;
    if (doc.get(o) != simdjson::SUCCESS) throw std::runtime_error("not a JSON object");
    dom::array stamps;
    if (o["stamps"].get(stamps) == simdjson::SUCCESS) {
      std::vector<StampPatch> out;
      for (dom::element e : stamps) {
        dom::object p;
        if (e.get(p) != simdjson::SUCCESS) throw std::runtime_error("a stamp patch is not an object");
        out.push_back(StampPatch{get_str(p, "experiment_tokenizer"), get_str(p, "id"), get_int(p, "publish_acked"),
                                 get_int(p, "input_deleted")});
      }
      return out;
    }
    Record r;
    r.experiment_tokenizer = get_str(o, "experiment_tokenizer");
    r.id = get_str(o, "id");
    r.model = get_str(o, "model");
    r.start_time = get_str(o, "start_time");
    r.end_time = get_str(o, "end_time");
    r.token_count = get_int(o, "token_count");
    r.api_input = get_opt(o, "api_input");
    r.api_output = get_opt(o, "api_output");
    r.experiment = get_str(o, "experiment");
    r.tokenizer = get_str(o, "tokenizer");
    r.case_number = static_cast<int>(get_int(o, "case"));
    r.worker = get_str(o, "worker");
    r.seq = get_int(o, "seq");
    r.batch = get_int(o, "batch");
    bool b = false;
    if (o["batch_boundary"].get(b) != simdjson::SUCCESS) throw std::runtime_error("missing boolean field \"batch_boundary\"");
    r.batch_boundary = b;
    r.received = get_int(o, "received");
    r.render_start = get_int(o, "render_start");
    r.render_end = get_int(o, "render_end");
    r.encode_end = get_int(o, "encode_end");
    r.publish_start = get_int(o, "publish_start");
    r.publish_acked = get_int(o, "publish_acked");
    r.input_deleted = get_int(o, "input_deleted");
    r.prompt_chars = get_int(o, "prompt_chars");
    r.prompt_bytes = get_int(o, "prompt_bytes");
    return r;
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(origin + ": not a log message: " + e.what());
  }
}

void write_records_csv(std::ostream& out, std::span<const Record> records) {
  out << "experiment_tokenizer,id,model,start_time,end_time,token_count,api_input,api_output,experiment,tokenizer,"
         "case,worker,seq,batch,batch_boundary,received,render_start,render_end,encode_end,publish_start,"
         "publish_acked,input_deleted,prompt_chars,prompt_bytes\n";
  for (const auto& r : records) {
    csv_field(out, r.experiment_tokenizer); out << ',';
    csv_field(out, r.id); out << ',';
    csv_field(out, r.model); out << ',';
    out << r.start_time << ',' << r.end_time << ',' << r.token_count << ',';
    if (r.api_input) out << *r.api_input;
    out << ',';
    if (r.api_output) out << *r.api_output;
    out << ',';
    csv_field(out, r.experiment); out << ',';
    csv_field(out, r.tokenizer); out << ',';
    out << r.case_number << ',';
    csv_field(out, r.worker);
    out << ',' << r.seq << ',' << r.batch << ',' << (r.batch_boundary ? "true" : "false") << ',' << r.received << ','
        << r.render_start << ',' << r.render_end << ',' << r.encode_end << ',' << r.publish_start << ','
        << r.publish_acked << ',' << r.input_deleted << ',' << r.prompt_chars << ',' << r.prompt_bytes << '\n';
  }
}

}  // namespace overhead::pipe
