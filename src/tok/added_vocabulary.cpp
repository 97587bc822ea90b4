#include "tok/added_vocabulary.hpp"

#include <algorithm>
#include <cstring>

#include "tok/unicode_class.hpp"
#include "util/utf8.hpp"

namespace overhead::tok {

void TokenTrie::add(std::string_view pattern, std::uint32_t value) {
  std::uint32_t node = 0;
  for (const char ch : pattern) {
    const auto b = static_cast<unsigned char>(ch);
    auto& children = nodes_[node].children;
    auto it = std::lower_bound(children.begin(), children.end(), b,
                               [](const auto& child, unsigned char key) { return child.first < key; });
    if (it != children.end() && it->first == b) {
      node = it->second;
    } else {
      const auto fresh = static_cast<std::uint32_t>(nodes_.size());
      children.insert(it, {b, fresh});
      nodes_.push_back(Node{});  // may reallocate: `children` is not used after this
      node = fresh;
    }
  }
  if (!nodes_[node].value) nodes_[node].value = value;  // first of equal contents wins
  const auto first = static_cast<unsigned char>(pattern[0]);
  if (!first_byte_[first]) {
    first_byte_[first] = true;
    ++first_byte_count_;
    only_first_byte_ = first;
  }
}

std::size_t TokenTrie::next_start(std::string_view s, std::size_t pos, std::size_t end) const {
  if (pos >= end) return end;
  if (first_byte_count_ == 1) {
    const void* hit = std::memchr(s.data() + pos, only_first_byte_, end - pos);
    return hit ? static_cast<std::size_t>(static_cast<const char*>(hit) - s.data()) : end;
  }
  const char* p = s.data();
  while (pos < end && !first_byte_[static_cast<unsigned char>(p[pos])]) ++pos;
  return pos;
}

std::size_t TokenTrie::longest_at(std::string_view s, std::size_t pos, std::uint32_t& value) const {
  std::uint32_t node = 0;
  std::size_t best = 0;
  for (std::size_t i = pos; i < s.size(); ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    const auto& children = nodes_[node].children;
    auto it = std::lower_bound(children.begin(), children.end(), b,
                               [](const auto& child, unsigned char key) { return child.first < key; });
    if (it == children.end() || it->first != b) break;
    node = it->second;
    if (nodes_[node].value) {
      best = i + 1 - pos;
      value = *nodes_[node].value;
    }
  }
  return best;
}

namespace {

bool is_space_at_end(std::string_view s, std::size_t end, std::size_t& start) {
  if (end == 0) return false;
  return unicode::is(util::utf8::previous(s, end, start), unicode::kSpace);
}

}  // namespace

void AddedVocabulary::split(const TokenTrie& trie, std::string_view text, std::size_t begin, std::size_t end,
                            std::vector<Segment>& out) const {
  if (trie.empty()) {
    if (begin < end) out.push_back(Segment{begin, end, std::nullopt});
    return;
  }
  const std::string_view window = text.substr(0, end);
  std::size_t start_offset = begin;
  std::size_t pos = begin;
  while (pos < end) {
    pos = trie.next_start(window, pos, end);
    if (pos == end) break;
    std::uint32_t index = 0;
    const std::size_t length = trie.longest_at(window, pos, index);
    if (length == 0) {
      ++pos;
      continue;
    }
    std::size_t start = pos, stop = pos + length;
    // The next search starts after the token itself, not after the whitespace rstrip absorbs (HF
    // iterates its automaton's matches independently of the strip rules).
    pos = stop;
    const AddedToken& token = tokens_[index];
    if (token.single_word) {
      // HF: \w$ before and ^\w after must both fail.
      std::size_t prev_start;
      const bool word_before =
          start > begin && unicode::is(util::utf8::previous(window, start, prev_start), unicode::kWord);
      std::size_t after = stop;
      const bool word_after = stop < end && unicode::is(util::utf8::next(window, after), unicode::kWord);
      if (word_before || word_after) continue;
    }
    if (token.lstrip) {
      std::size_t new_start = start, prev_start;
      while (new_start > begin && is_space_at_end(window, new_start, prev_start)) new_start = prev_start;
      start = std::max(new_start, start_offset);
    }
    if (token.rstrip) {
      while (stop < end) {
        std::size_t next = stop;
        if (!unicode::is(util::utf8::next(window, next), unicode::kSpace)) break;
        stop = next;
      }
    }
    if (start_offset < start) out.push_back(Segment{start_offset, start, std::nullopt});
    out.push_back(Segment{start, stop, token.id});
    start_offset = stop;
  }
  if (start_offset < end) out.push_back(Segment{start_offset, end, std::nullopt});
}

}  // namespace overhead::tok
