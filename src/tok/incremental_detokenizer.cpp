#include "tok/incremental_detokenizer.hpp"

#include <optional>

#include "tok/byte_level.hpp"
#include "tok/detokenizer.hpp"
#include "tok/tokenizer_impl.hpp"
#include "util/utf8.hpp"

namespace overhead::tok {

namespace incremental {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Where a trailing sequence starts that more bytes could still make a valid character (a lead
// byte followed by fewer continuation bytes than it needs, each in its allowed range, as
// util::utf8::repair checks them); bytes.size() when there is none. Every byte before that point
// is decided: repair looks at a sequence's own bytes only, and the tail starts with a lead byte.
std::size_t completable_tail(std::string_view bytes) {
  const std::size_t n = bytes.size();
  for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
    const std::size_t p = n - back;
    const auto b0 = static_cast<unsigned char>(bytes[p]);
    if (util::utf8::is_continuation(b0)) continue;
    std::size_t need;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      need = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      need = 3;
      if (b0 == 0xE0) lo = 0xA0;
      if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      need = 4;
      if (b0 == 0xF0) lo = 0x90;
      if (b0 == 0xF4) hi = 0x8F;
    } else {
      return n;
    }
    if (back >= need) return n;  // complete (or over-long: decided either way)
    for (std::size_t k = 1; k < back; ++k) {
      const auto b = static_cast<unsigned char>(bytes[p + k]);
      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return n;
    }
    return p;
  }
  return n;
}

void append_repaired(std::string_view bytes, std::string& out) {
  if (util::utf8::is_valid(bytes)) {
    out.append(bytes);
  } else {
    out += util::utf8::repair(bytes);
  }
}

// ByteFallbackDetokenizer's test: "<0xNN>" with two hex digits.
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}
std::optional<char> byte_token(std::string_view t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return std::nullopt;
  const int hi = hex_value(t[3]), lo = hex_value(t[4]);
  if (hi < 0 || lo < 0) return std::nullopt;
  return static_cast<char>(hi * 16 + lo);
}

}  // namespace incremental

using incremental::append_repaired;
using incremental::byte_token;
using incremental::completable_tail;
using incremental::kReplacement;

IncrementalDetokenizer::IncrementalDetokenizer(const Tokenizer& tokenizer, DetokenizeOptions options)
    : tokenizer_(tokenizer), options_(options) {
  const Detokenizer* chain = tokenizer.impl().detokenizer.get();
  if (chain == nullptr) {
    method_ = Method::kSpaces;
    return;
  }
  if (dynamic_cast<const ByteLevelDetokenizer*>(chain) != nullptr) {
    method_ = Method::kByteLevel;
    return;
  }
  std::vector<const Detokenizer*> steps;
  if (const auto* seq = dynamic_cast<const SequenceDetokenizer*>(chain)) {
    for (const auto& s : seq->steps()) steps.push_back(s.get());
  } else {
    steps.push_back(chain);
  }
  // The shape streamed here: per-token steps, [ByteFallback], [Fuse], [leading-only Strip after Fuse].
  // Without Fuse the tokens are concatenated by decode() all the same.
  std::size_t k = 0;
  auto per_token = [](const Detokenizer* s) {
    return dynamic_cast<const ReplaceDetokenizer*>(s) != nullptr || dynamic_cast<const StripDetokenizer*>(s) != nullptr ||
           dynamic_cast<const MetaspaceDetokenizer*>(s) != nullptr;
  };
  for (; k < steps.size() && per_token(steps[k]); ++k) {
    per_token_.push_back(steps[k]);
    per_token_is_metaspace_.push_back(dynamic_cast<const MetaspaceDetokenizer*>(steps[k]) != nullptr);
  }
  if (k < steps.size() && dynamic_cast<const ByteFallbackDetokenizer*>(steps[k]) != nullptr) {
    byte_fallback_ = true;
    ++k;
  }
  bool fused = false;
  if (k < steps.size() && dynamic_cast<const FuseDetokenizer*>(steps[k]) != nullptr) {
    fused = true;
    ++k;
  }
  if (fused && k < steps.size()) {
    const auto* strip = dynamic_cast<const StripDetokenizer*>(steps[k]);
    if (strip != nullptr && strip->stop() == 0) {
      strip_content_ = strip->content();
      strip_start_ = strip_left_ = strip->start();
      ++k;
    }
  }
  // A single text after Fuse: more Fuse steps change nothing.
  while (fused && k < steps.size() && dynamic_cast<const FuseDetokenizer*>(steps[k]) != nullptr) ++k;
  method_ = k == steps.size() ? Method::kPieces : Method::kWhole;
}

