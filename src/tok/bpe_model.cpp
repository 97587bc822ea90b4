#include "tok/bpe_model.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <functional>
#include <span>
#include <stdexcept>

#include "tok/byte_level.hpp"
#include "tok/piece_cache.hpp"
#include "util/utf8.hpp"

namespace overhead::tok {

namespace {
constexpr std::uint32_t kNone = ~0u;
constexpr std::uint32_t kNoRank = ~0u;
// Pieces up to this many symbols merge by rescanning a small array of pair ranks (no heap, no
// allocation); longer ones (SentencePiece segments with no pre-tokenizer, pathological runs) use
// the heap so the cost stays O(n log n).
constexpr std::size_t kSmallPiece = 16;
// Pieces up to this many bytes merge whole: looking for cut points would cost more than it saves.
constexpr std::size_t kChunkFrom = 16;

std::string byte_token(unsigned b) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  return std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">";
}

std::atomic<std::uint64_t> next_model_serial{1};

// The code point of the valid UTF-8 sequence at p, of `length` bytes led by b0: inline in the
// per-character loop of encode_chunked (the shared decoder was an out-of-line call there).
[[gnu::always_inline]] inline char32_t decode_at(const char* p, unsigned char b0, std::size_t length) {
  const auto c = [p](std::size_t k) { return static_cast<char32_t>(static_cast<unsigned char>(p[k]) & 0x3Fu); };
  switch (length) {
    case 1: return b0;
    case 2: return ((b0 & 0x1Fu) << 6) | c(1);
    case 3: return ((b0 & 0x0Fu) << 12) | (c(1) << 6) | c(2);
    default: return ((b0 & 0x07u) << 18) | (c(1) << 12) | (c(2) << 6) | c(3);
  }
}

// This thread's cache for the model with `serial` (serials are never reused, so a cache can never
// answer for a different model that happens to live at the same address).
BpeModel::ThreadState& thread_state_for(std::uint64_t serial, bool character_level) {
  // A few models per thread at most; the oldest state is dropped beyond that, so tokenizers that
  // are loaded, used and destroyed over a long run do not leave their caches behind on the thread.
  constexpr std::size_t kMaxModelsPerThread = 8;
  thread_local std::vector<std::pair<std::uint64_t, std::unique_ptr<BpeModel::ThreadState>>> states;
  for (auto& [s, state] : states)
    if (s == serial) return *state;
  if (states.size() >= kMaxModelsPerThread) {
    auto oldest = std::min_element(states.begin(), states.end(),
                                   [](const auto& a, const auto& b) { return a.first < b.first; });
    states.erase(oldest);
  }
  states.emplace_back(serial, std::make_unique<BpeModel::ThreadState>(character_level));
  return *states.back().second;
}
}  // namespace

BpeModel::BpeModel(BpeConfig config) : config_(std::move(config)), serial_(next_model_serial.fetch_add(1)) {
  // OVERHEAD_BPE_CACHE=0 turns the per-thread piece cache off (to measure the merge loop itself).
  const char* cache_env = std::getenv("OVERHEAD_BPE_CACHE");
  use_cache_ = !(cache_env && std::string(cache_env) == "0");
}

