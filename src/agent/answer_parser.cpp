// AnswerParser: the UTF-8 boundary, the family chosen by name and the driver loop
// (answer_parser.hpp).
#include "agent/answer_parser.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "agent/family.hpp"
#include "agent/stream.hpp"
#include "util/utf8.hpp"

namespace overhead::agent {

namespace parser {

constexpr std::array<std::string_view, 2> kReasoningParsers = {"think", "gpt_oss"};

// The length of `s` without an incomplete UTF-8 character at its end.
std::size_t complete_utf8_prefix(std::string_view s) {
  const std::size_t n = s.size();
  for (std::size_t back = 1; back <= 4 && back <= n; ++back) {
    const auto b = static_cast<unsigned char>(s[n - back]);
    if (util::utf8::is_continuation(b)) continue;
    if (b >= 0x80 && util::utf8::sequence_length(b) > back) return n - back;
    return n;
  }
  return n;
}

std::unique_ptr<detail::Family> make_family(const ParserOptions& o) {
  std::string_view tool = o.tool_parser;
  if (!o.reasoning_parser.empty() && !is_reasoning_parser(o.reasoning_parser)) {
    throw std::invalid_argument("unknown reasoning parser '" + o.reasoning_parser + "'");
  }
  if (o.reasoning_parser == "gpt_oss") {
    if (!tool.empty() && tool != "gpt_oss") {
      throw std::invalid_argument("reasoning parser 'gpt_oss' goes with tool parser 'gpt_oss', not '" +
                                  o.tool_parser + "'");
    }
    tool = "gpt_oss";
  }
  std::unique_ptr<detail::Family> family;
  if (tool.empty()) {
    family = detail::make_plain();
  } else {
    for (const detail::FamilyEntry& e : detail::families()) {
      if (e.name == tool) family = e.make();
    }
    if (!family) throw std::invalid_argument("unknown tool parser '" + o.tool_parser + "'");
  }
  if (o.reasoning_parser == "think") family = detail::make_think_stage(std::move(family), o.starts_in_reasoning);
  return family;
}

}  // namespace parser

struct AnswerParser::Impl {
  explicit Impl(const ParserOptions& o) : stream(o.call_id_prefix, o.release), family(parser::make_family(o)) {}
  void run() {
    while (family->step(stream)) {
    }
  }
  detail::Stream stream;
  std::unique_ptr<detail::Family> family;
  std::string utf8_tail;  // an incomplete character held for the next push
  bool finished = false;
};

AnswerParser::AnswerParser(const ParserOptions& options) : impl_(std::make_unique<Impl>(options)) {}
AnswerParser::~AnswerParser() = default;

void AnswerParser::push(std::string_view text, std::vector<Delta>& out) {
  if (impl_->finished) throw std::logic_error("AnswerParser::push after finish");
  impl_->stream.set_sink(&out);
  if (!impl_->utf8_tail.empty()) {
    impl_->utf8_tail.append(text);
    const std::string joined = std::move(impl_->utf8_tail);
    const std::size_t cut = parser::complete_utf8_prefix(joined);
    impl_->stream.append(std::string_view(joined).substr(0, cut));
    impl_->utf8_tail.assign(joined, cut);
  } else {
    const std::size_t cut = parser::complete_utf8_prefix(text);
    impl_->stream.append(text.substr(0, cut));
    impl_->utf8_tail.assign(text.substr(cut));
  }
  impl_->run();
}

std::vector<Delta> AnswerParser::push(std::string_view text) {
  std::vector<Delta> out;
  push(text, out);
  return out;
}

void AnswerParser::finish(std::vector<Delta>& out) {
  if (impl_->finished) return;
  impl_->finished = true;
  impl_->stream.set_sink(&out);
  impl_->stream.append(impl_->utf8_tail);  // invalid bytes stay as they are
  impl_->utf8_tail.clear();
  impl_->stream.set_at_end();
  impl_->run();
  impl_->family->finish(impl_->stream);
  impl_->stream.close_at_end();
}

std::vector<Delta> AnswerParser::finish() {
  std::vector<Delta> out;
  finish(out);
  return out;
}

const std::vector<std::size_t>& AnswerParser::bad_calls() const { return impl_->stream.bad_calls(); }
std::size_t AnswerParser::call_count() const { return impl_->stream.call_count(); }

ParsedAnswer parse_whole(const ParserOptions& options, std::string_view text) {
  AnswerParser parser(options);
  std::vector<Delta> deltas;
  parser.push(text, deltas);
  parser.finish(deltas);
  return accumulate(deltas);
}

std::span<const std::string_view> tool_parser_names() { return detail::family_names(); }
std::span<const std::string_view> reasoning_parser_names() { return parser::kReasoningParsers; }

bool is_tool_parser(std::string_view name) {
  const auto names = tool_parser_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool is_reasoning_parser(std::string_view name) {
  return std::find(parser::kReasoningParsers.begin(), parser::kReasoningParsers.end(), name) != parser::kReasoningParsers.end();
}

bool prompt_opens_reasoning(std::string_view prompt) {
  std::size_t end = prompt.size();
  while (end > 0 && detail::is_space(prompt[end - 1])) --end;
  constexpr std::string_view kOpen = "<think>";
  return end >= kOpen.size() && prompt.substr(end - kOpen.size(), kOpen.size()) == kOpen;
}

}  // namespace overhead::agent