bool IncrementalDetokenizer::token_text(TokenId id, std::string_view& text) const {
  // The same tokens TokenizerImpl::detokenize keeps.
  const TokenizerImpl& impl = tokenizer_.impl();
  if (const AddedToken* a = impl.added->by_id(id)) {
    if (options_.skip_special_tokens && a->special) return false;
    text = a->content;
    return true;
  }
  const auto t = impl.model->id_to_token(id);
  if (!t) return false;
  if (options_.skip_special_tokens) {
    if (const AddedToken* same = impl.added->by_content(*t); same && same->special) return false;
  }
  text = *t;
  return true;
}

void IncrementalDetokenizer::push(TokenId id, std::string& out) {
  if (method_ == Method::kWhole) {
    ids_.push_back(id);
    return;
  }
  std::string_view text;
  if (!token_text(id, text)) return;
  const bool first = tokens_seen_++ == 0;
  switch (method_) {
    case Method::kSpaces:
      if (!first) out.push_back(' ');
      out.append(text);
      return;
    case Method::kByteLevel: {
      if (auto raw = byte_level::to_bytes(text)) {
        held_ += *raw;
      } else {
        held_.append(text);
      }
      const std::size_t cut = completable_tail(held_);
      if (cut == 0) return;
      append_repaired(std::string_view(held_).substr(0, cut), out);
      held_.erase(0, cut);
      return;
    }
    case Method::kPieces:
      if (per_token_.empty()) {
        push_piece(text, out);
        return;
      }
      scratch_.clear();
      // Metaspace treats the first token of the list apart: a later token is given as the second.
      if (!first) scratch_.emplace_back();
      scratch_.emplace_back(text);
      for (std::size_t s = 0; s < per_token_.size(); ++s) per_token_[s]->detokenize_chain(scratch_);
      push_piece(scratch_.back(), out);
      return;
    case Method::kWhole:
      return;
  }
}

void IncrementalDetokenizer::push_piece(std::string_view text, std::string& out) {
  if (byte_fallback_) {
    if (const auto b = byte_token(text)) {
      held_.push_back(*b);
      return;
    }
    flush_run(out);
  }
  emit_fused(text, out);
}

void IncrementalDetokenizer::flush_run(std::string& out) {
  if (held_.empty()) return;
  // ByteFallbackDetokenizer: a valid run is its bytes, an invalid one a U+FFFD per byte.
  if (util::utf8::is_valid(held_)) {
    emit_fused(held_, out);
  } else {
    std::string marks;
    for (std::size_t k = 0; k < held_.size(); ++k) marks += kReplacement;
    emit_fused(marks, out);
  }
  held_.clear();
}

void IncrementalDetokenizer::emit_fused(std::string_view text, std::string& out) {
  // The Strip after Fuse removes up to `start` leading content chars of the whole text.
  std::size_t i = 0;
  while (strip_left_ > 0 && i < text.size()) {
    std::size_t next = i;
    if (util::utf8::next(text, next) != strip_content_) {
      strip_left_ = 0;
      break;
    }
    --strip_left_;
    i = next;
  }
  out.append(text.substr(i));
}

void IncrementalDetokenizer::finish(std::string& out) {
  switch (method_) {
    case Method::kWhole:
      out += tokenizer_.decode(ids_, options_.skip_special_tokens);
      break;
    case Method::kByteLevel:
      append_repaired(held_, out);
      break;
    case Method::kPieces:
      flush_run(out);
      break;
    case Method::kSpaces:
      break;
  }
  reset();
}

void IncrementalDetokenizer::reset() {
  tokens_seen_ = 0;
  held_.clear();
  ids_.clear();
  strip_left_ = strip_start_;
}

}  // namespace overhead::tok
