// Python's operators over Values: truthiness, ==, <, + - * / // % ** ~, `in`, len() and iteration.
#include <cmath>
#include <cstdio>

#include "chat/builtins.hpp"
#include "chat/interpreter.hpp"
#include "chat/pytext.hpp"

namespace overhead::chat {

[[noreturn]] void fail_undefined(const Value& u) {
  std::string m;
  switch (u.why) {
    case UndefinedWhy::MissingName:
      py::append_repr(m, Value::borrowed(u.s));
      m += " is undefined";
      break;
    case UndefinedWhy::MissingAttribute:
      py::append_repr(m, Value::borrowed(u.owner_type ? u.owner_type : "object"));
      m += " has no attribute ";
      py::append_repr(m, Value::borrowed(u.s));
      break;
    case UndefinedWhy::MissingElement:
      m += u.owner_type ? u.owner_type : "object";
      m += " has no element ";
      m += u.s;  // already a repr
      break;
    case UndefinedWhy::Unsafe:
      m = "access to attribute '" + std::string(u.s) + "' of '" + (u.owner_type ? u.owner_type : "object") +
          "' object is unsafe.";
      break;
    case UndefinedWhy::Hint: m = std::string(u.s); break;
  }
  throw EvalError(m);
}

bool truthy(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined:
    case Kind::None: return false;
    case Kind::Bool: return v.b;
    case Kind::Int: return v.i != 0;
    case Kind::Float: return v.f != 0;
    case Kind::String: return !v.s.empty();
    case Kind::List: return !as_list(v).items.empty();
    case Kind::Dict: return !as_dict(v).items.empty();
    default: return true;
  }
}

namespace {
double as_double(const Value& v) {
  return v.kind == Kind::Float ? v.f : v.kind == Kind::Int ? static_cast<double>(v.i) : (v.b ? 1.0 : 0.0);
}
std::int64_t as_int(const Value& v) { return v.kind == Kind::Int ? v.i : (v.b ? 1 : 0); }
bool is_intlike(const Value& v) { return v.kind == Kind::Int || v.kind == Kind::Bool; }
}  // namespace

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (is_intlike(a) && is_intlike(b)) return as_int(a) == as_int(b);
    return as_double(a) == as_double(b);
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::Undefined:
    case Kind::None: return true;
    case Kind::String: return a.s == b.s;
    case Kind::List: {
      const auto& x = as_list(a);
      const auto& y = as_list(b);
      if (x.is_tuple != y.is_tuple || x.items.size() != y.items.size()) return false;
      for (std::size_t i = 0; i < x.items.size(); ++i)
        if (!equals(x.items[i], y.items[i])) return false;
      return true;
    }
    case Kind::Dict: {
      const auto& x = as_dict(a);
      const auto& y = as_dict(b);
      if (x.items.size() != y.items.size()) return false;
      for (const auto& [k, v] : x.items) {
        bool found = false;
        for (const auto& [k2, v2] : y.items)
          if (equals(k, k2)) {
            if (!equals(v, v2)) return false;
            found = true;
            break;
          }
        if (!found) return false;
      }
      return true;
    }
    default: return a.obj == b.obj;
  }
}

bool less(const Value& a, const Value& b) {
  if (a.kind == Kind::Undefined) fail_undefined(a);
  if (b.kind == Kind::Undefined) fail_undefined(b);
  if (a.is_number() && b.is_number()) {
    if (is_intlike(a) && is_intlike(b)) return as_int(a) < as_int(b);
    return as_double(a) < as_double(b);
  }
  if (a.kind == Kind::String && b.kind == Kind::String) return a.s < b.s;
  if (a.kind == Kind::List && b.kind == Kind::List && as_list(a).is_tuple == as_list(b).is_tuple) {
    const auto& x = as_list(a).items;
    const auto& y = as_list(b).items;
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i)
      if (!equals(x[i], y[i])) return less(x[i], y[i]);
    return x.size() < y.size();
  }
  throw EvalError(std::string("'<' not supported between instances of '") + py::type_name(a) + "' and '" +
                  py::type_name(b) + "'");
}