BpeModel::BpeModel(const std::vector<std::pair<std::string_view, std::uint32_t>>& vocab,
                   const std::vector<std::pair<std::string_view, std::string_view>>& merges, BpeConfig config)
    : BpeModel(std::move(config)) {
  std::uint32_t max_id = 0;
  for (const auto& [token, id] : vocab) max_id = std::max(max_id, id);
  id_bound_ = vocab.empty() ? 0 : std::size_t{max_id} + 1;
  source_vocab_.reserve(vocab.size());
  if (config_.byte_level) encode_vocab_.reserve(vocab.size());
  for (const auto& [token, id] : vocab) {
    source_vocab_.insert(token, id);
    if (config_.byte_level) {
      // Tokens with characters outside the byte mapping can never come out of merging bytes.
      if (auto bytes = byte_level::to_bytes(token)) encode_vocab_.insert(*bytes, id);
    }
  }

  // id -> token text, in id order; when an id repeats, the last entry of the file wins (as the
  // map HF builds from the vocabulary keeps the last).
  std::vector<std::uint32_t> order(vocab.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = static_cast<std::uint32_t>(k);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return vocab[a].second < vocab[b].second; });
  std::vector<std::uint32_t>& ids = token_ids_.vec();
  std::vector<std::uint32_t>& offsets = token_offsets_.vec();
  std::vector<char>& text = token_text_.vec();
  offsets.push_back(0);
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (k + 1 < order.size() && vocab[order[k + 1]].second == vocab[order[k]].second) continue;
    const auto& [token, id] = vocab[order[k]];
    ids.push_back(id);
    text.insert(text.end(), token.begin(), token.end());
    offsets.push_back(static_cast<std::uint32_t>(text.size()));
  }
  token_ids_.seal();
  token_offsets_.seal();
  token_text_.seal();
  // Dense while the table is at most twice the token count (plus slack for small fixtures).
  if (id_bound_ <= 2 * vocab.size() + 1024) {
    dense_index_.vec().assign(id_bound_, kNone);
    for (std::size_t k = 0; k < ids.size(); ++k) dense_index_.vec()[ids[k]] = static_cast<std::uint32_t>(k);
    dense_index_.seal();
  }

  merges_.reserve(merges.size());
  std::string joined;
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    joined.assign(left).append(right);
    const auto l = source_vocab_.find(left);
    const auto r = source_vocab_.find(right);
    const auto m = source_vocab_.find(joined);
    if (!l || !r || !m)
      throw std::invalid_argument("merge " + std::to_string(rank) + " (\"" + std::string(left) + "\" \"" +
                                  std::string(right) + "\") uses a token missing from the vocabulary");
    merges_.insert_if_absent(*l, *r, PairMap::Merge{static_cast<std::uint32_t>(rank), *m});
  }

  all_byte_ids_ = true;
  for (unsigned b = 0; b < 256; ++b) {
    std::optional<std::uint32_t> id;
    if (config_.byte_level) {
      id = encode_vocab().find(std::string(1, static_cast<char>(b)));
    } else if (config_.byte_fallback) {
      id = encode_vocab().find(byte_token(b));
    }
    byte_ids_[b] = id.value_or(kNone);
    all_byte_ids_ = all_byte_ids_ && id.has_value();
  }
  single_byte_ids_ = config_.byte_level && all_byte_ids_;
  if (!config_.byte_level) {
    std::vector<std::uint32_t>& chars = bmp_char_ids_.vec();
    chars.assign(0x10000, kNone);
    std::string ch;
    for (char32_t c = 0; c < 0x10000; ++c) {
      if (c >= 0xD800 && c <= 0xDFFF) continue;
      ch.clear();
      util::utf8::append(ch, c);
      if (auto id = encode_vocab().find(ch)) chars[c] = *id;
    }
    bmp_char_ids_.seal();
  }
  if (config_.unk_token) {
    unk_id_ = source_vocab_.find(*config_.unk_token);
    if (!unk_id_) throw std::invalid_argument("unk_token \"" + *config_.unk_token + "\" is not in the vocabulary");
  }
  build_boundaries(merges);
}

void BpeModel::build_boundaries(const std::vector<std::pair<std::string_view, std::string_view>>& merges) {
  // Chunking is exact only if every symbol BPE can form is a vocabulary token spelled by its
  // characters. Byte-fallback and unknown-token symbols are not; cuts are never placed next to
  // them (the known-character check of encode_chunked), and if a merge could combine them, chunking is off altogether.
  if (config_.byte_level && !all_byte_ids_) return;
  for (const auto& [left, right] : merges) {
    for (const std::string_view side : {left, right}) {
      const bool byte_token = side.size() == 6 && side.substr(0, 3) == "<0x";
      if (byte_token || (config_.unk_token && side == *config_.unk_token)) return;
    }
  }
  for (std::size_t k = 0; k < token_ids_.size(); ++k) {
    const std::string_view token(token_text_.data() + token_offsets_[k], token_offsets_[k + 1] - token_offsets_[k]);
    if (config_.byte_level) {
      if (auto raw = byte_level::to_bytes(token)) boundaries_.add_token(*raw);
    } else {
      boundaries_.add_token(token);
    }
  }
  chunking_ = true;
}

