#include "tok/pre_tokenizer.hpp"

#include "tok/unicode_class.hpp"
#include "util/utf8.hpp"

namespace overhead::tok {

namespace {
// GPT-2's pattern, used by ByteLevel(use_regex=true).
const char* const kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
}  // namespace

Matcher Matcher::regex(const std::string& pattern) {
  if (auto kind = scanner_for(pattern)) return Matcher(std::string(), nullptr, kind);
  return Matcher(std::string(), std::make_shared<Regex>(pattern), std::nullopt);
}

void Matcher::find_all(std::string_view s, std::size_t begin, std::size_t end, std::vector<Span>& out) const {
  (void)find_some(s, begin, end, out, static_cast<std::size_t>(-1));
}

std::size_t Matcher::find_some(std::string_view s, std::size_t begin, std::size_t end, std::vector<Span>& out,
                               std::size_t max) const {
  if (scanner_) {
    const std::size_t next = scan(*scanner_, s, begin, end, out, max);
    return next >= end ? Regex::kDone : next;
  }
  if (regex_) return regex_->find_some(s, begin, end, out, max);
  if (literal_.empty()) return Regex::kDone;
  const std::string_view window = s.substr(0, end);
  std::size_t pos = begin, hit;
  for (std::size_t found = 0; (hit = window.find(literal_, pos)) != std::string_view::npos; ++found) {
    if (found == max) return pos;
    out.emplace_back(hit, hit + literal_.size());
    pos = hit + literal_.size();
  }
  return Regex::kDone;
}

void split_pieces(std::vector<Piece>& pieces,
                  const std::function<void(std::size_t, std::size_t, std::vector<Span>&)>& find,
                  SplitBehavior behavior, bool invert) {
  thread_local std::vector<Piece> result;
  thread_local std::vector<Span> matches;
  thread_local std::vector<std::pair<Span, bool>> marked;  // (span, is_match)
  thread_local std::vector<std::pair<Span, bool>> kept;    // (span, remove)
  result.clear();
  for (const Piece& piece : pieces) {
    matches.clear();
    marked.clear();
    kept.clear();
    if (piece.begin == piece.end) continue;
    find(piece.begin, piece.end, matches);
    if (behavior == SplitBehavior::kIsolated || behavior == SplitBehavior::kRemoved) {
      // The two behaviours that only keep or drop spans (what the regex pre-tokenizers of
      // Llama-3 and Phi-4 use) go straight to pieces, without the marked/kept lists below.
      const bool keep_gaps = behavior == SplitBehavior::kIsolated || !invert;
      const bool keep_matches = behavior == SplitBehavior::kIsolated || invert;
      auto keep = [&](std::size_t b, std::size_t e) {
        if (b != e) result.push_back(Piece{b, e, piece.at_origin && b == piece.begin});
      };
      std::size_t gap = piece.begin;
      for (const auto& m : matches) {
        if (keep_gaps) keep(gap, m.first);
        if (keep_matches) keep(m.first, m.second);
        gap = m.second;
      }
      if (keep_gaps) keep(gap, piece.end);
      continue;
    }
    std::size_t prev = piece.begin;
    for (const auto& m : matches) {
      if (prev != m.first) marked.push_back({{prev, m.first}, invert});
      marked.push_back({m, !invert});
      prev = m.second;
    }
    if (prev != piece.end) marked.push_back({{prev, piece.end}, invert});

    // The behaviours, as HF tokenizers' NormalizedString::split defines them.
    switch (behavior) {
      case SplitBehavior::kIsolated:
        for (const auto& [span, is_match] : marked) kept.push_back({span, false});
        break;
      case SplitBehavior::kRemoved:
        kept = marked;
        break;
      case SplitBehavior::kContiguous: {
        bool previous_match = false;
        for (const auto& [span, is_match] : marked) {
          if (is_match == previous_match && !kept.empty()) {
            kept.back().first.second = span.second;
          } else {
            kept.push_back({span, false});
          }
          previous_match = is_match;
        }
        break;
      }
      case SplitBehavior::kMergedWithPrevious: {
        bool previous_match = false;
        for (const auto& [span, is_match] : marked) {
          if (is_match && !previous_match && !kept.empty()) {
            kept.back().first.second = span.second;
          } else {
            kept.push_back({span, false});
          }
          previous_match = is_match;
        }
        break;
      }
      case SplitBehavior::kMergedWithNext: {
        bool previous_match = false;
        for (auto it = marked.rbegin(); it != marked.rend(); ++it) {
          const auto& [span, is_match] = *it;
          if (is_match && !previous_match && !kept.empty()) {
            kept.back().first.first = span.first;
          } else {
            kept.push_back({span, false});
          }
          previous_match = is_match;
        }
        std::reverse(kept.begin(), kept.end());
        break;
      }
    }
    for (const auto& [span, remove] : kept) {
      if (remove || span.first == span.second) continue;
      result.push_back(Piece{span.first, span.second, piece.at_origin && span.first == piece.begin});
    }
  }
  pieces.swap(result);
}

void SplitPreTokenizer::apply(std::string& buffer, std::vector<Piece>& pieces) const {
  split_pieces(
      pieces, [&](std::size_t b, std::size_t e, std::vector<Span>& out) { matcher_.find_all(buffer, b, e, out); },
      behavior_, invert_);
}

void PreTokenizer::apply_in_batches(std::string_view text, const Piece& whole, const BatchSink& sink) const {
  std::string buffer(text.substr(whole.begin, whole.end - whole.begin));
  std::vector<Piece> pieces{Piece{0, buffer.size(), whole.at_origin}};
  apply(buffer, pieces);
  sink(buffer, pieces);
}

void SequencePreTokenizer::apply_in_batches(std::string_view text, const Piece& whole, const BatchSink& sink) const {
  if (steps_.empty()) return PreTokenizer::apply_in_batches(text, whole, sink);
  // Every step works piece by piece (a rebuilt buffer holds only the pieces' own text), so the
  // later steps applied to each batch of the first step's pieces give what they give on all.
  steps_.front()->apply_in_batches(text, whole, [&](std::string& batch_buffer, std::vector<Piece>& batch) {
    for (std::size_t k = 1; k < steps_.size(); ++k) steps_[k]->apply(batch_buffer, batch);
    sink(batch_buffer, batch);
  });
}

std::optional<ScannerKind> SequencePreTokenizer::only_scanner() const {
  std::optional<ScannerKind> found;
  for (const auto& step : steps_) {
    if (step->is_identity()) continue;
    if (found) return std::nullopt;  // a second step that cuts or changes pieces
    found = step->only_scanner();
    if (!found) return std::nullopt;
  }
  return found;
}

bool SequencePreTokenizer::is_identity() const {
  for (const auto& step : steps_)
    if (!step->is_identity()) return false;
  return true;
}

void SplitPreTokenizer::apply_in_batches(std::string_view text, const Piece& whole, const BatchSink& sink) const {
  // Only the behaviours that keep or drop each span on its own split at any match; the merging
  // ones join a match with its neighbour, across where a batch would end.
  if (behavior_ != SplitBehavior::kIsolated && behavior_ != SplitBehavior::kRemoved)
    return PreTokenizer::apply_in_batches(text, whole, sink);
  const bool keep_gaps = behavior_ == SplitBehavior::kIsolated || !invert_;
  const bool keep_matches = behavior_ == SplitBehavior::kIsolated || invert_;
  std::vector<Span> matches;
  std::vector<Piece> batch;
  std::string batch_buffer;
  // The pieces get their own buffer, which a later step may rebuild.
  auto keep = [&](std::size_t b, std::size_t e) {
    if (b == e) return;
    const std::size_t at = batch_buffer.size();
    batch_buffer.append(text.substr(b, e - b));
    batch.push_back(Piece{at, batch_buffer.size(), whole.at_origin && b == whole.begin});
  };
  std::size_t gap = whole.begin;  // where the text not yet kept starts (it may span batches)
  std::size_t pos = whole.begin;
  for (;;) {
    matches.clear();
    batch.clear();
    batch_buffer.clear();
    const std::size_t next = matcher_.find_some(text, pos, whole.end, matches, kBatchPieces);
    for (const auto& m : matches) {
      if (keep_gaps) keep(gap, m.first);
      if (keep_matches) keep(m.first, m.second);
      gap = m.second;
    }
    if (next == Regex::kDone && keep_gaps) keep(gap, whole.end);
    if (!batch.empty()) sink(batch_buffer, batch);
    if (next == Regex::kDone) return;
    pos = next;
  }
}

ByteLevelPreTokenizer::ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex)
    : add_prefix_space_(add_prefix_space) {
  if (use_regex) gpt2_split_.emplace(Matcher::regex(kGpt2Pattern), SplitBehavior::kIsolated, false);
}

