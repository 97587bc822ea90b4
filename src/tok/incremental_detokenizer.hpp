// Text back from token ids one id at a time, as an engine streams them: push(id) gives the text
// that id makes final, finish() the rest. The concatenation of every push() and finish() equals
// Tokenizer::decode(all ids, skip_special_tokens) byte for byte, and every piece is whole UTF-8
// characters (bytes that may still complete a character are held until they do or finish()).
//
// The decoder chain (tokenizer.json's "decoder", detokenizer.hpp) is streamed step by step:
//   - ByteLevel (llama-3, phi-4, GPT-4o ...): a token is its bytes; bytes are emitted up to a
//     trailing, still completable UTF-8 sequence. Lossy repair decides each byte from the bytes
//     of its own sequence only, so a prefix cut before a lead byte repairs as the whole does.
//   - SentencePiece chains (gemma, llama-2): per-token steps (Replace, Strip, Metaspace) before
//     ByteFallback, then ByteFallback, Fuse and a Strip of leading characters of the whole text.
//     Per-token steps depend on the token alone (Metaspace also on whether it is the first, which
//     is counted). ByteFallback renders a run of <0xNN> tokens as a whole (its bytes when valid,
//     else one U+FFFD per byte), so a run is held until a token that is not a byte ends it.
//   - No decoder: tokens joined by spaces, as HF does.
//   - Any other chain: held whole and decoded by finish() (exact, not incremental).
// One instance per stream; not thread-safe; the Tokenizer must outlive it.
//
// HF's fast tokenizers have no spaces_between_special_tokens (that is transformers' slow
// tokenizer option): their decode and DecodeStream take skip_special_tokens alone, and so does this.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tok/tokenizer.hpp"

namespace overhead::tok {

class Detokenizer;

struct DetokenizeOptions {
  bool skip_special_tokens = false;
};

class IncrementalDetokenizer {
 public:
  enum class Method { kByteLevel, kPieces, kSpaces, kWhole };

  explicit IncrementalDetokenizer(const Tokenizer& tokenizer, DetokenizeOptions options = {});

  // Appends to `out` the text id makes final (often empty while bytes are held).
  void push(TokenId id, std::string& out);
  std::string push(TokenId id) {
    std::string out;
    push(id, out);
    return out;
  }
  // Appends the rest: held bytes as decode() renders them (lossily). The stream starts anew after.
  void finish(std::string& out);
  std::string finish() {
    std::string out;
    finish(out);
    return out;
  }

  Method method() const { return method_; }

 private:
  const Tokenizer& tokenizer_;
  DetokenizeOptions options_;
  Method method_ = Method::kWhole;

  // kPieces: the per-token steps before ByteFallback, whether ByteFallback runs, and the leading
  // Strip of the fused text (content char and count).
  std::vector<const Detokenizer*> per_token_;
  std::vector<bool> per_token_is_metaspace_;
  bool byte_fallback_ = false;
  char32_t strip_content_ = 0;
  std::size_t strip_left_ = 0;
  std::size_t strip_start_ = 0;

  std::size_t tokens_seen_ = 0;  // tokens not skipped so far (Metaspace's first, the spaces' joins)
  std::string held_;             // kByteLevel: bytes of an incomplete character; kPieces: a byte run
  std::vector<TokenId> ids_;     // kWhole: every id
  std::vector<std::string> scratch_;

  bool token_text(TokenId id, std::string_view& text) const;
  void push_piece(std::string_view text, std::string& out);
  void flush_run(std::string& out);
  void emit_fused(std::string_view text, std::string& out);
  void reset();
};

}  // namespace overhead::tok
