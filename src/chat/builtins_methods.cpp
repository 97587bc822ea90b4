// Methods of str, dict and list that a sandboxed template may call, and the global functions.
// ImmutableSandboxedEnvironment refuses the mutating methods (list.append, dict.update, ...), so
// templates that call them fail here exactly as they fail under transformers.
#include <chrono>
#include <ctime>
#include <unordered_map>

#include "chat/builtins.hpp"
#include "chat/interpreter.hpp"
#include "chat/pytext.hpp"

namespace overhead::chat {

namespace {

using py::to_str;

const std::string_view kStrMethods[] = {
    "capitalize", "center", "count", "endswith", "find", "format", "index", "isalnum", "isalpha", "isdigit",
    "islower", "isspace", "isupper", "join", "ljust", "lower", "lstrip", "removeprefix", "removesuffix",
    "replace", "rfind", "rjust", "rsplit", "rstrip", "split", "splitlines", "startswith", "strip", "title",
    "upper", "zfill"};
const std::string_view kDictSafe[] = {"copy", "get", "items", "keys", "values"};
const std::string_view kDictUnsafe[] = {"clear", "pop", "popitem", "setdefault", "update"};
// Jinja2's ImmutableSandboxedEnvironment refuses MutableSequence's append/extend/insert/remove/reverse/sort
// but lets pop through.
const std::string_view kListSafe[] = {"copy", "count", "index", "pop"};
const std::string_view kListUnsafe[] = {"append", "clear", "extend", "insert", "remove", "reverse", "sort"};

template <std::size_t N>
bool in_list(const std::string_view (&names)[N], std::string_view n) {
  for (auto x : names)
    if (x == n) return true;
  return false;
}

const Value* arg(CallArgs& a, std::size_t i, std::string_view name) { return a.get(i, name); }

std::string_view str_arg(const Value* v, const char* method) {
  if (!v || v->kind != Kind::String)
    throw EvalError(std::string(method) + "() argument must be str, not " + (v ? py::type_name(*v) : "None"));
  return v->s;
}

// Python str.split / rsplit.
Value split(const Value& self, CallArgs& a, bool from_right) {
  const Value* sep_v = arg(a, 0, "sep");
  const Value* max_v = arg(a, 1, "maxsplit");
  std::int64_t maxsplit = (max_v && max_v->kind == Kind::Int) ? max_v->i : -1;
  const std::string_view s = self.s;
  std::vector<Value> parts;
  auto piece = [&](std::size_t b, std::size_t e) {
    Value v = self;
    v.s = s.substr(b, e - b);
    return v;
  };
  if (!sep_v || sep_v->kind == Kind::None) {
    // Runs of whitespace separate; leading/trailing whitespace gives no empty parts.
    std::vector<std::pair<std::size_t, std::size_t>> words;
    std::size_t i = 0;
    while (i < s.size()) {
      std::size_t j = i;
      while (j < s.size()) {
        std::size_t k = j;
        if (!py::is_space(py::next_code_point(s, k))) break;
        j = k;
      }
      if (j >= s.size()) break;
      std::size_t e = j;
      while (e < s.size()) {
        std::size_t k = e;
        if (py::is_space(py::next_code_point(s, k))) break;
        e = k;
      }
      words.emplace_back(j, e);
      i = e;
    }
    if (maxsplit < 0 || static_cast<std::size_t>(maxsplit) + 1 >= words.size()) {
      for (auto [b, e] : words) parts.push_back(piece(b, e));
    } else if (!from_right) {
      for (std::size_t w = 0; w < static_cast<std::size_t>(maxsplit); ++w) parts.push_back(piece(words[w].first, words[w].second));
      const std::string_view rest = py::strip(s.substr(words[static_cast<std::size_t>(maxsplit)].first), false, true);
      Value v = self;
      v.s = rest;
      parts.push_back(v);
    } else {
      const std::size_t keep = words.size() - static_cast<std::size_t>(maxsplit);
      Value head = self;
      head.s = py::strip(s.substr(0, words[keep - 1].second), true, false);
      parts.push_back(head);
      for (std::size_t w = keep; w < words.size(); ++w) parts.push_back(piece(words[w].first, words[w].second));
    }
    return make_list(std::move(parts));
  }
  const std::string_view sep = str_arg(sep_v, "split");
  if (sep.empty()) throw EvalError("empty separator");
  if (!from_right) {
    std::size_t pos = 0;
    while (maxsplit != 0) {
      const std::size_t hit = s.find(sep, pos);
      if (hit == std::string_view::npos) break;
      parts.push_back(piece(pos, hit));
      pos = hit + sep.size();
      --maxsplit;
    }
    parts.push_back(piece(pos, s.size()));
    return make_list(std::move(parts));
  }
  std::vector<Value> rev;
  std::size_t end = s.size();
  while (maxsplit != 0 && end >= sep.size()) {
    const std::size_t hit = s.rfind(sep, end - sep.size());
    if (hit == std::string_view::npos) break;
    rev.push_back(piece(hit + sep.size(), end));
    end = hit;
    --maxsplit;
  }
  rev.push_back(piece(0, end));
  parts.assign(rev.rbegin(), rev.rend());
  return make_list(std::move(parts));
}

bool prefix_test(const Value& self, const Value* x, bool prefix) {
  if (!x) throw EvalError("startswith() takes at least 1 argument (0 given)");
  auto one = [&](std::string_view p) {
    if (p.size() > self.s.size()) return false;
    return prefix ? self.s.substr(0, p.size()) == p : self.s.substr(self.s.size() - p.size()) == p;
  };
  if (x->kind == Kind::String) return one(x->s);
  if (x->kind == Kind::List && as_list(*x).is_tuple) {
    for (const auto& p : as_list(*x).items)
      if (p.kind == Kind::String && one(p.s)) return true;
    return false;
  }
  throw EvalError(std::string(prefix ? "startswith" : "endswith") +
                  " first arg must be str or a tuple of str, not " + py::type_name(*x));
}

// str.format with auto/explicit/named fields, !r/!s and a simple [fill][align][width][.prec][type] spec.
// Width and precision are read saturating and checked against the render's size bound before anything
// is allocated.
std::string format_spec(const Value& v, std::string_view spec, Interpreter& in) {
  std::string body;
  std::size_t i = 0;
  char fill = ' ', align = 0;
  if (spec.size() >= 2 && (spec[1] == '<' || spec[1] == '>' || spec[1] == '^')) {
    fill = spec[0];
    align = spec[1];
    i = 2;
  } else if (!spec.empty() && (spec[0] == '<' || spec[0] == '>' || spec[0] == '^')) {
    align = spec[0];
    i = 1;
  }
  const auto read_count = [&] {
    std::size_t n = 0;
    while (i < spec.size() && spec[i] >= '0' && spec[i] <= '9') {
      const auto d = static_cast<std::size_t>(spec[i++] - '0');
      n = n > (SIZE_MAX - d) / 10 ? SIZE_MAX : n * 10 + d;
    }
    in.check_size(n);
    return n;
  };
  const std::size_t width = read_count();
  std::int64_t prec = -1;
  if (i < spec.size() && spec[i] == '.') {
    ++i;
    prec = static_cast<std::int64_t>(read_count());
  }
  const char type = i < spec.size() ? spec[i] : 0;
  if (type == 'f' || type == 'F' || type == 'e' || type == 'g' || type == '%') {
    if (!v.is_number()) throw EvalError("Unknown format code '" + std::string(1, type) + "' for object of type '" + py::type_name(v) + "'");
    const double x = v.kind == Kind::Float ? v.f : static_cast<double>(v.kind == Kind::Int ? v.i : v.b);
    const std::string f = "%." + std::to_string(prec < 0 ? 6 : prec) + (type == '%' ? 'f' : type);
    const double shown = type == '%' ? x * 100 : x;
    const int n = std::snprintf(nullptr, 0, f.c_str(), shown);
    if (n < 0) throw EvalError("bad format specification '" + std::string(spec) + "'");
    body.assign(static_cast<std::size_t>(n), '\0');
    std::snprintf(body.data(), body.size() + 1, f.c_str(), shown);
    if (type == '%') body += "%";
  } else if (type == 'd') {
    if (v.kind != Kind::Int && v.kind != Kind::Bool) throw EvalError("Unknown format code 'd' for object of type '" + std::string(py::type_name(v)) + "'");
    body = to_str(Value::integer(v.kind == Kind::Int ? v.i : v.b));
  } else {
    body = to_str(v);
    if (prec >= 0 && v.kind == Kind::String) {
      std::size_t k = 0, n = 0;
      while (k < body.size() && n < static_cast<std::size_t>(prec)) {
        py::next_code_point(body, k);
        ++n;
      }
      body.resize(k);
    }
  }
  const std::size_t len = py::code_point_count(body);
  if (width > len) {
    const std::size_t pad = width - len;
    if (!align) align = v.is_number() ? '>' : '<';
    if (align == '<') body += std::string(pad, fill);
    else if (align == '>') body = std::string(pad, fill) + body;
    else body = std::string(pad / 2, fill) + body + std::string(pad - pad / 2, fill);
  }
  return body;
}

Value str_format(Interpreter& in, const Value& self, CallArgs& a) {
  const std::string_view f = self.s;
  std::string out;
  std::size_t auto_index = 0;
  for (std::size_t i = 0; i < f.size(); ++i) {
    const char c = f[i];
    if (c == '}') {
      if (i + 1 < f.size() && f[i + 1] == '}') { out.push_back('}'); ++i; continue; }
      throw EvalError("Single '}' encountered in format string");
    }
    if (c != '{') { out.push_back(c); continue; }
    if (i + 1 < f.size() && f[i + 1] == '{') { out.push_back('{'); ++i; continue; }
    const std::size_t close = f.find('}', i);
    if (close == std::string_view::npos) throw EvalError("Single '{' encountered in format string");
    std::string_view field = f.substr(i + 1, close - i - 1);
    std::string_view spec, conv;
    if (const auto colon = field.find(':'); colon != std::string_view::npos) {
      spec = field.substr(colon + 1);
      field = field.substr(0, colon);
    }
    if (const auto bang = field.find('!'); bang != std::string_view::npos) {
      conv = field.substr(bang + 1);
      field = field.substr(0, bang);
    }
    Value v;
    if (field.empty()) {
      if (auto_index >= a.positional.size())
        throw EvalError("Replacement index " + std::to_string(auto_index) + " out of range for positional args tuple");
      v = a.positional[auto_index++];
    } else if (field[0] >= '0' && field[0] <= '9') {
      const std::size_t idx = static_cast<std::size_t>(std::stoul(std::string(field)));
      if (idx >= a.positional.size())
        throw EvalError("Replacement index " + std::to_string(idx) + " out of range for positional args tuple");
      v = a.positional[idx];
    } else {
      const std::size_t dot = field.find_first_of(".[");
      const std::string_view key = field.substr(0, dot);
      const Value* kv = nullptr;
      for (const auto& [k, val] : a.keyword)
        if (k == key) kv = &val;
      if (!kv) throw EvalError("'" + std::string(key) + "'");
      v = *kv;
      if (dot != std::string_view::npos && field[dot] == '.') v = in.getattr(v, field.substr(dot + 1));
    }
    if (conv == "r") {
      std::string r;
      py::append_repr(r, v);
      v = Value::owned(std::move(r));
    }
    out += spec.empty() ? to_str(v) : format_spec(v, spec, in);
    i = close;
  }
  return Value::owned(std::move(out));
}

Value index_or_find(const Value& self, CallArgs& a, bool reverse, bool raise) {
  const std::string_view sub = str_arg(arg(a, 0, "sub"), "find");
  const std::size_t hit = reverse ? self.s.rfind(sub) : self.s.find(sub);
  if (hit == std::string_view::npos) {
    if (raise) throw EvalError("substring not found");
    return Value::integer(-1);
  }
  return Value::integer(static_cast<std::int64_t>(py::code_point_count(self.s.substr(0, hit))));
}

template <typename Pred>
bool all_chars(std::string_view s, Pred p) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size();)
    if (!p(py::next_code_point(s, i))) return false;
  return true;
}

