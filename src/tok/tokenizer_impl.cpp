#include "tok/tokenizer_impl.hpp"

#include "tok/errors.hpp"

namespace overhead::tok {

void TokenizerImpl::defer_config(std::string text, std::string path) {
  deferred_config_ = std::move(text);
  deferred_config_path_ = std::move(path);
}

const nlohmann::json& TokenizerImpl::config() const {
  std::call_once(config_parsed_, [this] {
    if (deferred_config_.empty()) return;
    nlohmann::json parsed;
    try {
      parsed = nlohmann::json::parse(deferred_config_);
    } catch (const std::exception& e) {
      throw LoadError(deferred_config_path_, "", std::string("invalid JSON: ") + e.what());
    }
    if (!parsed.is_object()) throw LoadError(deferred_config_path_, "$", "expected an object");
    config_ = std::move(parsed);
  });
  return config_;
}

void TokenizerImpl::encode(std::string_view text, std::vector<std::uint32_t>& out, bool add_special) const {
  thread_local std::vector<Segment> segments;
  segments.clear();
  added->split_raw(text, 0, text.size(), segments);
  if (add_special) out.insert(out.end(), post.prefix.begin(), post.prefix.end());
  for (const Segment& seg : segments) {
    if (seg.token) {
      out.push_back(*seg.token);
    } else {
      encode_segment(text, seg.begin, seg.end, out);
    }
  }
  if (add_special) out.insert(out.end(), post.suffix.begin(), post.suffix.end());
}

void TokenizerImpl::encode_segment(std::string_view text, std::size_t begin, std::size_t end,
                                   std::vector<std::uint32_t>& out) const {
  if (!normalizer && !added->has_normalized_tokens() && pre_tokenizer && end - begin >= kBatchedBytes) {
    // Nothing rewrites a long segment before its batches: they read it in place, uncopied.
    encode_batched(text, begin, end, begin == 0, out);
    return;
  }
  thread_local std::string buffer;
  // A long segment's copy is not kept for the thread's next text (it would stay as large as
  // the longest text the thread ever saw).
  struct Release {
    ~Release() {
      if (buffer.capacity() > TokenizerImpl::kBatchedBytes) std::string().swap(buffer);
    }
  } release;
  buffer.assign(text.data() + begin, end - begin);
  const bool at_origin = begin == 0;
  if (normalizer) normalizer->normalize(buffer);
  if (!added->has_normalized_tokens()) {
    encode_normalized(buffer, 0, buffer.size(), at_origin, out);
    return;
  }
  std::vector<Segment> parts;
  added->split_normalized(buffer, 0, buffer.size(), parts);
  // Each part is encoded from its own copy: pre-tokenizers may rebuild their buffer.
  for (const Segment& part : parts) {
    if (part.token) {
      out.push_back(*part.token);
    } else {
      std::string piece = buffer.substr(part.begin, part.end - part.begin);
      encode_normalized(piece, 0, piece.size(), at_origin && part.begin == 0, out);
    }
  }
}

void TokenizerImpl::encode_normalized(std::string& buffer, std::size_t begin, std::size_t end, bool at_origin,
                                      std::vector<std::uint32_t>& out) const {
  if (begin == end) return;
  if (!pre_tokenizer) {
    model->encode_piece(std::string_view(buffer).substr(begin, end - begin), out);
    return;
  }
  if (end - begin >= kBatchedBytes) {
    encode_batched(buffer, begin, end, at_origin, out);
    return;
  }
  const std::string_view whole(buffer);
  if (const auto kind = pre_tokenizer->only_scanner()) {
    // The pieces are the scanner's spans: scanned a batch at a time and encoded as they come,
    // without the piece lists of apply().
    thread_local std::vector<Span> spans;
    std::vector<Span>& batch = spans;
    BpeModel::ThreadState& state = model->thread_state();
    // Memoised pieces' ids are gathered in the thread's buffer and appended a batch at a time;
    // the others go straight to `out` once what was gathered before them is.
    const BpeModel::PieceMemo memo = model->piece_memo(state);
    const char* const text = whole.data();
    std::uint32_t* const gathered = state.gathered.data();
    std::size_t filled = 0;
    const auto flush = [&] {
      out.insert(out.end(), gathered, gathered + filled);
      filled = 0;
    };
    for (std::size_t pos = begin; pos < end;) {
      batch.clear();
      pos = scan(*kind, whole, pos, end, batch, kScanBatch);
      for (const Span& sp : batch) {
        const char* const p = text + sp.first;  // the scanner's spans lie within `whole`
        const std::size_t n = sp.second - sp.first;
        if (filled + ChunkMemo::kMaxIds > BpeModel::ThreadState::kGatheredIds) flush();
        std::size_t count;
        if (memo.lookup(p, n, gathered + filled, count)) {
          filled += count;
          continue;
        }
        flush();
        model->encode_piece_missed(std::string_view(p, n), state, out);
      }
    }
    flush();
    return;
  }
  thread_local std::vector<Piece> pieces;
  pieces.assign(1, Piece{begin, end, at_origin});
  pre_tokenizer->apply(buffer, pieces);
  const std::string_view view(buffer);
  for (const Piece& p : pieces) model->encode_piece(view.substr(p.begin, p.end - p.begin), out);
}

void TokenizerImpl::encode_batched(std::string_view text, std::size_t begin, std::size_t end, bool at_origin,
                                   std::vector<std::uint32_t>& out) const {
  // A long text is pre-tokenized in batches: its pieces (24 bytes each, one per word or so) and
  // the matches behind them would otherwise cost several times the text itself.
  pre_tokenizer->apply_in_batches(text, Piece{begin, end, at_origin}, [&](std::string& b, std::vector<Piece>& ps) {
    const std::string_view view(b);
    for (const Piece& p : ps) model->encode_piece(view.substr(p.begin, p.end - p.begin), out);
  });
}

std::string TokenizerImpl::detokenize(const std::vector<std::uint32_t>& ids, bool skip_special) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (const std::uint32_t id : ids) {
    if (const AddedToken* a = added->by_id(id)) {
      if (skip_special && a->special) continue;
      tokens.push_back(a->content);
    } else if (const auto t = model->id_to_token(id)) {
      if (skip_special) {
        if (const AddedToken* same = added->by_content(*t); same && same->special) continue;
      }
      tokens.emplace_back(*t);
    }
  }
  if (!detokenizer) {
    std::string joined;
    for (std::size_t k = 0; k < tokens.size(); ++k) {
      if (k) joined.push_back(' ');
      joined += tokens[k];
    }
    return joined;
  }
  detokenizer->detokenize_chain(tokens);
  std::string joined;
  for (const std::string& t : tokens) joined += t;
  return joined;
}

}  // namespace overhead::tok