namespace {
[[noreturn]] void unsupported(const char* op, const Value& a, const Value& b) {
  throw EvalError(std::string("unsupported operand type(s) for ") + op + ": '" + py::type_name(a) + "' and '" +
                  py::type_name(b) + "'");
}

Value repeat(const Value& seq, std::int64_t times, Interpreter& in) {
  if (times < 0) times = 0;
  if (seq.kind == Kind::String) {
    in.check_size(seq.s.size() * static_cast<std::size_t>(times));
    std::string out;
    out.reserve(seq.s.size() * static_cast<std::size_t>(times));
    for (std::int64_t i = 0; i < times; ++i) out.append(seq.s);
    return Value::owned(std::move(out));
  }
  const auto& l = as_list(seq);
  in.check_size(l.items.size() * static_cast<std::size_t>(times) * sizeof(Value));
  std::vector<Value> out;
  for (std::int64_t i = 0; i < times; ++i) out.insert(out.end(), l.items.begin(), l.items.end());
  return make_list(std::move(out), l.is_tuple);
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  if (a == INT64_MIN && b == -1) throw EvalError("integer overflow");
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Reads a run of decimal digits as a saturating count, so a width like 99999999999999999999 stays large
// (and is refused by the size bound) instead of wrapping.
std::size_t read_count(std::string_view fmt, std::size_t& i) {
  std::size_t n = 0;
  while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9') {
    const auto d = static_cast<std::size_t>(fmt[i++] - '0');
    n = n > (SIZE_MAX - d) / 10 ? SIZE_MAX : n * 10 + d;
  }
  return n;
}

// snprintf into a string of exactly the needed size; the caller has already bounded width and precision.
template <class T>
std::string c_format(const std::string& spec, T x) {
  const int n = std::snprintf(nullptr, 0, spec.c_str(), x);
  if (n < 0) throw EvalError("bad format specification '" + spec + "'");
  std::string out(static_cast<std::size_t>(n), '\0');
  std::snprintf(out.data(), out.size() + 1, spec.c_str(), x);
  return out;
}

// One %d %i %o %x %X conversion as Python's printf-style formatting does it, which differs from C's:
// a negative number is a sign and its magnitude in every base, '#' writes 0o / 0x / 0X, and the '0'
// flag pads after the sign and prefix even with a precision. `precision` is the minimum digits.
std::string python_int_format(const std::string& flags, std::size_t width, std::size_t precision, char conv,
                              const Value& v) {
  std::int64_t x = 0;
  if (v.kind == Kind::Int || v.kind == Kind::Bool) {
    x = as_int(v);
  } else if (v.kind == Kind::Float && (conv == 'd' || conv == 'i')) {
    if (!(std::fabs(v.f) < 9.2e18)) throw EvalError("%d format: the number is out of the supported integer range");
    x = static_cast<std::int64_t>(v.f);  // truncation toward zero, as int() does
  } else {
    throw EvalError(std::string("%") + conv + " format: " +
                    (conv == 'd' || conv == 'i' ? "a real number" : "an integer") + " is required, not " +
                    py::type_name(v));
  }
  const bool negative = x < 0;
  std::uint64_t magnitude = negative ? ~static_cast<std::uint64_t>(x) + 1 : static_cast<std::uint64_t>(x);
  const unsigned base = conv == 'o' ? 8 : (conv == 'x' || conv == 'X') ? 16 : 10;
  const char* symbols = conv == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string digits;
  do {
    digits.insert(digits.begin(), symbols[magnitude % base]);
    magnitude /= base;
  } while (magnitude != 0);
  if (digits.size() < precision) digits.insert(0, precision - digits.size(), '0');
  std::string head = negative ? "-" : flags.find('+') != std::string::npos ? "+" : flags.find(' ') != std::string::npos ? " " : "";
  if (flags.find('#') != std::string::npos && base != 10) head += conv == 'o' ? "0o" : conv == 'x' ? "0x" : "0X";
  const std::size_t length = head.size() + digits.size();
  if (width <= length) return head + digits;
  if (flags.find('-') != std::string::npos) return head + digits + std::string(width - length, ' ');
  if (flags.find('0') != std::string::npos) return head + std::string(width - length, '0') + digits;
  return std::string(width - length, ' ') + head + digits;
}

// printf-style `str % args` as Python does it, for %s %r %d %i %o %x %X %f %e %g %%. Width and precision are
// checked against the render's size bound before anything is allocated; %s and %r pad and cut by code points.
Value percent_format(std::string_view fmt, const Value& args, Interpreter& in) {
  std::vector<Value> list;
  if (args.kind == Kind::List && as_list(args).is_tuple) list = as_list(args).items;
  else list.push_back(args);
  std::size_t next = 0;
  std::string out;
  for (std::size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out.push_back(fmt[i]);
      continue;
    }
    if (++i >= fmt.size()) throw EvalError("incomplete format");
    std::string flags;
    while (i < fmt.size() && std::string_view("-+ #0").find(fmt[i]) != std::string_view::npos) flags.push_back(fmt[i++]);
    const std::size_t width = read_count(fmt, i);
    bool has_precision = false;
    std::size_t precision = 0;
    if (i < fmt.size() && fmt[i] == '.') {
      ++i;
      has_precision = true;
      precision = read_count(fmt, i);
    }
    if (i >= fmt.size()) throw EvalError("incomplete format");
    const char c = fmt[i];
    if (c == '%') {
      out.push_back('%');
      continue;
    }
    in.check_size(width);
    in.check_size(precision);
    if (next >= list.size()) throw EvalError("not enough arguments for format string");
    const Value& v = list[next++];
    std::string piece;
    if (c == 's' || c == 'r') {
      if (c == 's') py::append_str(piece, v);
      else py::append_repr(piece, v);
      std::size_t chars = py::code_point_count(piece);
      if (has_precision && precision < chars) {
        std::size_t at = 0;
        for (std::size_t k = 0; k < precision; ++k) py::next_code_point(piece, at);
        piece.resize(at);
        chars = precision;
      }
      if (width > chars) {
        const std::string pad(width - chars, ' ');
        piece = flags.find('-') != std::string::npos ? piece + pad : pad + piece;
      }
    } else {
      std::string spec = "%" + flags;
      if (width > 0) spec += std::to_string(width);
      if (has_precision) spec += "." + std::to_string(precision);
      if (c == 'd' || c == 'i' || c == 'x' || c == 'X' || c == 'o') {
        piece = python_int_format(flags, width, has_precision ? precision : 0, c, v);
      } else if (c == 'f' || c == 'F' || c == 'e' || c == 'E' || c == 'g' || c == 'G') {
        if (!v.is_number()) throw EvalError("must be real number, not " + std::string(py::type_name(v)));
        spec.push_back(c);
        piece = c_format(spec, as_double(v));
      } else {
        throw EvalError(std::string("unsupported format character '") + c + "'");
      }
    }
    out += piece;
    in.check_size(out.size());
  }
  if (next < list.size()) throw EvalError("not all arguments converted during string formatting");
  return Value::owned(std::move(out));
}
}  // namespace

