// Jinja's builtin filters and tests, with transformers' tojson. Each follows jinja2/filters.py and
// jinja2/tests.py (3.1) in behaviour, including what it does with Undefined.
#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include "chat/builtins.hpp"
#include "chat/interpreter.hpp"
#include "chat/pytext.hpp"

namespace overhead::chat {

namespace {

using py::to_str;

Value str_value(const Value& v) {
  if (v.kind == Kind::String) return v;
  return Value::owned(to_str(v));
}

std::int64_t int_arg(const Value* v, std::int64_t dflt, const char* what) {
  if (!v || v->kind == Kind::None) return dflt;
  if (v->kind == Kind::Int) return v->i;
  if (v->kind == Kind::Bool) return v->b;
  throw EvalError(std::string(what) + ": an integer is required, not " + py::type_name(*v));
}
bool bool_arg(const Value* v, bool dflt) { return v ? truthy(*v) : dflt; }

// Attribute lookup used by map/selectattr/sort(attribute=...): dotted paths and integer parts.
Value attribute_of(Interpreter& in, const Value& item, std::string_view path) {
  Value cur = item;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = path.find('.', start);
    const std::string_view part = path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    bool numeric = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (numeric) cur = in.getitem(cur, Value::integer(std::stoll(std::string(part))));
    else cur = in.getitem(cur, Value::borrowed(part));
    if (dot == std::string_view::npos) return cur;
    start = dot + 1;
  }
}

// ---- strings ----

Value f_trim(Interpreter&, const Value& v, CallArgs& a) {
  const Value s = str_value(v);
  Value r = s;
  const Value* chars = a.get(0, "chars");
  r.s = (chars && chars->kind == Kind::String) ? py::strip_chars(s.s, chars->s, true, true) : py::strip(s.s, true, true);
  return r;
}
Value f_upper(Interpreter&, const Value& v, CallArgs&) { return Value::owned(py::upper(to_str(v))); }
Value f_lower(Interpreter&, const Value& v, CallArgs&) { return Value::owned(py::lower(to_str(v))); }

std::string capitalize(std::string_view s) {
  std::string out;
  std::size_t i = 0;
  if (!s.empty()) py::append_utf8(out, py::to_upper(py::next_code_point(s, i)));
  out += py::lower(s.substr(i));
  return out;
}
Value f_capitalize(Interpreter&, const Value& v, CallArgs&) { return Value::owned(capitalize(to_str(v))); }

// Jinja's title: split on runs of [-\s({[<], capitalize each piece.
Value f_title(Interpreter&, const Value& v, CallArgs&) {
  const std::string s = to_str(v);
  std::string out;
  bool word_start = true;
  for (std::size_t i = 0; i < s.size();) {
    const char32_t cp = py::next_code_point(s, i);
    const bool sep = py::is_space(cp) || cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<';
    if (sep) {
      py::append_utf8(out, cp);
      word_start = true;
    } else {
      py::append_utf8(out, word_start ? py::to_upper(cp) : py::to_lower(cp));
      word_start = false;
    }
  }
  return Value::owned(std::move(out));
}

Value f_replace(Interpreter& in, const Value& v, CallArgs& a) {
  const std::string s = to_str(v);
  const Value* old_v = a.get(0, "old");
  const Value* new_v = a.get(1, "new");
  if (!old_v || !new_v) throw EvalError("replace() missing required arguments");
  const std::string old_s = to_str(*old_v), new_s = to_str(*new_v);
  std::int64_t count = int_arg(a.get(2, "count"), -1, "replace");
  std::string out;
  if (old_s.empty()) {
    // Python inserts `new` between every character (and at both ends).
    std::size_t i = 0;
    while (i <= s.size()) {
      if (count-- != 0) out += new_s;
      else { out.append(s, i); break; }
      if (i == s.size()) break;
      const std::size_t start = i;
      py::next_code_point(s, i);
      out.append(s, start, i - start);
      in.check_size(out.size());
    }
    return Value::owned(std::move(out));
  }
  std::size_t pos = 0;
  while (count != 0) {
    const std::size_t hit = s.find(old_s, pos);
    if (hit == std::string::npos) break;
    out.append(s, pos, hit - pos);
    out += new_s;
    pos = hit + old_s.size();
    --count;
    in.check_size(out.size());
  }
  out.append(s, pos);
  return Value::owned(std::move(out));
}

std::vector<std::string_view> splitlines(std::string_view s) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t at = i;
    const char32_t cp = py::next_code_point(s, i);
    const bool brk = cp == '\n' || cp == '\r' || cp == 0x0B || cp == 0x0C || cp == 0x1C || cp == 0x1D ||
                     cp == 0x1E || cp == 0x85 || cp == 0x2028 || cp == 0x2029;
    if (!brk) continue;
    lines.push_back(s.substr(start, at - start));
    if (cp == '\r' && i < s.size() && s[i] == '\n') ++i;
    start = i;
  }
  if (start < s.size()) lines.push_back(s.substr(start));
  return lines;
}