bool call_str_method(Interpreter& in, const Value& self, std::string_view name, CallArgs& a, Value& r) {
  auto sub = [&](std::string_view part) {
    Value v = self;
    v.s = part;
    return v;
  };
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const bool left = name != "rstrip", right = name != "lstrip";
    const Value* chars = arg(a, 0, "chars");
    if (chars && chars->kind == Kind::String) r = sub(py::strip_chars(self.s, chars->s, left, right));
    else r = sub(py::strip(self.s, left, right));
  } else if (name == "split") {
    r = split(self, a, false);
  } else if (name == "rsplit") {
    r = split(self, a, true);
  } else if (name == "splitlines") {
    std::vector<Value> lines;
    std::size_t start = 0;
    const std::string_view s = self.s;
    const bool keep = arg(a, 0, "keepends") && truthy(*arg(a, 0, "keepends"));
    for (std::size_t i = 0; i < s.size();) {
      const std::size_t at = i;
      const char32_t cp = py::next_code_point(s, i);
      if (!(cp == '\n' || cp == '\r' || cp == 0x0B || cp == 0x0C || (cp >= 0x1C && cp <= 0x1E) || cp == 0x85 ||
            cp == 0x2028 || cp == 0x2029))
        continue;
      if (cp == '\r' && i < s.size() && s[i] == '\n') ++i;
      lines.push_back(sub(s.substr(start, (keep ? i : at) - start)));
      start = i;
    }
    if (start < s.size()) lines.push_back(sub(s.substr(start)));
    r = make_list(std::move(lines));
  } else if (name == "startswith" || name == "endswith") {
    r = Value::boolean(prefix_test(self, arg(a, 0, "prefix"), name == "startswith"));
  } else if (name == "upper") {
    r = Value::owned(py::upper(self.s));
  } else if (name == "lower") {
    r = Value::owned(py::lower(self.s));
  } else if (name == "title") {
    // Python's str.title: a cased letter after an uncased character starts a word.
    std::string out;
    bool prev_cased = false;
    for (std::size_t i = 0; i < self.s.size();) {
      const char32_t cp = py::next_code_point(self.s, i);
      const bool cased = py::to_upper(cp) != cp || py::to_lower(cp) != cp;
      py::append_utf8(out, cased ? (prev_cased ? py::to_lower(cp) : py::to_upper(cp)) : cp);
      prev_cased = cased;
    }
    r = Value::owned(std::move(out));
  } else if (name == "capitalize") {
    std::string out;
    std::size_t i = 0;
    if (!self.s.empty()) py::append_utf8(out, py::to_upper(py::next_code_point(self.s, i)));
    out += py::lower(self.s.substr(i));
    r = Value::owned(std::move(out));
  } else if (name == "replace") {
    CallArgs copy = a;
    r = in.apply_filter("replace", self, copy);
  } else if (name == "format") {
    r = str_format(in, self, a);
  } else if (name == "join") {
    const Value* it = arg(a, 0, "iterable");
    if (!it) throw EvalError("join() takes exactly one argument (0 given)");
    std::string out;
    bool first = true;
    for (const auto& v : iterate(*it)) {
      if (v.kind != Kind::String)
        throw EvalError(std::string("sequence item: expected str instance, ") + py::type_name(v) + " found");
      if (!first) out.append(self.s);
      first = false;
      out.append(v.s);
      in.check_size(out.size());
    }
    r = Value::owned(std::move(out));
  } else if (name == "find" || name == "rfind" || name == "index") {
    r = index_or_find(self, a, name == "rfind", name == "index");
  } else if (name == "count") {
    const std::string_view needle = str_arg(arg(a, 0, "sub"), "count");
    std::int64_t n = 0;
    if (needle.empty()) {
      n = static_cast<std::int64_t>(py::code_point_count(self.s)) + 1;
    } else {
      for (std::size_t p = self.s.find(needle); p != std::string_view::npos; p = self.s.find(needle, p + needle.size())) ++n;
    }
    r = Value::integer(n);
  } else if (name == "isdigit") {
    r = Value::boolean(all_chars(self.s, [](char32_t c) { return c >= '0' && c <= '9'; }));
  } else if (name == "isalpha") {
    r = Value::boolean(all_chars(self.s, [](char32_t c) { return py::is_alnum(c) && !(c >= '0' && c <= '9'); }));
  } else if (name == "isalnum") {
    r = Value::boolean(all_chars(self.s, [](char32_t c) { return py::is_alnum(c); }));
  } else if (name == "isspace") {
    r = Value::boolean(all_chars(self.s, [](char32_t c) { return py::is_space(c); }));
  } else if (name == "islower" || name == "isupper") {
    bool any_cased = false, ok = true;
    for (std::size_t i = 0; i < self.s.size();) {
      const char32_t cp = py::next_code_point(self.s, i);
      const bool is_up = py::to_lower(cp) != cp, is_low = py::to_upper(cp) != cp;
      if (is_up || is_low) any_cased = true;
      if (name == "islower" ? is_up : is_low) ok = false;
    }
    r = Value::boolean(any_cased && ok);
  } else if (name == "removeprefix" || name == "removesuffix") {
    const std::string_view x = str_arg(arg(a, 0, "prefix"), std::string(name).c_str());
    std::string_view s = self.s;
    if (name == "removeprefix" && s.substr(0, x.size()) == x) s.remove_prefix(x.size());
    else if (name == "removesuffix" && !x.empty() && s.size() >= x.size() && s.substr(s.size() - x.size()) == x)
      s.remove_suffix(x.size());
    r = sub(s);
  } else if (name == "center" || name == "ljust" || name == "rjust" || name == "zfill") {
    const Value* w = arg(a, 0, "width");
    if (!w || w->kind != Kind::Int) throw EvalError(std::string(name) + "() argument must be int");
    const Value* fill_v = arg(a, 1, "fillchar");
    const std::string fill = name == "zfill" ? "0" : (fill_v && fill_v->kind == Kind::String ? std::string(fill_v->s) : " ");
    const auto len = static_cast<std::int64_t>(py::code_point_count(self.s));
    if (w->i <= len) {
      r = self;
    } else {
      in.check_size(static_cast<std::size_t>(w->i));
      const std::int64_t pad = w->i - len;
      std::int64_t left = name == "rjust" || name == "zfill" ? pad : name == "ljust" ? 0 : pad / 2 + (pad & w->i & 1);
      std::string out;
      for (std::int64_t k = 0; k < left; ++k) out += fill;
      out.append(self.s);
      for (std::int64_t k = 0; k < pad - left; ++k) out += fill;
      r = Value::owned(std::move(out));
    }
  } else {
    return false;
  }
  return true;
}

}  // namespace

