// The public face of the tokenizer: load a HuggingFace `tokenizer.json` (BPE family) and encode
// text to the same ids as HF tokenizers, or decode ids back to text.
//
// A loaded Tokenizer is immutable: every method is const and safe to call from many threads at
// once with no lock (per-thread scratch space lives in thread_local storage). Load it once and
// share the pointer.
#pragma once

#include <cstdint>
#include <atomic>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace overhead::util {
class ThreadPool;
}

namespace overhead::tok {

using TokenId = std::uint32_t;
using Ids = std::vector<TokenId>;

class TokenizerImpl;

// How Tokenizer::load went through the compiled cache (tokenizer_cache.hpp).
struct CacheStatus {
  enum class Kind {
    kOff,         // no cache folder: loaded from JSON
    kHit,         // loaded from a valid cache file
    kBuilt,       // no cache file yet: loaded from JSON and wrote one
    kRebuilt,     // a cache file was refused (see reason): loaded from JSON and replaced it
    kNotWritten,  // loaded from JSON; writing the cache failed (see reason), nothing changed
  };
  Kind kind = Kind::kOff;
  std::string file;    // the cache file's path (empty when off)
  std::string reason;  // why a file was refused or could not be written
  // On a hit: the payload checksum was recomputed (the file changed since it last matched, it was
  // never verified under a settled stamp, or LoadOptions::verify_cache), rather than trusted.
  bool payload_verified = false;
};

struct LoadOptions {
  // Folder of compiled caches: nullopt = the default (default_tokenizer_cache_dir() in
  // tokenizer_cache.hpp: $OVERHEAD_TOKENIZER_CACHE, $XDG_CACHE_HOME/overhead/tokenizers or
  // ~/.cache/overhead/tokenizers), "" = load from JSON without a cache.
  std::optional<std::string> cache_dir;
  // Recompute the cache file's payload checksum even when the file is unchanged since it last
  // matched (otherwise only the header is checked and the tables are read as used;
  // $OVERHEAD_TOKENIZER_CACHE_VERIFY=1 does the same for every load).
  bool verify_cache = false;
};

class Tokenizer {
 public:
  // `path` is a folder holding tokenizer.json (and optionally tokenizer_config.json), a path to a
  // tokenizer.json file, a short name (see resolve.hpp) or an HF model id in the local HF cache.
  // Throws LoadError naming the file and JSON path of anything unsupported.
  // A valid compiled cache makes this a file mapping instead of a JSON parse (LoadOptions).
  static std::shared_ptr<const Tokenizer> load(const std::string& path);
  static std::shared_ptr<const Tokenizer> load(const std::string& path, const LoadOptions& options,
                                               CacheStatus* status = nullptr);

  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // tokenizer(text, add_special_tokens=add_special)["input_ids"]. Text that is not valid UTF-8
  // is first repaired: every maximal invalid subsequence becomes U+FFFD (as Python's
  // bytes.decode("utf-8", "replace") and Rust's from_utf8_lossy do).
  Ids encode(std::string_view text, bool add_special = true) const;
  // Appends to `out` instead of returning a new vector (no allocation once `out` has capacity).
  void encode_into(std::string_view text, Ids& out, bool add_special = true) const;
  // Number of ids encode() would return.
  std::size_t count(std::string_view text, bool add_special = true) const;
  // Encodes every text on `threads` threads (0 = all cores); result i is for text i. Never more
  // threads than the cores or the texts (a larger count is capped). One thread is the caller's
  // own; more run on a pool the tokenizer keeps for its life, so the per-thread caches of its
  // threads stay warm from one batch to the next (a fresh thread starts them empty and encodes at
  // about half speed). A batch that finds the kept pool busy with another runs on a pool of its own.
  std::vector<Ids> encode_batch(std::span<const std::string_view> texts, bool add_special = true,
                                unsigned threads = 0) const;
  std::vector<Ids> encode_batch(std::span<const std::string> texts, bool add_special = true,
                                unsigned threads = 0) const;
  // A batch encoded in the background on the kept pool's threads (`threads` as encode_batch,
  // the caller counted among them), for a caller with other work meanwhile: the Python binding
  // turns one part's ids into lists while the next part encodes. finish() waits (the caller
  // taking what is left) and returns the ids; the destructor waits too. The texts and the
  // tokenizer must outlive it.
  // When the kept pool is busy with another batch, or one thread is asked for, the batch is
  // encoded at start, on the caller.
  class BackgroundBatch {
   public:
    BackgroundBatch(BackgroundBatch&&) noexcept;
    BackgroundBatch& operator=(BackgroundBatch&&) noexcept;
    ~BackgroundBatch();
    std::vector<Ids> finish();

   private:
    friend class Tokenizer;
    struct State;
    explicit BackgroundBatch(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
  };
  BackgroundBatch start_batch(std::span<const std::string_view> texts, bool add_special = true,
                              unsigned threads = 0) const;
  // tokenizer.decode(ids, skip_special_tokens=skip_special). Unknown ids are skipped, as HF does.
  std::string decode(std::span<const TokenId> ids, bool skip_special = false) const;

  // Vocabulary lookups (model vocabulary and added tokens).
  std::optional<TokenId> token_to_id(std::string_view token) const;
  std::optional<std::string> id_to_token(TokenId id) const;
  std::size_t vocab_size() const;  // highest id + 1
  bool is_special(TokenId id) const;
  // The first special added token (special=true) that encode() would find in `text`, leftmost,
  // as HF finds them (special-token text inside any input is parsed as the token); nullopt when
  // none. encode() itself stays HF's; a caller that must not let a client write control tokens
  // (the gateway's --special-tokens-in-content) asks this first. `text` must be valid UTF-8.
  std::optional<TokenId> find_special(std::string_view text) const;

  // tokenizer_config.json as loaded (an empty object when the folder has none). Which of its
  // chat templates is "the" template is binding::ChatBinding's rule, not the tokenizer's.
  const nlohmann::json& config() const;
  // Special-token strings from tokenizer_config.json ("bos_token", "eos_token", ...), given
  // either as a string or as an AddedToken object there; nullopt when absent or null.
  std::optional<std::string> special_token(std::string_view key) const;

  // Where the files came from (the folder) and a display name (the alias or folder name).
  const std::string& source_dir() const;
  const std::string& name() const;

  const TokenizerImpl& impl() const { return *impl_; }

 private:
  explicit Tokenizer(std::unique_ptr<TokenizerImpl> impl);
  std::unique_ptr<TokenizerImpl> impl_;
  // The kept pool, made by the first batch of 2+ threads (again in a forked child, whose copy has
  // no threads), or nullptr.
  util::ThreadPool* kept_pool() const;
  // Set by the batch running on batch_pool_ (a flag, not a mutex: a batch may end on another
  // thread than the one that started it).
  mutable std::atomic<bool> batch_pool_busy_{false};
  mutable std::unique_ptr<util::ThreadPool> batch_pool_;
};

}  // namespace overhead::tok