Value f_indent(Interpreter& in, const Value& v, CallArgs& a) {
  const Value* w = a.get(0, "width");
  std::string ind;
  if (w && w->kind == Kind::String) {
    ind = std::string(w->s);
  } else {
    const auto width = static_cast<std::size_t>(std::max<std::int64_t>(0, int_arg(w, 4, "indent")));
    in.check_size(width);
    ind.assign(width, ' ');
  }
  const bool first = bool_arg(a.get(1, "first"), false);
  const bool blank = bool_arg(a.get(2, "blank"), false);
  const std::string s = to_str(v) + "\n";
  const auto lines = splitlines(s);
  // Bound the result (one indent per line at most) before building it.
  std::size_t total = 0;
  if (__builtin_mul_overflow(lines.size() + 1, ind.size(), &total) || __builtin_add_overflow(total, s.size(), &total))
    total = SIZE_MAX;
  in.check_size(total);
  std::string rv;
  if (blank) {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (i) rv += "\n" + ind;
      rv += lines[i];
    }
  } else if (!lines.empty()) {
    rv = std::string(lines[0]);
    for (std::size_t i = 1; i < lines.size(); ++i) {
      rv += "\n";
      if (!lines[i].empty()) rv += ind;
      rv += lines[i];
    }
  }
  if (first) rv = ind + rv;
  return Value::owned(std::move(rv));
}

Value f_center(Interpreter& in, const Value& v, CallArgs& a) {
  const std::string s = to_str(v);
  const std::int64_t width = int_arg(a.get(0, "width"), 80, "center");
  const auto n = static_cast<std::int64_t>(py::code_point_count(s));
  if (width <= n) return Value::owned(s);
  in.check_size(static_cast<std::size_t>(width - n) + s.size());
  const std::int64_t marg = width - n;
  const std::int64_t left = marg / 2 + (marg & width & 1);
  return Value::owned(std::string(static_cast<std::size_t>(left), ' ') + s +
                      std::string(static_cast<std::size_t>(marg - left), ' '));
}

Value f_wordcount(Interpreter&, const Value& v, CallArgs&) {
  const std::string s = to_str(v);
  std::int64_t n = 0;
  bool in_word = false;
  for (std::size_t i = 0; i < s.size();) {
    const char32_t cp = py::next_code_point(s, i);
    const bool w = py::is_alnum(cp) || cp == '_';
    if (w && !in_word) ++n;
    in_word = w;
  }
  return Value::integer(n);
}

}  // namespace

void append_html_escaped(std::string& out, std::string_view s) {
  std::size_t run = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char* e = nullptr;
    switch (s[i]) {
      case '&': e = "&amp;"; break;
      case '<': e = "&lt;"; break;
      case '>': e = "&gt;"; break;
      case '"': e = "&#34;"; break;
      case '\'': e = "&#39;"; break;
      default: continue;
    }
    out.append(s.data() + run, i - run);
    out += e;
    run = i + 1;
  }
  out.append(s.data() + run, s.size() - run);
}

namespace {

Value markup_of(std::string text) {
  Value out = Value::owned(std::move(text));
  out.markup = true;
  return out;
}

// escape: a Markup is already safe and comes back unchanged; anything else is escaped into one.
Value f_escape(Interpreter&, const Value& v, CallArgs&) {
  if (v.kind == Kind::String && v.markup) return v;
  std::string out;
  append_html_escaped(out, to_str(v));
  return markup_of(std::move(out));
}

Value f_forceescape(Interpreter&, const Value& v, CallArgs&) {
  std::string out;
  append_html_escaped(out, v.kind == Kind::String ? std::string(v.s) : to_str(v));
  return markup_of(std::move(out));
}

// safe: Markup(value), the text unchanged but marked safe.
Value f_safe(Interpreter&, const Value& v, CallArgs&) {
  if (v.kind == Kind::String) {
    Value out = v;
    out.markup = true;
    return out;
  }
  return markup_of(to_str(v));
}
Value f_string(Interpreter&, const Value& v, CallArgs&) { return str_value(v); }

Value f_truncate(Interpreter&, const Value& v, CallArgs& a) {
  const std::string s = to_str(v);
  const std::int64_t length = int_arg(a.get(0, "length"), 255, "truncate");
  const bool killwords = bool_arg(a.get(1, "killwords"), false);
  const Value* end_v = a.get(2, "end");
  const std::string end = end_v ? to_str(*end_v) : "...";
  const std::int64_t leeway = int_arg(a.get(3, "leeway"), 5, "truncate");
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < s.size();) {
    starts.push_back(i);
    py::next_code_point(s, i);
  }
  const auto n = static_cast<std::int64_t>(starts.size());
  // Saturate: truncate(INT64_MAX) must keep the string, not wrap to a negative bound.
  std::int64_t bound = 0;
  if (__builtin_add_overflow(length, leeway, &bound)) bound = leeway < 0 ? INT64_MIN : INT64_MAX;
  if (n <= bound) return Value::owned(s);
  const auto end_n = static_cast<std::int64_t>(py::code_point_count(end));
  const std::int64_t keep = std::max<std::int64_t>(0, length - end_n);
  std::string head = s.substr(0, starts[static_cast<std::size_t>(std::min(keep, n))]);
  if (!killwords) {
    const std::size_t sp = head.rfind(' ');
    if (sp != std::string::npos) head.resize(sp);
  }
  return Value::owned(head + end);
}

