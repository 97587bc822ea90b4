// Added tokens (special and not): found in the input before the model sees it, with HF's rules:
// leftmost-longest matching; tokens with normalized=false are matched on the raw text, the others
// on each normalized segment; lstrip/rstrip absorb neighbouring whitespace; single_word requires
// word boundaries. Gemma's whitespace and HTML tokens are ordinary entries here.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tok/flat_maps.hpp"

namespace overhead::tok {

struct AddedToken {
  std::uint32_t id = 0;
  std::string content;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
  bool special = false;
};

// One piece of input after added-token extraction: a token (id set) or text to normalize/encode.
struct Segment {
  std::size_t begin;
  std::size_t end;
  std::optional<std::uint32_t> token;
};

// Leftmost-longest multi-pattern matcher over bytes: a trie walked from each start position.
// Token lengths are small (tens of bytes), so this is linear in the input for practical purposes.
class TokenTrie {
 public:
  void add(std::string_view pattern, std::uint32_t value);
  bool empty() const { return nodes_.size() <= 1; }
  // Longest pattern starting at s[pos]: its length (0 if none) and value.
  std::size_t longest_at(std::string_view s, std::size_t pos, std::uint32_t& value) const;
  // The first position in s[pos, end) whose byte may start a pattern, or end. Most text holds
  // none for long stretches, so this is a memchr when every pattern starts with the same byte.
  std::size_t next_start(std::string_view s, std::size_t pos, std::size_t end) const;

 private:
  struct Node {
    std::vector<std::pair<unsigned char, std::uint32_t>> children;  // sorted by byte
    std::optional<std::uint32_t> value;
  };
  std::vector<Node> nodes_{Node{}};
  std::array<bool, 256> first_byte_{};
  int first_byte_count_ = 0;
  unsigned char only_first_byte_ = 0;  // the first byte, when first_byte_count_ == 1
};

class AddedVocabulary {
 public:
  // `normalize` gives the normalized form of a normalized=true token's content (HF matches those
  // against normalized text).
  template <typename NormalizeFn>
  AddedVocabulary(std::vector<AddedToken> tokens, NormalizeFn normalize) : tokens_(std::move(tokens)) {
    // The dense table spans only the added ids (Llama's 128000-128255: 256 entries, where one
    // indexed from 0 was 512 KB of memset and copies, a quarter of a cold start's page faults).
    std::uint32_t low = kDenseIds, high = 0;
    for (const AddedToken& t : tokens_) {
      if (t.content.empty() || t.id >= kDenseIds) continue;
      low = std::min(low, t.id);
      high = std::max(high, t.id);
    }
    if (low <= high) {
      dense_base_ = low;
      by_id_.assign(high - low + 1, kNone);
    }
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
      const AddedToken& t = tokens_[i];
      if (t.content.empty()) continue;
      if (t.normalized) {
        normalized_trie_.add(normalize(t.content), static_cast<std::uint32_t>(i));
      } else {
        raw_trie_.add(t.content, static_cast<std::uint32_t>(i));
      }
      by_content_.insert(t.content, static_cast<std::uint32_t>(i));
      if (t.id < kDenseIds) {
        by_id_[t.id - dense_base_] = static_cast<std::uint32_t>(i);
      } else {
        sparse_by_id_.insert_or_assign(t.id, static_cast<std::uint32_t>(i));
      }
    }
  }

  // Splits text[begin, end) by the raw (normalized=false) tokens, appending to `out`.
  void split_raw(std::string_view text, std::size_t begin, std::size_t end, std::vector<Segment>& out) const {
    split(raw_trie_, text, begin, end, out);
  }
  // Splits a normalized segment by the normalized=true tokens.
  void split_normalized(std::string_view text, std::size_t begin, std::size_t end, std::vector<Segment>& out) const {
    split(normalized_trie_, text, begin, end, out);
  }
  bool has_normalized_tokens() const { return !normalized_trie_.empty(); }

  const AddedToken* by_id(std::uint32_t id) const {
    if (id - dense_base_ < by_id_.size() && id >= dense_base_) {
      const std::uint32_t k = by_id_[id - dense_base_];
      return k != kNone ? &tokens_[k] : nullptr;
    }
    if (sparse_by_id_.empty()) return nullptr;
    const auto it = sparse_by_id_.find(id);
    return it == sparse_by_id_.end() ? nullptr : &tokens_[it->second];
  }
  const AddedToken* by_content(std::string_view content) const {
    const auto i = by_content_.find(content);
    return i ? &tokens_[*i] : nullptr;
  }
  const std::vector<AddedToken>& tokens() const { return tokens_; }

 private:
  static constexpr std::uint32_t kNone = ~0u;
  // Ids below this index a dense table (at most 16 MB); larger ones, which only a file with sparse
  // ids has, a map, so memory is bounded by the number of added tokens and not by their ids.
  static constexpr std::uint32_t kDenseIds = 1u << 22;
  void split(const TokenTrie& trie, std::string_view text, std::size_t begin, std::size_t end,
             std::vector<Segment>& out) const;

  std::vector<AddedToken> tokens_;
  TokenTrie raw_trie_;
  TokenTrie normalized_trie_;
  StringIdMap by_content_;
  std::vector<std::uint32_t> by_id_;  // id - dense_base_ -> index in tokens_, or kNone
  std::uint32_t dense_base_ = 0;
  std::unordered_map<std::uint32_t, std::uint32_t> sparse_by_id_;
};

}  // namespace overhead::tok
