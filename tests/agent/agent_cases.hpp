// Shared by the agent tests: a case (a model's text and the answer it must parse to), the
// expected answer's builder, and the split property every case is held to.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/answer_parser.hpp"
#include "util/utf8.hpp"

namespace overhead::agent::testing {

struct Case {
  std::string name;
  std::string text;
  ParsedAnswer expected;  // with CallRelease::whole_calls
  bool calls_good = true;  // every call complete and valid: streamed release gives the same answer
};

inline ParsedAnswer answer(std::string content, std::vector<std::pair<std::string, std::string>> calls = {},
                           std::string reasoning = {}) {
  ParsedAnswer a;
  a.content = std::move(content);
  a.reasoning = std::move(reasoning);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    a.calls.push_back(ToolCall{call_id("call_", i), calls[i].first, calls[i].second});
  }
  return a;
}

inline ParserOptions options(std::string tool, std::string reasoning = {}, bool starts_in_reasoning = false,
                             CallRelease release = CallRelease::whole_calls) {
  ParserOptions o;
  o.tool_parser = std::move(tool);
  o.reasoning_parser = std::move(reasoning);
  o.starts_in_reasoning = starts_in_reasoning;
  o.release = release;
  return o;
}

// Feeds `text` cut at `cuts` (sorted positions) and checks the shape of the stream: each call's
// first delta carries its id and name and no later one does, indices come in order, and every
// delta's text is whole UTF-8 characters when the input is valid UTF-8.
inline ParsedAnswer stream_at(const ParserOptions& o, std::string_view text, const std::vector<std::size_t>& cuts) {
  AnswerParser parser(o);
  std::vector<Delta> deltas;
  std::size_t from = 0;
  for (std::size_t cut : cuts) {
    parser.push(text.substr(from, cut - from), deltas);
    from = cut;
  }
  parser.push(text.substr(from), deltas);
  parser.finish(deltas);
  const bool valid_input = util::utf8::is_valid(text);
  std::size_t opened = 0;
  for (const Delta& d : deltas) {
    if (valid_input) {
      EXPECT_TRUE(util::utf8::is_valid(d.text)) << "a delta splits a character";
    }
    if (d.kind != Delta::Kind::tool_call) continue;
    if (d.index == opened) {
      EXPECT_FALSE(d.id.empty());
      EXPECT_FALSE(d.name.empty());
      ++opened;
    } else {
      EXPECT_LT(d.index, opened) << "a call's index skipped ahead";
      EXPECT_TRUE(d.id.empty() && d.name.empty()) << "id and name only on a call's first delta";
    }
  }
  return accumulate(deltas);
}

// The property: whatever the cuts, the folded deltas equal the whole parse. Every single cut,
// every byte its own delta, every pair of cuts when the text is short, and random multi-cuts.
inline void expect_split_invariant(const ParserOptions& o, std::string_view text, std::size_t pair_limit = 160) {
  const ParsedAnswer whole = parse_whole(o, text);
  const std::size_t n = text.size();
  for (std::size_t i = 0; i <= n; ++i) {
    ASSERT_EQ(stream_at(o, text, {i}), whole) << "one cut at byte " << i;
  }
  std::vector<std::size_t> every(n);
  for (std::size_t i = 0; i < n; ++i) every[i] = i;
  ASSERT_EQ(stream_at(o, text, every), whole) << "every byte its own delta";
  if (n <= pair_limit) {
    for (std::size_t i = 1; i < n; ++i) {
      for (std::size_t j = i + 1; j < n; ++j) {
        ASSERT_EQ(stream_at(o, text, {i, j}), whole) << "cuts at bytes " << i << " and " << j;
      }
    }
  }
  std::mt19937 rng(static_cast<std::uint32_t>(n * 7919 + 17));
  for (int round = 0; round < 200; ++round) {
    std::vector<std::size_t> cuts;
    for (std::size_t i = 1; i < n; ++i) {
      if (rng() % 5 == 0) cuts.push_back(i);
    }
    ASSERT_EQ(stream_at(o, text, cuts), whole) << "random cuts, round " << round;
  }
}

// Each case: the whole parse is its expected answer (whole_calls), the split property holds in
// both releases, and with streamed release a case whose calls are all good gives the same answer.
inline void check_cases(const ParserOptions& base, const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ParserOptions whole = base;
    whole.release = CallRelease::whole_calls;
    EXPECT_EQ(parse_whole(whole, c.text), c.expected);
    expect_split_invariant(whole, c.text);
    ParserOptions streamed = base;
    streamed.release = CallRelease::streamed;
    if (c.calls_good) {
      EXPECT_EQ(parse_whole(streamed, c.text), c.expected);
    }
    expect_split_invariant(streamed, c.text);
  }
}

}  // namespace overhead::agent::testing

// Printed by gtest when two answers differ.
namespace overhead::agent {
inline void PrintTo(const ParsedAnswer& a, std::ostream* os) {
  *os << "{content=\"" << a.content << "\", reasoning=\"" << a.reasoning << "\", calls=[";
  for (const ToolCall& c : a.calls) *os << "{" << c.id << ", " << c.name << ", " << c.arguments << "}";
  *os << "]}";
}
}  // namespace overhead::agent