bool has_method(const Value& obj, std::string_view name, bool& unsafe) {
  unsafe = false;
  switch (obj.kind) {
    case Kind::String: return in_list(kStrMethods, name);
    case Kind::Dict:
      if (in_list(kDictSafe, name)) return true;
      unsafe = in_list(kDictUnsafe, name);
      return unsafe;
    case Kind::List:
      if (in_list(kListSafe, name)) return true;
      unsafe = in_list(kListUnsafe, name);
      return unsafe;
    default: return false;
  }
}

bool call_method(Interpreter& in, const Value& obj, std::string_view name, CallArgs& a, Value& r) {
  if (obj.kind == Kind::String) return call_str_method(in, obj, name, a, r);
  if (obj.kind == Kind::Dict) {
    const auto& d = as_dict(obj);
    if (name == "items") {
      std::vector<Value> out;
      out.reserve(d.items.size());
      for (const auto& [k, v] : d.items) out.push_back(make_list({k, v}, true));
      r = make_list(std::move(out));
    } else if (name == "keys" || name == "values") {
      std::vector<Value> out;
      for (const auto& [k, v] : d.items) out.push_back(name == "keys" ? k : v);
      r = make_list(std::move(out));
    } else if (name == "get") {
      const Value* key = arg(a, 0, "key");
      if (!key) throw EvalError("get expected at least 1 argument, got 0");
      const Value* dflt = arg(a, 1, "default");
      r = dflt ? *dflt : Value::none();
      for (const auto& [k, v] : d.items)
        if (equals(k, *key)) {
          r = v;
          break;
        }
    } else if (name == "copy") {
      auto c = std::make_shared<DictObject>(d);
      r = make_dict(std::move(c));
    } else {
      return false;
    }
    return true;
  }
  if (obj.kind == Kind::List) {
    const auto& l = as_list(obj);
    const Value* x = arg(a, 0, "value");
    if (name == "count") {
      if (!x) throw EvalError("count() takes exactly one argument (0 given)");
      std::int64_t n = 0;
      for (const auto& v : l.items) n += equals(v, *x);
      r = Value::integer(n);
    } else if (name == "index") {
      if (!x) throw EvalError("index expected at least 1 argument, got 0");
      for (std::size_t i = 0; i < l.items.size(); ++i)
        if (equals(l.items[i], *x)) {
          r = Value::integer(static_cast<std::int64_t>(i));
          return true;
        }
      std::string rep;
      py::append_repr(rep, *x);
      throw EvalError(rep + " is not in list");
    } else if (name == "copy") {
      r = make_list(l.items);
    } else if (name == "pop" && !l.is_tuple) {
      if (l.from_input) throw EvalError("pop() on a list from the input is not supported (the input is shared)");
      auto& items = static_cast<ListObject&>(*obj.obj).items;
      const Value* at = arg(a, 0, "index");
      if (at && at->kind != Kind::Int && at->kind != Kind::Bool)
        throw EvalError(std::string("'") + py::type_name(*at) + "' object cannot be interpreted as an integer");
      if (items.empty()) throw EvalError("pop from empty list");
      std::int64_t i = at ? (at->kind == Kind::Int ? at->i : at->b) : -1;
      const auto n = static_cast<std::int64_t>(items.size());
      if (i < 0 && i >= -n) i += n;
      if (i < 0 || i >= n) throw EvalError("pop index out of range");
      r = items[static_cast<std::size_t>(i)];
      items.erase(items.begin() + i);
    } else {
      return false;
    }
    return true;
  }
  return false;
}

