#include "backends/queue_siblings.hpp"

#include <stdexcept>

#include "backends/queue_schemes.hpp"
#include "ports/backend_url.hpp"
#include "ports/queue_name.hpp"

namespace overhead::backends {
namespace {

constexpr std::size_t kMaxNameLength = 80;

// The name rule of each sibling role (ports/queue_family.hpp): its infix, and what it is called
// in errors. A new role is one row here.
struct SiblingRule {
  ports::SiblingRole role;
  std::string_view infix;
  const char* what;
};
constexpr SiblingRule kSiblingRules[] = {
    {ports::SiblingRole::reply, "-reply-", "a reply queue"},
    {ports::SiblingRole::control, "-ctl-", "a control queue"},
    {ports::SiblingRole::batch, "-batch-", "a batch lane"},
};

const SiblingRule& rule_of(ports::SiblingRole role) {
  for (const auto& r : kSiblingRules)
    if (r.role == role) return r;
  throw std::logic_error("a sibling role without its name rule");
}

// The scheme's sibling-name rule, from the registry (queue_schemes.cpp).
const QueueNaming& naming_of(const ports::BackendUrl& u) {
  if (const QueueScheme* s = find_queue_scheme(u.scheme)) return s->naming;
  throw std::invalid_argument(u.describe("queue", "has no reply queues (scheme \"" + u.scheme + "\")"));
}

}  // namespace

std::string queue_name(const std::string& url) {
  const ports::BackendUrl u = ports::parse_backend_url(url);
  return naming_of(u).name(url, u);
}

std::string sibling_queue_url(const std::string& url, std::string_view name) {
  const ports::BackendUrl u = ports::parse_backend_url(url);
  return naming_of(u).with_name(url, u, name);
}

// "<input name><infix><suffix>", the suffix cut to what SQS allows (see the header).
std::string sibling_queue_name(const std::string& input_url, ports::SiblingRole role, std::string_view suffix) {
  const SiblingRule& rule = rule_of(role);
  const std::string_view infix = rule.infix;
  const char* what = rule.what;
  const std::string input = queue_name(input_url);
  std::string name = input + std::string(infix);
  if (!ports::is_plain_queue_name(input) || name.size() >= kMaxNameLength)
    throw std::invalid_argument(ports::redact_url(input_url) + ": " + what + " needs an input queue name of at most " +
                                std::to_string(kMaxNameLength - infix.size() - 1) + " of A-Z a-z 0-9 _ -, not \"" +
                                input + "\"");
  for (const char c : suffix) {
    if (name.size() == kMaxNameLength) break;
    name += ports::is_plain_queue_char(c) ? c : '_';
  }
  return name;
}

bool is_sibling_queue_of(const std::string& input_url, ports::SiblingRole role, std::string_view name) {
  const std::string_view infix = rule_of(role).infix;
  if (!ports::is_plain_queue_name(name)) return false;
  try {
    const std::string prefix = queue_name(input_url) + std::string(infix);
    return name.size() > prefix.size() && name.starts_with(prefix);
  } catch (const std::invalid_argument&) {
    return false;  // an input queue without a name (mem:) has no siblings
  }
}

std::string reply_queue_name(const std::string& input_url, std::string_view suffix) {
  return sibling_queue_name(input_url, ports::SiblingRole::reply, suffix);
}

bool is_reply_queue_of(const std::string& input_url, std::string_view name) { return is_sibling_queue_of(input_url, ports::SiblingRole::reply, name); }

std::string control_queue_name(const std::string& input_url, std::string_view suffix) {
  return sibling_queue_name(input_url, ports::SiblingRole::control, suffix);
}

bool is_control_queue_of(const std::string& input_url, std::string_view name) {
  return is_sibling_queue_of(input_url, ports::SiblingRole::control, name);
}

}  // namespace overhead::backends
