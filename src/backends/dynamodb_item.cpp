#include "backends/dynamodb_item.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>

#include "ports/record_fields.hpp"
#include "util/json_writer.hpp"
#include "util/number_text.hpp"

namespace overhead::backends {


using ports::FieldType;
using ports::FieldValue;
using ports::kRecordFields;
using ports::Record;
using ports::RecordField;

namespace {

void append_number(std::string& out, std::int64_t v) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  out += "{\"N\":\"";
  out.append(buf, end);
  out += "\"}";
}

// A price: the shortest decimal that reads back as the same double (DynamoDB keeps 38 digits,
// so it stores the value exactly). A number has no inf or NaN in DynamoDB: written as 0.
std::string real_digits(double v) {
  return std::isfinite(v) ? util::shortest_double_text(v) : std::string("0");
}

void append_real(std::string& out, double v) {
  out += "{\"N\":\"";
  out += real_digits(v);
  out += "\"}";
}

// DynamoDB sizes a number as about one byte per two significant digits plus one.
std::size_t number_size(std::int64_t v) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  return static_cast<std::size_t>(end - buf) / 2 + 2;
}

// A JSON string literal; most values need no escaping, and copying them whole is far cheaper
// than the escaper's byte-by-byte append.
void append_string(std::string& out, std::string_view s) {
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == '"' || c == '\\' || c == 0x7f) {
      util::append_json_string(out, s);
      return;
    }
  }
  out += '"';
  out.append(s);
  out += '"';
}

[[noreturn]] void bad(const RecordField& f, const std::string& want, const nlohmann::json& got) {
  throw std::invalid_argument("attribute \"" + std::string(f.name) + "\" must be " + want + ", not " + got.dump());
}

std::int64_t parse_number(const RecordField& f, const nlohmann::json& value) {
  const auto n = value.find("N");
  if (n == value.end() || !n->is_string()) bad(f, "a number (N)", value);
  const std::string& s = n->get_ref<const std::string&>();
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) bad(f, "an integer (N)", value);
  return v;
}

// DynamoDB gives a number back in its own notation (e.g. "0.00001" for "1e-05"): the same value.
double parse_real(const RecordField& f, const nlohmann::json& value) {
  const auto n = value.find("N");
  if (n == value.end() || !n->is_string()) bad(f, "a number (N)", value);
  const std::string& s = n->get_ref<const std::string&>();
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) bad(f, "a number (N)", value);
  return v;
}

}  // namespace

std::string dynamodb_number(double v) { return real_digits(v); }

void append_dynamodb_key(std::string& out, std::string_view experiment_tokenizer, std::string_view id) {
  out += "{\"experiment_tokenizer\":{\"S\":";
  append_string(out, experiment_tokenizer);
  out += "},\"id\":{\"S\":";
  append_string(out, id);
  out += "}}";
}

void append_dynamodb_item(std::string& out, const Record& r) {
  out += '{';
  bool first = true;
  for (const auto& f : kRecordFields) {
    const FieldValue v = f.get(r);
    if (std::holds_alternative<std::monostate>(v)) continue;  // absent usage: no attribute
    if (!first) out += ',';
    first = false;
    out += '"';
    out += f.name;  // the field table's names are plain ASCII identifiers
    out += "\":";
    if (const auto* s = std::get_if<std::string_view>(&v)) {
      out += "{\"S\":";
      append_string(out, *s);
      out += '}';
    } else if (f.type == FieldType::boolean) {
      out += std::get<std::int64_t>(v) ? "{\"BOOL\":true}" : "{\"BOOL\":false}";
    } else if (const auto* d = std::get_if<double>(&v)) {
      append_real(out, *d);
    } else {
      append_number(out, std::get<std::int64_t>(v));
    }
  }
  out += '}';
}

void append_batch_write_request(std::string& out, std::string_view table, std::span<const Record* const> records) {
  out.reserve(out.size() + 64 + table.size() + records.size() * 1024);
  out += "{\"RequestItems\":{";
  append_string(out, table);
  out += ":[";
  for (std::size_t k = 0; k < records.size(); ++k) {
    out += k ? ",{\"PutRequest\":{\"Item\":" : "{\"PutRequest\":{\"Item\":";
    append_dynamodb_item(out, *records[k]);
    out += "}}";
  }
  out += "]}}";
}

std::size_t dynamodb_item_size(const Record& r) {
  std::size_t n = 0;
  for (const auto& f : kRecordFields) {
    const FieldValue v = f.get(r);
    if (std::holds_alternative<std::monostate>(v)) continue;
    n += f.name.size();
    if (const auto* s = std::get_if<std::string_view>(&v)) n += s->size();
    else if (f.type == FieldType::boolean) n += 1;
    else if (const auto* d = std::get_if<double>(&v)) n += real_digits(*d).size() / 2 + 2;
    else n += number_size(std::get<std::int64_t>(v));
  }
  return n;
}

Record record_from_dynamodb_item(const nlohmann::json& item) {
  if (!item.is_object()) throw std::invalid_argument("an item must be an attribute map, not " + item.dump());
  Record r;
  for (const auto& f : kRecordFields) {
    const auto it = item.find(std::string(f.name));
    if (it == item.end()) {
      if (f.key) throw std::invalid_argument("the item has no key attribute \"" + std::string(f.name) + "\"");
      continue;  // the field's empty value (the seed's items carry only its 10 fields)
    }
    const nlohmann::json& value = *it;
    if (!value.is_object()) bad(f, "an attribute value", value);
    switch (f.type) {
      case FieldType::text: {
        const auto s = value.find("S");
        if (s == value.end() || !s->is_string()) bad(f, "a string (S)", value);
        f.set(r, std::string_view(s->get_ref<const std::string&>()));
        break;
      }
      case FieldType::boolean: {
        const auto b = value.find("BOOL");
        if (b == value.end() || !b->is_boolean()) bad(f, "a boolean (BOOL)", value);
        f.set(r, std::int64_t(b->get<bool>() ? 1 : 0));
        break;
      }
      case FieldType::optional_integer:
        if (value.contains("NULL")) break;  // written as an explicit null by another client
        f.set(r, parse_number(f, value));
        break;
      case FieldType::integer:
        f.set(r, parse_number(f, value));
        break;
      case FieldType::real:
        f.set(r, parse_real(f, value));
        break;
    }
  }
  // The seed's producer wrote "<experiment>#<tokenizer>"; items without the two parts get them back.
  const auto hash = r.experiment_tokenizer.find('#');
  if (hash != std::string::npos) {
    if (r.experiment.empty()) r.experiment = r.experiment_tokenizer.substr(0, hash);
    if (r.tokenizer.empty()) r.tokenizer = r.experiment_tokenizer.substr(hash + 1);
  }
  return r;
}

}  // namespace overhead::backends