// ---- globals ----

namespace {

Value callable(std::string name, std::function<Value(Interpreter&, CallArgs&)> fn) {
  auto c = std::make_shared<CallableObject>();
  c->name = std::move(name);
  c->fn = std::move(fn);
  Value v;
  v.kind = Kind::Callable;
  v.obj = std::move(c);
  return v;
}

Value g_range(Interpreter& in, CallArgs& a) {
  if (!a.keyword.empty()) throw EvalError("range() takes no keyword arguments");
  std::int64_t args[3];
  const std::size_t n = a.positional.size();
  if (n < 1 || n > 3) throw EvalError("range expected at least 1 argument, got " + std::to_string(n));
  for (std::size_t i = 0; i < n; ++i) {
    const Value& v = a.positional[i];
    if (v.kind == Kind::Int) args[i] = v.i;
    else if (v.kind == Kind::Bool) args[i] = v.b;
    else if (v.kind == Kind::Undefined) fail_undefined(v);
    else throw EvalError(std::string("'") + py::type_name(v) + "' object cannot be interpreted as an integer");
  }
  const std::int64_t start = n == 1 ? 0 : args[0];
  const std::int64_t stop = n == 1 ? args[0] : args[1];
  const std::int64_t step = n == 3 ? args[2] : 1;
  if (step == 0) throw EvalError("range() arg 3 must not be zero");
  // In 128 bits: stop - start + step - 1 and i * step overflow 64 bits for arguments near the
  // ends of the range (Python's integers do not), e.g. range(-(2**63-1), 2**63-1, 2**63-1).
  __extension__ using Wide = __int128;
  Wide count = 0;
  if (step > 0 && stop > start) count = (Wide{stop} - start + step - 1) / step;
  else if (step < 0 && stop < start) count = (Wide{start} - stop - step - 1) / -Wide{step};
  if (count > 100000) throw EvalError("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  in.count_iterations(static_cast<std::uint64_t>(count));
  std::vector<Value> items;
  items.reserve(static_cast<std::size_t>(count));
  for (Wide i = 0; i < count; ++i) items.push_back(Value::integer(static_cast<std::int64_t>(start + i * step)));
  return make_list(std::move(items));
}

Value g_dict(Interpreter&, CallArgs& a) {
  auto d = std::make_shared<DictObject>();
  for (const auto& p : a.positional) {
    if (p.kind == Kind::Dict) {
      for (const auto& [k, v] : as_dict(p).items) d->set(k, v);
    } else {
      for (const auto& pair : iterate(p)) {
        const auto kv = iterate(pair);
        if (kv.size() != 2) throw EvalError("dictionary update sequence element has wrong length");
        d->set(kv[0], kv[1]);
      }
    }
  }
  for (const auto& [k, v] : a.keyword) d->set(Value::owned(std::string(k)), v);
  return make_dict(std::move(d));
}

Value g_raise_exception(Interpreter&, CallArgs& a) {
  const Value* m = a.get(0, "message");
  throw EvalError(m ? to_str(*m) : std::string());
}

Value g_strftime_now(Interpreter& in, CallArgs& a) {
  const Value* f = a.get(0, "format");
  if (!f || f->kind != Kind::String) throw EvalError("strftime() argument 1 must be str");
  std::tm tm{};
  if (in.pinned_date()) {
    const std::string& d = *in.pinned_date();
    int y = 0, mo = 0, da = 0;
    if (std::sscanf(d.c_str(), "%d-%d-%d", &y, &mo, &da) != 3) throw EvalError("bad pinned date '" + d + "'");
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = da;
    tm.tm_isdst = -1;
    std::tm copy = tm;
    std::mktime(&copy);  // fills tm_wday / tm_yday
    tm.tm_wday = copy.tm_wday;
    tm.tm_yday = copy.tm_yday;
  } else {
    const std::time_t now = std::time(nullptr);
    localtime_r(&now, &tm);
  }
  const std::string fmt(f->s);
  if (fmt.empty()) return Value::borrowed("");
  std::string out(fmt.size() * 4 + 64, '\0');
  const std::size_t n = std::strftime(out.data(), out.size(), fmt.c_str(), &tm);
  out.resize(n);
  return Value::owned(std::move(out));
}

Value g_joiner(Interpreter&, CallArgs& a) {
  const Value* sep = a.get(0, "sep");
  const std::string s = sep ? to_str(*sep) : ", ";
  auto used = std::make_shared<bool>(false);
  return callable("joiner", [s, used](Interpreter&, CallArgs&) -> Value {
    if (!*used) {
      *used = true;
      return Value::borrowed("");
    }
    return Value::owned(s);
  });
}

}  // namespace

Value find_global(std::string_view name) {
  static const std::unordered_map<std::string_view, Value> globals = {
      {"range", callable("range", g_range)},
      {"dict", callable("dict", g_dict)},
      {"namespace", callable("namespace", [](Interpreter&, CallArgs& a) { return make_namespace(a); })},
      {"raise_exception", callable("raise_exception", g_raise_exception)},
      {"strftime_now", callable("strftime_now", g_strftime_now)},
      {"joiner", callable("joiner", g_joiner)},
  };
  const auto it = globals.find(name);
  if (it == globals.end()) return Value::undefined(name);
  return it->second;
}

}  // namespace overhead::chat