std::optional<std::uint32_t> BpeModel::token_to_id(std::string_view token) const { return source_vocab_.find(token); }

std::optional<std::string_view> BpeModel::id_to_token(std::uint32_t id) const {
  std::size_t k;
  if (!dense_index_.empty()) {
    if (id >= dense_index_.size() || dense_index_[id] == kNone) return std::nullopt;
    k = dense_index_[id];
  } else {
    const auto ids = token_ids_.span();
    const auto it = std::lower_bound(ids.begin(), ids.end(), id);
    if (it == ids.end() || *it != id) return std::nullopt;
    k = static_cast<std::size_t>(it - ids.begin());
  }
  // A table read from a cache is checked here, entry by entry, rather than walked in full at
  // load: an entry that points outside the text (a file edited on purpose) is no token.
  if (k >= token_ids_.size()) return std::nullopt;
  const std::uint32_t begin = token_offsets_[k], end = token_offsets_[k + 1];
  if (begin > end || end > token_text_.size()) return std::nullopt;
  return std::string_view(token_text_.data() + begin, end - begin);
}

std::uint64_t BpeModel::layout_fingerprint() {
  return StringIdMap::layout_fingerprint() ^ (PairMap::layout_fingerprint() << 1) ^
         (MergeBoundaries::layout_fingerprint() << 2) ^ sizeof(Symbol);
}

void BpeModel::write(CacheWriter& w) const {
  encode_vocab_.write(w);
  source_vocab_.write(w);
  w.array(token_ids_.span());
  w.array(token_offsets_.span());
  w.array(token_text_.span());
  w.array(dense_index_.span());
  w.u64(id_bound_);
  merges_.write(w);
  w.array(std::span<const std::uint32_t>(byte_ids_));
  w.u64(all_byte_ids_);
  w.array(bmp_char_ids_.span());
  w.u64(unk_id_.has_value());
  w.u64(unk_id_.value_or(0));
  boundaries_.write(w);
  w.u64(chunking_);
}

std::unique_ptr<BpeModel> BpeModel::read(CacheReader& r, BpeConfig config, std::shared_ptr<const void> backing) {
  std::unique_ptr<BpeModel> m(new BpeModel(std::move(config)));
  m->backing_ = std::move(backing);
  m->encode_vocab_.read(r);
  m->source_vocab_.read(r);
  m->token_ids_.view(r.array<std::uint32_t>());
  m->token_offsets_.view(r.array<std::uint32_t>());
  m->token_text_.view(r.array<char>());
  m->dense_index_.view(r.array<std::uint32_t>());
  m->id_bound_ = r.u64_below(std::uint64_t{1} << 32, "id bound");
  // What id_to_token relies on that one look settles: one offset more than ids, the last at the
  // end of the text, a dense index (if any) with one entry per id. The entries themselves are
  // checked where id_to_token reads them, not walked here (a walk would read megabytes at start).
  const auto ids = m->token_ids_.span();
  const auto offsets = m->token_offsets_.span();
  if (offsets.size() != ids.size() + 1 || offsets[0] != 0 || offsets.back() != m->token_text_.size())
    throw CacheFormatError("token offsets do not match the token text");
  if (!m->dense_index_.empty() && m->dense_index_.size() != m->id_bound_)
    throw CacheFormatError("dense index size differs from the id bound");
  m->merges_.read(r);
  const auto bytes = r.array<std::uint32_t>();
  if (bytes.size() != m->byte_ids_.size()) throw CacheFormatError("byte table has the wrong size");
  std::copy(bytes.begin(), bytes.end(), m->byte_ids_.begin());
  m->all_byte_ids_ = r.u64_below(2, "flag") != 0;
  m->single_byte_ids_ = m->config_.byte_level && m->all_byte_ids_;
  m->bmp_char_ids_.view(r.array<std::uint32_t>());
  if (m->config_.byte_level ? !m->bmp_char_ids_.empty() : m->bmp_char_ids_.size() != 0x10000)
    throw CacheFormatError("character table has the wrong size");
  if (r.u64_below(2, "flag") != 0) {
    m->unk_id_ = static_cast<std::uint32_t>(r.u64_below(std::uint64_t{1} << 32, "unknown-token id"));
  } else {
    r.u64();
  }
  if (m->config_.unk_token.has_value() != m->unk_id_.has_value())
    throw CacheFormatError("unknown token differs from the configuration");
  m->boundaries_.read(r);
  m->chunking_ = r.u64_below(2, "flag") != 0;
  return m;
}