// ---- numbers ----

Value f_int(Interpreter&, const Value& v, CallArgs& a) {
  const Value* d = a.get(0, "default");
  const Value dflt = d ? *d : Value::integer(0);
  const std::int64_t base = int_arg(a.get(1, "base"), 10, "int");
  switch (v.kind) {
    case Kind::Int: return v;
    case Kind::Bool: return Value::integer(v.b);
    case Kind::Float:
      if (!std::isfinite(v.f)) return dflt;
      return Value::integer(static_cast<std::int64_t>(v.f));
    case Kind::String: {
      std::string s(py::strip(v.s, true, true));
      s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
      if (s.empty()) return dflt;
      char* end = nullptr;
      errno = 0;
      const long long r = std::strtoll(s.c_str(), &end, static_cast<int>(base));
      if (end && *end == 0 && errno == 0) return Value::integer(r);
      end = nullptr;
      const double f = std::strtod(s.c_str(), &end);
      if (end && *end == 0 && std::isfinite(f)) return Value::integer(static_cast<std::int64_t>(f));
      return dflt;
    }
    default: return dflt;
  }
}

Value f_float(Interpreter&, const Value& v, CallArgs& a) {
  const Value* d = a.get(0, "default");
  const Value dflt = d ? *d : Value::floating(0.0);
  switch (v.kind) {
    case Kind::Float: return v;
    case Kind::Int: return Value::floating(static_cast<double>(v.i));
    case Kind::Bool: return Value::floating(v.b ? 1.0 : 0.0);
    case Kind::String: {
      const std::string s(py::strip(v.s, true, true));
      char* end = nullptr;
      const double f = std::strtod(s.c_str(), &end);
      if (!s.empty() && end && *end == 0) return Value::floating(f);
      return dflt;
    }
    default: return dflt;
  }
}

Value f_abs(Interpreter&, const Value& v, CallArgs&) {
  if (v.kind == Kind::Int) return Value::integer(v.i < 0 ? -v.i : v.i);
  if (v.kind == Kind::Bool) return Value::integer(v.b);
  if (v.kind == Kind::Float) return Value::floating(std::fabs(v.f));
  if (v.kind == Kind::Undefined) fail_undefined(v);
  throw EvalError(std::string("bad operand type for abs(): '") + py::type_name(v) + "'");
}

// Python's round(int, ndigits): exact, half to even; ints stay ints.
std::int64_t round_int(std::int64_t x, std::int64_t ndigits) {
  if (ndigits >= 0) return x;
  if (ndigits < -18) return 0;  // 10**19 exceeds every int64 magnitude: round(x, -19) is 0
  std::int64_t unit = 1;
  for (std::int64_t k = 0; k < -ndigits; ++k) unit *= 10;
  std::int64_t q = x / unit, r = x % unit;
  if (r < 0) {  // floor division, as Python's divmod
    r += unit;
    --q;
  }
  const std::int64_t twice = 2 * r;  // r < 10**18, so no overflow
  if (twice > unit || (twice == unit && (q & 1) != 0)) ++q;
  std::int64_t out;
  if (__builtin_mul_overflow(q, unit, &out)) throw EvalError("integer overflow");
  return out;
}

// Python's round(float, ndigits): correctly rounded on the exact binary value (as CPython's dtoa),
// which glibc's printf does for ndigits >= 0; a precision past every double's digits keeps x.
double round_float(double x, std::int64_t ndigits) {
  if (!std::isfinite(x) || x == 0) return x;
  if (ndigits > 323) return x;
  if (ndigits >= 0) {
    char buf[400 + 32];
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(std::min<std::int64_t>(ndigits, 400)), x);
    return std::strtod(buf, nullptr);
  }
  if (ndigits < -308) return std::copysign(0.0, x);
  // Negative ndigits: half to even on x / 10**-ndigits; y is exact for the magnitudes where it
  // matters (|x| < 2**53 * 10**-ndigits), and beyond them x has no digits below the unit anyway.
  const double unit = std::pow(10.0, static_cast<double>(-ndigits));
  const double y = x / unit;
  double fl = std::floor(y);
  const double diff = y - fl;
  if (diff > 0.5 || (diff == 0.5 && std::fmod(fl, 2.0) != 0)) fl += 1;
  return std::copysign(fl * unit, x);
}

