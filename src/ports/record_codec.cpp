#include "ports/record_codec.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include <simdjson.h>

#include "ports/record_fields.hpp"
#include "util/json_writer.hpp"
#include "util/number_text.hpp"

namespace overhead::ports {

namespace {

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// The shortest text that reads back as the same double (std::to_chars without a precision), so
// a price survives the log queue and the CSV bit for bit. JSON has no inf or NaN: written null.
void append_real(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  out += util::shortest_double_text(v);
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
  for (const auto& f : kRecordFields) {
    const FieldValue v = f.get(r);
    out += '"';
    out += f.name;
    out += "\":";
    if (const auto* s = std::get_if<std::string_view>(&v)) util::append_json_string(out, *s);
    else if (const auto* i = std::get_if<std::int64_t>(&v)) {
      if (f.type == FieldType::boolean) out += *i ? "true" : "false";
      else append_int(out, *i);
    } else if (const auto* d = std::get_if<double>(&v)) append_real(out, *d);
    else out += "null";
    out += ',';
  }
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
    // One pass over the object's keys, instead of a lookup (a scan of every key) per field: a
    // body written by append_record_json has the fields in the table's order, so the expected
    // field is tried first. The first of duplicate keys counts, as o[k] would take it.
    std::array<dom::element, kRecordFields.size()> value;
    std::array<bool, kRecordFields.size()> found{};
    std::size_t expected = 0;
    for (dom::key_value_pair kv : o) {
      std::size_t at = kRecordFields.size();
      if (expected < kRecordFields.size() && kRecordFields[expected].name == kv.key) at = expected;
      else
        for (std::size_t k = 0; k < kRecordFields.size(); ++k)
          if (kRecordFields[k].name == kv.key) {
            at = k;
            break;
          }
      if (at == kRecordFields.size()) continue;  // a key of no field: ignored, as before
      expected = at + 1;
      if (found[at]) continue;
      found[at] = true;
      value[at] = kv.value;
    }
    Record r;
    for (std::size_t k = 0; k < kRecordFields.size(); ++k) {
      const auto& f = kRecordFields[k];
      const char* name = f.name.data();  // the table's names are string literals: NUL-terminated
      // Absent, or null: only a field added later may be (a message from an older worker).
      const bool absent = !found[k] || value[k].is_null();
      switch (f.type) {
        case FieldType::text: {
          std::string_view v;
          if (!found[k] || value[k].get(v) != simdjson::SUCCESS) {
            if (!f.added_later || !absent) throw std::runtime_error(std::string("missing string field \"") + name + "\"");
            v = {};
          }
          f.set(r, v);
          break;
        }
        case FieldType::integer: {
          std::int64_t v = 0;
          if (!(f.added_later && absent) && (!found[k] || value[k].get(v) != simdjson::SUCCESS))
            throw std::runtime_error(std::string("missing integer field \"") + name + "\"");
          f.set(r, v);
          break;
        }
        case FieldType::optional_integer: {
          std::int64_t v = 0;
          f.set(r, found[k] && value[k].get(v) == simdjson::SUCCESS ? FieldValue(v) : FieldValue());
          break;
        }
        case FieldType::real: {
          // simdjson reads an integer as a double too; absent or null only for a field added later.
          double v = 0;
          if (!(f.added_later && absent) && (!found[k] || value[k].get(v) != simdjson::SUCCESS))
            throw std::runtime_error(std::string("missing number field \"") + name + "\"");
          f.set(r, v);
          break;
        }
        case FieldType::boolean: {
          bool b = false;
          if (!found[k] || value[k].get(b) != simdjson::SUCCESS)
            throw std::runtime_error(std::string("missing boolean field \"") + name + "\"");
          f.set(r, std::int64_t(b));
          break;
        }
      }
    }
    return r;
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(origin + ": not a log message: " + e.what());
  }
}

void write_records_csv(std::ostream& out, std::span<const Record> records) {
  for (std::size_t k = 0; k < kRecordFields.size(); ++k) out << (k ? "," : "") << kRecordFields[k].name;
  out << '\n';
  for (const auto& r : records) {
    for (std::size_t k = 0; k < kRecordFields.size(); ++k) {
      const auto& f = kRecordFields[k];
      if (k) out << ',';
      const FieldValue v = f.get(r);
      if (const auto* s = std::get_if<std::string_view>(&v)) csv_field(out, *s);
      else if (const auto* i = std::get_if<std::int64_t>(&v)) {
        if (f.type == FieldType::boolean) out << (*i ? "true" : "false");
        else out << *i;
      } else if (const auto* d = std::get_if<double>(&v)) {
        std::string text;
        append_real(text, *d);
        if (text != "null") out << text;
      }  // null: an empty field
    }
    out << '\n';
  }
}

}  // namespace overhead::ports