Value binary_op(BinOp op, const Value& a, const Value& b, Interpreter& in) {
  if (op == BinOp::Concat) {
    std::string s;
    py::append_str(s, a);
    py::append_str(s, b);
    in.check_size(s.size());
    return Value::owned(std::move(s));
  }
  if (a.kind == Kind::Undefined) fail_undefined(a);
  if (b.kind == Kind::Undefined) fail_undefined(b);
  const bool nums = a.is_number() && b.is_number();
  const bool ints = nums && is_intlike(a) && is_intlike(b);
  switch (op) {
    case BinOp::Add:
      if (ints) {
        std::int64_t r;
        if (__builtin_add_overflow(as_int(a), as_int(b), &r)) throw EvalError("integer overflow");
        return Value::integer(r);
      }
      if (nums) return Value::floating(as_double(a) + as_double(b));
      if (a.kind == Kind::String && b.kind == Kind::String && (a.markup || b.markup)) {
        // Markup.__add__ / __radd__: the plain side is escaped and the sum is Markup.
        std::string s;
        if (a.markup) s.append(a.s);
        else append_html_escaped(s, a.s);
        if (b.markup) s.append(b.s);
        else append_html_escaped(s, b.s);
        in.check_size(s.size());
        Value m = Value::owned(std::move(s));
        m.markup = true;
        return m;
      }
      if (a.kind == Kind::String && b.kind == Kind::String) {
        in.check_size(a.s.size() + b.s.size());
        std::string s;
        s.reserve(a.s.size() + b.s.size() + 64);  // room for the usual `+ '<end_of_turn>'` that follows
        s.append(a.s);
        s.append(b.s);
        return Value::owned(std::move(s));
      }
      if (a.kind == Kind::List && b.kind == Kind::List && as_list(a).is_tuple == as_list(b).is_tuple) {
        // A list counts against the size bound, so repeated doubling stops instead of exhausting memory.
        in.check_size((as_list(a).items.size() + as_list(b).items.size()) * sizeof(Value));
        std::vector<Value> items = as_list(a).items;
        items.insert(items.end(), as_list(b).items.begin(), as_list(b).items.end());
        return make_list(std::move(items), as_list(a).is_tuple);
      }
      if (a.kind == Kind::String)
        throw EvalError(std::string("can only concatenate str (not \"") + py::type_name(b) + "\") to str");
      if (a.kind == Kind::List)
        throw EvalError(std::string("can only concatenate ") + py::type_name(a) + " (not \"" + py::type_name(b) +
                        "\") to " + py::type_name(a));
      unsupported("+", a, b);
    case BinOp::Sub:
      if (ints) {
        std::int64_t r;
        if (__builtin_sub_overflow(as_int(a), as_int(b), &r)) throw EvalError("integer overflow");
        return Value::integer(r);
      }
      if (nums) return Value::floating(as_double(a) - as_double(b));
      unsupported("-", a, b);
    case BinOp::Mul:
      if (ints) {
        std::int64_t r;
        if (__builtin_mul_overflow(as_int(a), as_int(b), &r)) throw EvalError("integer overflow");
        return Value::integer(r);
      }
      if (nums) return Value::floating(as_double(a) * as_double(b));
      if ((a.kind == Kind::String || a.kind == Kind::List) && is_intlike(b)) return repeat(a, as_int(b), in);
      if ((b.kind == Kind::String || b.kind == Kind::List) && is_intlike(a)) return repeat(b, as_int(a), in);
      if (a.kind == Kind::String || b.kind == Kind::String)
        throw EvalError(std::string("can't multiply sequence by non-int of type '") +
                        py::type_name(a.kind == Kind::String ? b : a) + "'");
      unsupported("*", a, b);
    case BinOp::Div:
      if (nums) {
        if (as_double(b) == 0) throw EvalError(ints ? "division by zero" : "float division by zero");
        return Value::floating(as_double(a) / as_double(b));
      }
      unsupported("/", a, b);
    case BinOp::FloorDiv:
      if (ints) {
        if (as_int(b) == 0) throw EvalError("integer division or modulo by zero");
        return Value::integer(floor_div(as_int(a), as_int(b)));
      }
      if (nums) {
        if (as_double(b) == 0) throw EvalError("float floor division by zero");
        return Value::floating(std::floor(as_double(a) / as_double(b)));
      }
      unsupported("//", a, b);
    case BinOp::Mod:
      if (ints) {
        if (as_int(b) == 0) throw EvalError("integer division or modulo by zero");
        const std::int64_t x = as_int(a), y = as_int(b);
        if (y == -1) return Value::integer(0);
        std::int64_t r = x % y;
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
        return Value::integer(r);
      }
      if (nums) {
        if (as_double(b) == 0) throw EvalError("float modulo");
        double r = std::fmod(as_double(a), as_double(b));
        if (r != 0 && ((r < 0) != (as_double(b) < 0))) r += as_double(b);
        return Value::floating(r);
      }
      if (a.kind == Kind::String) return percent_format(a.s, b, in);
      unsupported("%", a, b);
    case BinOp::Pow:
      if (ints && as_int(b) >= 0) {
        std::int64_t base = as_int(a), e = as_int(b), r = 1;
        while (e > 0) {
          if (e & 1)
            if (__builtin_mul_overflow(r, base, &r)) throw EvalError("integer overflow");
          e >>= 1;
          if (e > 0 && __builtin_mul_overflow(base, base, &base)) throw EvalError("integer overflow");
        }
        return Value::integer(r);
      }
      if (nums) return Value::floating(std::pow(as_double(a), as_double(b)));
      unsupported("** or pow()", a, b);
    case BinOp::Concat: break;
  }
  unsupported("?", a, b);
}