// Jinja's do_round: the method is checked first; "common" is Python's round(); ceil and floor are
// math.ceil/floor(value * 10**precision) / 10**precision, a float.
Value f_round(Interpreter&, const Value& v, CallArgs& a) {
  const std::int64_t precision = int_arg(a.get(0, "precision"), 0, "round");
  const Value* m = a.get(1, "method");
  const std::string method = m ? to_str(*m) : "common";
  if (method != "common" && method != "ceil" && method != "floor")
    throw EvalError("method must be common, ceil or floor");
  if (!v.is_number()) {
    if (v.kind == Kind::Undefined) fail_undefined(v);
    throw EvalError(std::string("type ") + py::type_name(v) + " doesn't define __round__ method");
  }
  if (method == "common") {
    if (v.kind != Kind::Float) return Value::integer(round_int(v.kind == Kind::Int ? v.i : v.b, precision));
    return Value::floating(round_float(v.f, precision));
  }
  const bool is_int = v.kind != Kind::Float;
  const double x = is_int ? static_cast<double>(v.kind == Kind::Int ? v.i : v.b) : v.f;
  // 10**precision is an int for precision >= 0: an integer value stays exact (ceil/floor of an int is
  // itself), and a float value meets an int too large for a float once precision passes 308.
  if (is_int && precision >= 0) return Value::floating(x);
  if (precision > 308) throw EvalError("int too large to convert to float");
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double y = x * scale;
  if (std::isnan(y)) throw EvalError("cannot convert float NaN to integer");
  if (std::isinf(y)) throw EvalError("cannot convert float infinity to integer");
  const double r = method == "ceil" ? std::ceil(y) : std::floor(y);
  // 10**precision underflows to 0.0 below about -323, and Python then divides by zero.
  if (scale == 0.0) throw EvalError("float division by zero");
  return Value::floating(r / scale);
}

// ---- sequences ----

Value f_length(Interpreter&, const Value& v, CallArgs&) { return Value::integer(static_cast<std::int64_t>(length_of(v))); }

Value f_first(Interpreter&, const Value& v, CallArgs&) {
  const auto items = iterate(v);
  if (items.empty()) return Value::undefined("No first item, sequence was empty.", UndefinedWhy::Hint);
  return items.front();
}
Value f_last(Interpreter&, const Value& v, CallArgs&) {
  const auto items = iterate(v);
  if (items.empty()) return Value::undefined("No last item, sequence was empty.", UndefinedWhy::Hint);
  return items.back();
}

Value f_join(Interpreter& in, const Value& v, CallArgs& a) {
  const Value* d = a.get(0, "d");
  const std::string sep = d ? to_str(*d) : "";
  const Value* attr = a.get(1, "attribute");
  std::string out;
  bool first = true;
  if (v.kind == Kind::List) {
    for (const auto& item : as_list(v).items) {
      if (!first) out += sep;
      first = false;
      py::append_str(out, attr ? attribute_of(in, item, to_str(*attr)) : item);
      in.check_size(out.size());
    }
    return Value::owned(std::move(out));
  }
  for (const auto& item : iterate(v)) {
    if (!first) out += sep;
    first = false;
    py::append_str(out, attr ? attribute_of(in, item, to_str(*attr)) : item);
    in.check_size(out.size());
  }
  return Value::owned(std::move(out));
}

Value f_default(Interpreter&, const Value& v, CallArgs& a) {
  const Value* d = a.get(0, "default_value");
  const bool boolean = bool_arg(a.get(1, "boolean"), false);
  if (v.kind == Kind::Undefined || (boolean && !truthy(v))) return d ? *d : Value::borrowed("");
  return v;
}

Value f_list(Interpreter&, const Value& v, CallArgs&) {
  if (v.kind == Kind::List && !as_list(v).is_tuple) return make_list(as_list(v).items);
  return make_list(iterate(v));
}

Value f_reverse(Interpreter&, const Value& v, CallArgs&) {
  if (v.kind == Kind::String) {
    std::vector<std::string_view> cps;
    for (std::size_t i = 0; i < v.s.size();) {
      const std::size_t s = i;
      py::next_code_point(v.s, i);
      cps.push_back(v.s.substr(s, i - s));
    }
    std::string out;
    for (auto it = cps.rbegin(); it != cps.rend(); ++it) out.append(*it);
    return Value::owned(std::move(out));
  }
  auto items = iterate(v);
  std::reverse(items.begin(), items.end());
  return make_list(std::move(items));
}