namespace {
// Rebuilds the buffer with `prefix` inserted before every piece that `wants` one.
template <typename Wants>
void prefix_pieces(std::string& buffer, std::vector<Piece>& pieces, std::string_view prefix, Wants wants) {
  bool any = false;
  for (const Piece& p : pieces) any = any || wants(p);
  if (!any) return;
  std::string rebuilt;
  rebuilt.reserve(buffer.size() + pieces.size() * prefix.size());
  for (Piece& p : pieces) {
    const bool add = wants(p);
    const std::size_t b = rebuilt.size();
    if (add) rebuilt += prefix;
    rebuilt.append(buffer, p.begin, p.end - p.begin);
    p.begin = b;
    p.end = rebuilt.size();
  }
  buffer.swap(rebuilt);
}
}  // namespace

void ByteLevelPreTokenizer::apply(std::string& buffer, std::vector<Piece>& pieces) const {
  if (add_prefix_space_)
    prefix_pieces(buffer, pieces, " ", [&](const Piece& p) { return p.end > p.begin && buffer[p.begin] != ' '; });
  if (gpt2_split_) gpt2_split_->apply(buffer, pieces);
}

void MetaspacePreTokenizer::apply(std::string& buffer, std::vector<Piece>& pieces) const {
  // Replace ' ' by the replacement inside every piece, then prepend per the scheme.
  std::string rebuilt;
  rebuilt.reserve(buffer.size() + buffer.size() / 2 + pieces.size() * replacement_.size());
  for (Piece& p : pieces) {
    const std::size_t b = rebuilt.size();
    const std::string_view text(buffer.data() + p.begin, p.end - p.begin);
    const bool starts = text.substr(0, replacement_.size()) == replacement_ || (!text.empty() && text[0] == ' ');
    const bool add = !text.empty() && !starts &&
                     (prepend_ == Prepend::kAlways || (prepend_ == Prepend::kFirst && p.at_origin));
    if (add) rebuilt += replacement_;
    for (const char c : text) {
      if (c == ' ') {
        rebuilt += replacement_;
      } else {
        rebuilt.push_back(c);
      }
    }
    p.begin = b;
    p.end = rebuilt.size();
  }
  buffer.swap(rebuilt);
  if (split_) {
    const Matcher m = Matcher::literal(replacement_);
    split_pieces(
        pieces, [&](std::size_t b, std::size_t e, std::vector<Span>& out) { m.find_all(buffer, b, e, out); },
        SplitBehavior::kMergedWithNext, false);
  }
}

void DigitsPreTokenizer::apply(std::string& buffer, std::vector<Piece>& pieces) const {
  // HF matches with char::is_numeric (Unicode N*); individual digits isolate each, else contiguous runs.
  split_pieces(
      pieces,
      [&](std::size_t b, std::size_t e, std::vector<Span>& out) {
        std::size_t i = b;
        while (i < e) {
          std::size_t n = i;
          const char32_t c = util::utf8::next(buffer, n);
          if (unicode::is(c, unicode::kNumber)) out.emplace_back(i, n);
          i = n;
        }
      },
      individual_ ? SplitBehavior::kIsolated : SplitBehavior::kContiguous, false);
}

}  // namespace overhead::tok