bool contains(const Value& c, const Value& item) {
  switch (c.kind) {
    case Kind::Undefined: return false;  // Undefined iterates as empty
    case Kind::String:
      if (item.kind != Kind::String)
        throw EvalError(std::string("'in <string>' requires string as left operand, not ") + py::type_name(item));
      return c.s.find(item.s) != std::string_view::npos;
    case Kind::List:
      for (const auto& v : as_list(c).items)
        if (equals(v, item)) return true;
      return false;
    case Kind::Dict:
      for (const auto& [k, v] : as_dict(c).items)
        if (equals(k, item)) return true;
      return false;
    default:
      throw EvalError(std::string("argument of type '") + py::type_name(c) + "' is not iterable");
  }
}

std::size_t length_of(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: return 0;
    case Kind::String: return py::code_point_count(v.s);
    case Kind::List: return as_list(v).items.size();
    case Kind::Dict: return as_dict(v).items.size();
    default: throw EvalError(std::string("object of type '") + py::type_name(v) + "' has no len()");
  }
}

std::vector<Value> iterate(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined: return {};
    case Kind::List: return as_list(v).items;
    case Kind::Dict: {
      std::vector<Value> keys;
      for (const auto& [k, val] : as_dict(v).items) keys.push_back(k);
      return keys;
    }
    case Kind::String: {
      std::vector<Value> chars;
      for (std::size_t i = 0; i < v.s.size();) {
        const std::size_t start = i;
        py::next_code_point(v.s, i);
        Value c = v;
        c.s = v.s.substr(start, i - start);
        chars.push_back(std::move(c));
      }
      return chars;
    }
    default: throw EvalError(std::string("'") + py::type_name(v) + "' object is not iterable");
  }
}

}  // namespace overhead::chat