Value f_items(Interpreter&, const Value& v, CallArgs&) {
  if (v.kind == Kind::Undefined) return make_list({});
  if (v.kind != Kind::Dict) throw EvalError("Can only get item pairs from a mapping.");
  std::vector<Value> out;
  for (const auto& [k, val] : as_dict(v).items) out.push_back(make_list({k, val}, true));
  return make_list(std::move(out));
}

// Sort key comparison with Jinja's case_sensitive=False lowering of strings.
Value sort_key(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.kind == Kind::String) return Value::owned(py::lower(v.s));
  return v;
}

Value f_dictsort(Interpreter&, const Value& v, CallArgs& a) {
  if (v.kind != Kind::Dict) throw EvalError("dictsort: expected a mapping");
  const bool cs = bool_arg(a.get(0, "case_sensitive"), false);
  const Value* by_v = a.get(1, "by");
  const std::string by = by_v ? to_str(*by_v) : "key";
  const bool rev = bool_arg(a.get(2, "reverse"), false);
  if (by != "key" && by != "value") throw EvalError("You can only sort by either \"key\" or \"value\"");
  const std::size_t pos = by == "key" ? 0 : 1;
  std::vector<Value> pairs;
  for (const auto& [k, val] : as_dict(v).items) pairs.push_back(make_list({k, val}, true));
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& x, const Value& y) {
    const Value kx = sort_key(as_list(x).items[pos], cs), ky = sort_key(as_list(y).items[pos], cs);
    return rev ? less(ky, kx) : less(kx, ky);
  });
  return make_list(std::move(pairs));
}

Value f_sort(Interpreter& in, const Value& v, CallArgs& a) {
  const bool rev = bool_arg(a.get(0, "reverse"), false);
  const bool cs = bool_arg(a.get(1, "case_sensitive"), false);
  const Value* attr = a.get(2, "attribute");
  auto items = iterate(v);
  std::vector<std::pair<Value, Value>> keyed;
  for (auto& it : items) keyed.emplace_back(sort_key(attr ? attribute_of(in, it, to_str(*attr)) : it, cs), it);
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    return rev ? less(y.first, x.first) : less(x.first, y.first);
  });
  std::vector<Value> out;
  for (auto& kv : keyed) out.push_back(std::move(kv.second));
  return make_list(std::move(out));
}

Value f_unique(Interpreter& in, const Value& v, CallArgs& a) {
  const bool cs = bool_arg(a.get(0, "case_sensitive"), false);
  const Value* attr = a.get(1, "attribute");
  std::vector<Value> seen, out;
  for (const auto& it : iterate(v)) {
    const Value key = sort_key(attr ? attribute_of(in, it, to_str(*attr)) : it, cs);
    bool dup = false;
    for (const auto& s : seen)
      if (equals(s, key)) { dup = true; break; }
    if (!dup) {
      seen.push_back(key);
      out.push_back(it);
    }
  }
  return make_list(std::move(out));
}

Value min_max(Interpreter& in, const Value& v, CallArgs& a, bool want_max) {
  const bool cs = bool_arg(a.get(0, "case_sensitive"), false);
  const Value* attr = a.get(1, "attribute");
  const auto items = iterate(v);
  if (items.empty()) return Value::undefined(want_max ? "No aggregated item, sequence was empty." : "No aggregated item, sequence was empty.", UndefinedWhy::Hint);
  std::size_t best = 0;
  Value best_key = sort_key(attr ? attribute_of(in, items[0], to_str(*attr)) : items[0], cs);
  for (std::size_t i = 1; i < items.size(); ++i) {
    Value k = sort_key(attr ? attribute_of(in, items[i], to_str(*attr)) : items[i], cs);
    if (want_max ? less(best_key, k) : less(k, best_key)) {
      best = i;
      best_key = std::move(k);
    }
  }
  return items[best];
}
Value f_min(Interpreter& in, const Value& v, CallArgs& a) { return min_max(in, v, a, false); }
Value f_max(Interpreter& in, const Value& v, CallArgs& a) { return min_max(in, v, a, true); }

Value f_sum(Interpreter& in, const Value& v, CallArgs& a) {
  const Value* attr = a.get(0, "attribute");
  const Value* start = a.get(1, "start");
  Value total = start ? *start : Value::integer(0);
  for (const auto& it : iterate(v)) total = binary_op(BinOp::Add, total, attr ? attribute_of(in, it, to_str(*attr)) : it, in);
  return total;
}

Value f_batch(Interpreter&, const Value& v, CallArgs& a) {
  const std::int64_t n = int_arg(a.get(0, "linecount"), 1, "batch");
  if (n <= 0) throw EvalError("batch: linecount must be positive");
  const Value* fill = a.get(1, "fill_with");
  std::vector<Value> out, cur;
  for (const auto& it : iterate(v)) {
    cur.push_back(it);
    if (static_cast<std::int64_t>(cur.size()) == n) {
      out.push_back(make_list(std::move(cur)));
      cur.clear();
    }
  }
  if (!cur.empty()) {
    if (fill && fill->kind != Kind::None)
      while (static_cast<std::int64_t>(cur.size()) < n) cur.push_back(*fill);
    out.push_back(make_list(std::move(cur)));
  }
  return make_list(std::move(out));
}