void BpeModel::initial_symbols(std::string_view piece, std::vector<Symbol>& symbols) const {
  symbols.clear();
  auto push = [&](std::uint32_t id, std::uint32_t length) {
    const auto n = static_cast<std::int32_t>(symbols.size());
    symbols.push_back(Symbol{id, n - 1, n + 1, length, kNoRank, 0});
  };
  if (config_.byte_level) {
    if (all_byte_ids_) {
      // The common case (every byte has a token): fill the array directly.
      const std::size_t n = piece.size();
      symbols.resize(n);
      Symbol* out = symbols.data();
      for (std::size_t k = 0; k < n; ++k) {
        const auto pos = static_cast<std::int32_t>(k);
        out[k] = Symbol{byte_ids_[static_cast<unsigned char>(piece[k])], pos - 1, pos + 1, 1, kNoRank, 0};
      }
    } else {
      for (const char ch : piece) {
        const std::uint32_t id = byte_ids_[static_cast<unsigned char>(ch)];
        if (id != kNone) {
          push(id, 1);
        } else if (unk_id_) {
          push(*unk_id_, 1);
        }
      }
    }
  } else {
    // Mirrors HF's merge_word: a known char is one symbol; else its bytes as <0xXX> tokens when
    // all exist (byte_fallback); else the unknown token, consecutive ones fused when fuse_unk.
    std::uint32_t pending_unk_length = 0;
    std::size_t i = 0;
    while (i < piece.size()) {
      const std::size_t start = i;
      const char32_t c = util::utf8::next(piece, i);
      const auto length = static_cast<std::uint32_t>(i - start);
      std::uint32_t id = kNone;
      if (c < 0x10000) {
        id = bmp_char_ids_[c];
      } else if (auto found = encode_vocab().find(piece.substr(start, length))) {
        id = *found;
      }
      if (id != kNone) {
        if (pending_unk_length) push(*unk_id_, pending_unk_length), pending_unk_length = 0;
        push(id, length);
        continue;
      }
      if (config_.byte_fallback) {
        bool all = true;
        for (std::size_t k = start; k < i; ++k) all = all && byte_ids_[static_cast<unsigned char>(piece[k])] != kNone;
        if (all) {
          // HF adds the byte tokens without flushing a pending unk first; keep that order.
          for (std::size_t k = start; k < i; ++k) push(byte_ids_[static_cast<unsigned char>(piece[k])], 1);
          continue;
        }
      }
      if (unk_id_) {
        if (pending_unk_length && config_.fuse_unk) {
          pending_unk_length += length;
        } else {
          if (pending_unk_length) push(*unk_id_, pending_unk_length);
          pending_unk_length = length;
        }
      }
    }
    if (pending_unk_length) push(*unk_id_, pending_unk_length);
  }
  if (!symbols.empty()) symbols.back().next = -1;
}

void BpeModel::merge_small(std::vector<Symbol>& symbols, PairCache& pairs) const {
  // Compact arrays: ids[k] is symbol k, rank[k]/merged[k] describe the pair (k, k+1).
  const std::size_t n0 = symbols.size();
  std::uint32_t ids[kSmallPiece];
  std::uint32_t rank[kSmallPiece];
  std::uint32_t merged[kSmallPiece];
  std::size_t n = n0;
  for (std::size_t k = 0; k < n; ++k) ids[k] = symbols[k].id;
  auto lookup = [&](std::size_t k) {
    const PairMap::Merge m = pairs.find(merges_, ids[k], ids[k + 1]);
    rank[k] = m.rank;
    merged[k] = m.id;
  };
  for (std::size_t k = 0; k + 1 < n; ++k) lookup(k);
  while (n > 1) {
    std::size_t best = 0;
    for (std::size_t k = 1; k + 1 < n; ++k)
      if (rank[k] < rank[best]) best = k;
    if (rank[best] == kNoRank) break;
    ids[best] = merged[best];
    for (std::size_t k = best + 1; k + 1 < n; ++k) {
      ids[k] = ids[k + 1];
      rank[k] = rank[k + 1];
      merged[k] = merged[k + 1];
    }
    --n;
    if (best > 0) lookup(best - 1);
    if (best + 1 < n) lookup(best);
  }
  symbols.resize(n);
  for (std::size_t k = 0; k < n; ++k) symbols[k].id = ids[k];
}

