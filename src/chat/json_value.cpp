#include "chat/json_value.hpp"

namespace overhead::chat {

namespace {

template <typename Json>
Value convert(const Json& j, int depth) {
  if (depth > 256) throw EvalError("input nested too deeply (more than 256 levels)");
  switch (j.type()) {
    case nlohmann::json::value_t::null: return Value::none();
    case nlohmann::json::value_t::boolean: return Value::boolean(j.template get<bool>());
    case nlohmann::json::value_t::number_integer: return Value::integer(j.template get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
      const auto u = j.template get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(INT64_MAX)) return Value::floating(static_cast<double>(u));
      return Value::integer(static_cast<std::int64_t>(u));
    }
    case nlohmann::json::value_t::number_float: return Value::floating(j.template get<double>());
    case nlohmann::json::value_t::string: return Value::borrowed(j.template get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      auto l = std::make_shared<ListObject>();
      l->from_input = true;
      l->items.reserve(j.size());
      for (const auto& x : j) l->items.push_back(convert(x, depth + 1));
      Value v;
      v.kind = Kind::List;
      v.obj = std::move(l);
      return v;
    }
    case nlohmann::json::value_t::object: {
      auto d = std::make_shared<DictObject>();
      d->items.reserve(j.size());
      for (auto it = j.begin(); it != j.end(); ++it)
        d->items.emplace_back(Value::borrowed(it.key()), convert(it.value(), depth + 1));
      return make_dict(std::move(d));
    }
    default: return Value::none();
  }
}

}  // namespace

Value value_from_json(const nlohmann::json& j) { return convert(j, 0); }
Value value_from_json(const nlohmann::ordered_json& j) { return convert(j, 0); }

}  // namespace overhead::chat