Value f_attr(Interpreter& in, const Value& v, CallArgs& a) {
  const Value* name = a.get(0, "name");
  if (!name) throw EvalError("attr() missing required argument 'name'");
  return in.getattr(v, to_str(*name));
}

// map(attribute='x', default=...) or map('filter', args...)
// A generator in Jinja2 (see ListObject::lazy).
Value lazy_list(std::vector<Value> items) {
  Value v = make_list(std::move(items));
  static_cast<ListObject&>(*v.obj).lazy = true;
  return v;
}

bool holds_generator(const Value& v) {
  if (v.kind == Kind::List) {
    if (as_list(v).lazy) return true;
    for (const auto& c : as_list(v).items) if (holds_generator(c)) return true;
  } else if (v.kind == Kind::Dict) {
    for (const auto& kv : as_dict(v).items) if (holds_generator(kv.second)) return true;
  }
  return false;
}

Value f_map(Interpreter& in, const Value& v, CallArgs& a) {
  std::vector<Value> out;
  const auto items = truthy(v) ? iterate(v) : std::vector<Value>();  // Jinja: `if seq:`
  const Value* attr = nullptr;
  const Value* dflt = nullptr;
  for (const auto& [k, val] : a.keyword) {
    if (k == "attribute") attr = &val;
    else if (k == "default") dflt = &val;
  }
  if (attr) {
    for (const auto& it : items) {
      Value r = attribute_of(in, it, to_str(*attr));
      if (r.kind == Kind::Undefined && dflt) r = *dflt;
      out.push_back(std::move(r));
    }
    return lazy_list(std::move(out));
  }
  if (a.positional.empty()) throw EvalError("map requires a filter argument");
  const std::string name = to_str(a.positional[0]);
  CallArgs rest;
  rest.positional.assign(a.positional.begin() + 1, a.positional.end());
  rest.keyword = a.keyword;
  for (const auto& it : items) {
    CallArgs copy = rest;
    out.push_back(in.apply_filter(name, it, copy));
  }
  return lazy_list(std::move(out));
}

Value select_impl(Interpreter& in, const Value& v, CallArgs& a, bool by_attr, bool keep) {
  std::vector<Value> out;
  std::size_t next = 0;
  std::string attr;
  if (by_attr) {
    if (a.positional.empty()) throw EvalError("Missing parameter for attribute name");
    attr = to_str(a.positional[next++]);
  }
  std::string test;
  bool has_test = next < a.positional.size();
  if (has_test) test = to_str(a.positional[next++]);
  CallArgs rest;
  rest.positional.assign(a.positional.begin() + static_cast<std::ptrdiff_t>(std::min(next, a.positional.size())),
                         a.positional.end());
  rest.keyword = a.keyword;
  if (!truthy(v)) return lazy_list({});  // Jinja: `if seq:`
  for (const auto& it : iterate(v)) {
    const Value x = by_attr ? attribute_of(in, it, attr) : it;
    bool pass;
    if (has_test) {
      CallArgs copy = rest;
      pass = in.apply_test(test, x, copy);
    } else {
      pass = truthy(x);
    }
    if (pass == keep) out.push_back(it);
  }
  return lazy_list(std::move(out));
}
Value f_select(Interpreter& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, false, true); }
Value f_reject(Interpreter& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, false, false); }
Value f_selectattr(Interpreter& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, true, true); }
Value f_rejectattr(Interpreter& in, const Value& v, CallArgs& a) { return select_impl(in, v, a, true, false); }

// The bytes json.dumps spends on indentation: each item of a container at depth d sits on its own line
// behind d indents, and its closing bracket behind d - 1. Saturates once past `cap`, so a hostile indent is
// refused before the text is built.
std::size_t indent_bytes(const Value& v, std::size_t depth, std::size_t unit, std::size_t cap) {
  std::size_t total = 0;
  const auto add = [&](std::size_t d) {
    std::size_t n = 0;
    if (__builtin_mul_overflow(d, unit, &n) || __builtin_add_overflow(total, n + 1, &total)) total = SIZE_MAX;
  };
  const auto child = [&](const Value& c) {
    add(depth);
    if (total <= cap) {
      const std::size_t inner = indent_bytes(c, depth + 1, unit, cap);
      if (__builtin_add_overflow(total, inner, &total)) total = SIZE_MAX;
    }
  };
  if (v.kind == Kind::List) {
    for (const auto& c : as_list(v).items) if (total <= cap) child(c);
  } else if (v.kind == Kind::Dict) {
    for (const auto& kv : as_dict(v).items) if (total <= cap) child(kv.second);
  } else {
    return 0;
  }
  add(depth - 1);
  return total;
}