void BpeModel::merge_large(std::vector<Symbol>& symbols, PairCache& pairs) const {
  // HF's Word::merge_all: a min-heap of (rank, position) over the current adjacent pairs. Each
  // symbol remembers the rank of the pair it starts, so a popped entry is stale exactly when
  // that rank changed (ranks identify merges uniquely) -- no lookup to validate it.
  thread_local std::vector<std::uint64_t> heap;
  heap.clear();
  auto consider = [&](std::int32_t pos) {
    Symbol& left = symbols[pos];
    left.pair_rank = kNoRank;
    if (left.next < 0) return;
    const PairMap::Merge m = pairs.find(merges_, left.id, symbols[left.next].id);
    if (m.rank != kNoRank) {
      left.pair_rank = m.rank;
      left.pair_id = m.id;
      heap.push_back((std::uint64_t{m.rank} << 32) | static_cast<std::uint32_t>(pos));
      std::push_heap(heap.begin(), heap.end(), std::greater<>());
    }
  };
  for (std::int32_t k = 0; k < static_cast<std::int32_t>(symbols.size()); ++k) consider(k);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const std::uint64_t top = heap.back();
    heap.pop_back();
    const auto pos = static_cast<std::int32_t>(top & 0xFFFFFFFFu);
    const auto rank = static_cast<std::uint32_t>(top >> 32);
    Symbol& left = symbols[pos];
    if (left.length == 0 || left.pair_rank != rank) continue;
    Symbol& right = symbols[left.next];
    left.id = left.pair_id;
    left.length += right.length;
    left.next = right.next;
    right.length = 0;
    right.pair_rank = kNoRank;
    if (left.next >= 0) symbols[left.next].prev = pos;
    if (left.prev >= 0) consider(left.prev);
    consider(pos);
  }
  std::size_t out = 0;
  for (std::int32_t k = 0; k >= 0; k = symbols[k].next) symbols[out++].id = symbols[k].id;
  symbols.resize(out);
}


BpeModel::ThreadState& BpeModel::thread_state_slow() const { return thread_state_for(serial_, !config_.byte_level); }

void BpeModel::encode_piece_slow(std::string_view piece, ThreadState& state, std::vector<std::uint32_t>& out) const {
  if (piece.size() <= ChunkMemo::kMaxBytes && use_cache_) {
    // Missed by the short-piece memo (encode_piece): encoded and remembered.
    const std::size_t first = out.size();
    encode_uncached(piece, state, false, 0, out);
    state.short_pieces.store(piece, out.data() + first, out.size() - first);
    return;
  }
  // Longer pieces (and the few short ones with more ids than the memo holds, every time) go
  // through the hashed piece cache.
  const bool cacheable = use_cache_ && piece.size() > 2;
  std::uint64_t hash = 0;
  if (cacheable) {
    hash = hash_bytes(piece);
    if (state.pieces.lookup(piece, hash, out)) return;
  }
  const std::size_t first = out.size();
  encode_uncached(piece, state, cacheable, hash, out);
  if (cacheable) state.pieces.store(piece, hash, out.data() + first, out.size() - first);
}

void BpeModel::encode_uncached(std::string_view piece, ThreadState& state, bool hashed, std::uint64_t hash,
                               std::vector<std::uint32_t>& out) const {
  // After the caches (which hold whole-piece results either way): the vocabulary probe is a miss
  // into a table of megabytes, and a repeated piece never needs it again.
  if (config_.ignore_merges) {
    if (auto id = hashed ? encode_vocab().find(piece, hash) : encode_vocab().find(piece)) {
      out.push_back(*id);
      return;
    }
  }
  if (chunking_ && piece.size() > kChunkFrom) {
    encode_chunked(piece, state, out);
  } else if (piece.size() <= ChunkMemo::kMaxBytes) {
    merge_symbols(piece, state.pairs, out);  // its result is memoised whole by the caller
  } else {
    merge_chunk(piece, state, out);
  }
}