// transformers' tojson: json.dumps(x, ensure_ascii=False, indent=indent, separators=..., sort_keys=...)
Value f_tojson(Interpreter& in, const Value& v, CallArgs& a) {
  if (holds_generator(v)) throw EvalError("Object of type generator is not JSON serializable");
  py::JsonStyle style;
  std::string indent_text;
  const Value* ea = a.get(0, "ensure_ascii");
  if (ea && truthy(*ea)) style.ensure_ascii = true;
  const Value* indent = a.get(1, "indent");
  if (indent && indent->kind != Kind::None) {
    if (indent->kind == Kind::String) indent_text = std::string(indent->s);
    else {
      const auto width = static_cast<std::size_t>(std::max<std::int64_t>(0, int_arg(indent, 0, "indent")));
      in.check_size(width);
      indent_text.assign(width, ' ');
    }
    in.check_size(indent_bytes(v, 1, indent_text.size(), in.limits().max_output_bytes));
    style.indent = &indent_text;
    style.item_separator = ",";
  }
  const Value* seps = a.get(2, "separators");
  if (seps && seps->kind == Kind::List && as_list(*seps).items.size() == 2 &&
      as_list(*seps).items[0].kind == Kind::String && as_list(*seps).items[1].kind == Kind::String) {
    style.item_separator = as_list(*seps).items[0].s;
    style.key_separator = as_list(*seps).items[1].s;
  }
  const Value* sk = a.get(3, "sort_keys");
  style.sort_keys = sk && truthy(*sk);
  std::string out;
  py::append_json(out, v, style);
  in.check_size(out.size());
  return Value::owned(std::move(out));
}

Value f_format(Interpreter& in, const Value& v, CallArgs& a) {
  Value args = make_list(a.positional, true);
  return binary_op(BinOp::Mod, str_value(v), args, in);
}

Value f_count(Interpreter& in, const Value& v, CallArgs& a) { return f_length(in, v, a); }

// ---- tests ----

bool t_defined(Interpreter&, const Value& v, CallArgs&) { return v.kind != Kind::Undefined; }
bool t_undefined(Interpreter&, const Value& v, CallArgs&) { return v.kind == Kind::Undefined; }
bool t_none(Interpreter&, const Value& v, CallArgs&) { return v.kind == Kind::None; }
bool t_string(Interpreter&, const Value& v, CallArgs&) { return v.kind == Kind::String; }
bool t_mapping(Interpreter&, const Value& v, CallArgs&) { return v.kind == Kind::Dict; }
bool t_iterable(Interpreter&, const Value& v, CallArgs&) {
  return v.kind == Kind::List || v.kind == Kind::Dict || v.kind == Kind::String || v.kind == Kind::Undefined;
}
bool t_sequence(Interpreter&, const Value& v, CallArgs&) {
  return v.kind == Kind::List || v.kind == Kind::Dict || v.kind == Kind::String;
}
bool t_number(Interpreter&, const Value& v, CallArgs&) { return v.is_number(); }
bool t_integer(Interpreter&, const Value& v, CallArgs&) { return v.kind == Kind::Int; }
bool t_float(Interpreter&, const Value& v, CallArgs&) { return v.kind == Kind::Float; }
bool t_boolean(Interpreter&, const Value& v, CallArgs&) { return v.kind == Kind::Bool; }
bool t_true(Interpreter&, const Value& v, CallArgs&) { return v.kind == Kind::Bool && v.b; }
bool t_false(Interpreter&, const Value& v, CallArgs&) { return v.kind == Kind::Bool && !v.b; }
bool t_callable(Interpreter&, const Value& v, CallArgs&) { return v.kind == Kind::Callable; }
const Value& need(CallArgs& a, const char* test) {
  const Value* x = a.get(0, "other");
  if (!x) throw EvalError(std::string(test) + "() missing 1 required positional argument");
  return *x;
}
bool t_eq(Interpreter&, const Value& v, CallArgs& a) { return equals(v, need(a, "eq")); }
bool t_ne(Interpreter&, const Value& v, CallArgs& a) { return !equals(v, need(a, "ne")); }
bool t_lt(Interpreter&, const Value& v, CallArgs& a) { return less(v, need(a, "lt")); }
bool t_gt(Interpreter&, const Value& v, CallArgs& a) { return less(need(a, "gt"), v); }
bool t_le(Interpreter&, const Value& v, CallArgs& a) { return !less(need(a, "le"), v); }
bool t_ge(Interpreter&, const Value& v, CallArgs& a) { return !less(v, need(a, "ge")); }
bool t_in(Interpreter&, const Value& v, CallArgs& a) { return contains(need(a, "in"), v); }
bool t_sameas(Interpreter&, const Value& v, CallArgs& a) {
  const Value& o = need(a, "sameas");
  if (v.kind != o.kind) return false;
  if (v.kind == Kind::None || v.kind == Kind::Undefined) return true;
  if (v.kind == Kind::Bool) return v.b == o.b;
  if (v.kind == Kind::Int) return v.i == o.i && v.i >= -5 && v.i <= 256;  // CPython's small-int cache
  if (v.kind == Kind::String) return v.s.data() == o.s.data() && v.s.size() == o.s.size();
  return v.obj == o.obj;
}
std::int64_t int_of(const Value& v, const char* test) {
  if (v.kind == Kind::Int) return v.i;
  if (v.kind == Kind::Bool) return v.b;
  if (v.kind == Kind::Undefined) fail_undefined(v);
  throw EvalError(std::string("unsupported operand type(s) for %: '") + py::type_name(v) + "' and 'int'" + (test ? "" : ""));
}
bool t_odd(Interpreter&, const Value& v, CallArgs&) { return (int_of(v, "odd") % 2) != 0; }
bool t_even(Interpreter&, const Value& v, CallArgs&) { return (int_of(v, "even") % 2) == 0; }
bool t_divisibleby(Interpreter&, const Value& v, CallArgs& a) {
  const std::int64_t d = int_of(need(a, "divisibleby"), nullptr);
  if (d == 0) throw EvalError("integer division or modulo by zero");
  return int_of(v, nullptr) % d == 0;
}
bool t_lower(Interpreter&, const Value& v, CallArgs&) { const std::string s = to_str(v); return py::lower(s) == s; }
bool t_upper(Interpreter&, const Value& v, CallArgs&) { const std::string s = to_str(v); return py::upper(s) == s; }
bool t_filter(Interpreter&, const Value& v, CallArgs&) { return v.kind == Kind::String && find_filter(v.s); }
bool t_test(Interpreter&, const Value& v, CallArgs&) { return v.kind == Kind::String && find_test(v.s); }
bool t_escaped(Interpreter&, const Value&, CallArgs&) { return false; }

}  // namespace

FilterFn find_filter(std::string_view name) {
  static const std::unordered_map<std::string_view, FilterFn> filters = {
      {"abs", f_abs}, {"attr", f_attr}, {"batch", f_batch}, {"capitalize", f_capitalize}, {"center", f_center},
      {"count", f_count}, {"d", f_default}, {"default", f_default}, {"dictsort", f_dictsort}, {"e", f_escape},
      {"escape", f_escape}, {"first", f_first}, {"float", f_float}, {"forceescape", f_forceescape},
      {"format", f_format}, {"indent", f_indent}, {"int", f_int}, {"items", f_items}, {"join", f_join},
      {"last", f_last}, {"length", f_length}, {"list", f_list}, {"lower", f_lower}, {"map", f_map},
      {"max", f_max}, {"min", f_min}, {"reject", f_reject}, {"rejectattr", f_rejectattr},
      {"replace", f_replace}, {"reverse", f_reverse}, {"round", f_round}, {"safe", f_safe},
      {"select", f_select}, {"selectattr", f_selectattr}, {"sort", f_sort}, {"string", f_string},
      {"sum", f_sum}, {"title", f_title}, {"tojson", f_tojson}, {"trim", f_trim}, {"truncate", f_truncate},
      {"unique", f_unique}, {"upper", f_upper}, {"wordcount", f_wordcount},
  };
  const auto it = filters.find(name);
  return it == filters.end() ? nullptr : it->second;
}

TestFn find_test(std::string_view name) {
  static const std::unordered_map<std::string_view, TestFn> tests = {
      {"boolean", t_boolean}, {"callable", t_callable}, {"defined", t_defined}, {"divisibleby", t_divisibleby},
      {"eq", t_eq}, {"equalto", t_eq}, {"==", t_eq}, {"escaped", t_escaped}, {"even", t_even},
      {"false", t_false}, {"filter", t_filter}, {"float", t_float}, {"ge", t_ge}, {">=", t_ge},
      {"gt", t_gt}, {">", t_gt}, {"greaterthan", t_gt}, {"in", t_in}, {"integer", t_integer},
      {"iterable", t_iterable}, {"le", t_le}, {"<=", t_le}, {"lower", t_lower}, {"lt", t_lt}, {"<", t_lt},
      {"lessthan", t_lt}, {"mapping", t_mapping}, {"ne", t_ne}, {"!=", t_ne}, {"none", t_none},
      {"number", t_number}, {"odd", t_odd}, {"sameas", t_sameas}, {"sequence", t_sequence},
      {"string", t_string}, {"test", t_test}, {"true", t_true}, {"undefined", t_undefined},
      {"upper", t_upper},
  };
  const auto it = tests.find(name);
  return it == tests.end() ? nullptr : it->second;
}

}  // namespace overhead::chat