void BpeModel::encode_chunked(std::string_view piece, ThreadState& state, std::vector<std::uint32_t>& out) const {
  // Cut where no token can span and merge the chunks one by one (merge_boundaries.hpp). Each
  // character is decoded once; its boundary with the previous one is asked of the per-thread
  // memo first. A chunk of one character of a character-level model is that character's id.
  const char* p = piece.data();
  const std::size_t n = piece.size();
  std::size_t chunk_start = 0, chars_in_chunk = 0, i = 0;
  char32_t prev_cp = 0;
  std::size_t prev_length = 0;
  bool prev_known = false;
  std::uint32_t prev_id = kNone;
  const BoundaryMemo::Lookup boundary_memo = state.boundaries.lookup();
  auto flush = [&](std::size_t end) {
    if (chars_in_chunk == 1 && prev_id != kNone) {
      out.push_back(prev_id);
    } else if (end - chunk_start <= ChunkMemo::kMaxBytes) {
      merge_chunk(piece.substr(chunk_start, end - chunk_start), state, out);
    } else {
      merge_long_chunk(piece.substr(chunk_start, end - chunk_start), state, out);
    }
  };
  while (i < n) {
    const std::size_t start = i;
    const auto b0 = static_cast<unsigned char>(p[i]);
    const std::size_t length = util::utf8::sequence_length(b0);
    const char32_t cp = decode_at(p + i, b0, length);
    i += length;
    std::uint32_t id = kNone;  // character-level only: the character's own token
    bool known = true;
    if (!config_.byte_level) {
      if (cp < 0x10000) {
        id = bmp_char_ids_[cp];
      } else if (auto found = encode_vocab().find(piece.substr(start, length))) {
        id = *found;
      }
      known = id != kNone;
    }
    if (start > chunk_start && prev_known && known &&
        boundary_memo.cuttable(prev_cp, cp, [&] {
          if (!config_.byte_level) return boundaries_.cuttable_whole_chars(prev_cp, cp);
          return boundaries_.cuttable(prev_cp, prev_length, static_cast<unsigned char>(p[start - 1]), cp, length, b0);
        })) {
      flush(start);
      chunk_start = start;
      chars_in_chunk = 0;
    }
    ++chars_in_chunk;
    prev_cp = cp;
    prev_length = length;
    prev_known = known;
    prev_id = id;
  }
  flush(n);
}

void BpeModel::merge_chunk(std::string_view chunk, ThreadState& state, std::vector<std::uint32_t>& out) const {
  const bool memo = chunk.size() <= ChunkMemo::kMaxBytes;
  if (memo && state.chunks.lookup(chunk, out)) return;
  const std::size_t first = out.size();
  merge_symbols(chunk, state.pairs, out);
  if (memo) state.chunks.store(chunk, out.data() + first, out.size() - first);
}

void BpeModel::merge_long_chunk(std::string_view chunk, ThreadState& state, std::vector<std::uint32_t>& out) const {
  if (!use_cache_ || chunk.size() > ThreadState::kMaxLongChunk) return merge_symbols(chunk, state.pairs, out);
  const std::uint64_t hash = hash_bytes(chunk);
  if (state.long_chunks.lookup(chunk, hash, out)) return;
  const std::size_t first = out.size();
  merge_symbols(chunk, state.pairs, out);
  state.long_chunks.store(chunk, hash, out.data() + first, out.size() - first);
}

void BpeModel::merge_symbols(std::string_view chunk, PairCache& pairs, std::vector<std::uint32_t>& out) const {
  thread_local std::vector<Symbol> symbols;
  initial_symbols(chunk, symbols);
  if (symbols.size() <= kSmallPiece) {
    merge_small(symbols, pairs);
  } else {
    merge_large(symbols, pairs);
  }
  for (const Symbol& sym : symbols) out.push_back(sym.id);
}

}  // namespace overhead::tok
