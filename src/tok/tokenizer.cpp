#include "tok/tokenizer.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <utility>

#include <nlohmann/json.hpp>
#include <simdjson.h>

#include "tok/errors.hpp"
#include "tok/resolve.hpp"
#include "tok/tokenizer_cache.hpp"
#include "tok/tokenizer_impl.hpp"
#include "util/utf8.hpp"
#include "util/thread_pool.hpp"

namespace overhead::tok {

Tokenizer::Tokenizer(std::unique_ptr<TokenizerImpl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

std::shared_ptr<const Tokenizer> Tokenizer::load(const std::string& path) { return load(path, LoadOptions{}); }

std::shared_ptr<const Tokenizer> Tokenizer::load(const std::string& path, const LoadOptions& options, CacheStatus* status) {
  namespace fs = std::filesystem;
  std::string dir, file;
  if (fs::is_regular_file(path)) {
    file = path;
    dir = fs::path(path).parent_path().string();
    if (dir.empty()) dir = ".";
  } else {
    dir = resolve_tokenizer_dir(path);
    file = (fs::path(dir) / "tokenizer.json").string();
  }
  std::optional<std::string> cache_dir = options.cache_dir ? options.cache_dir : default_tokenizer_cache_dir();
  if (cache_dir && cache_dir->empty()) cache_dir.reset();
  auto impl = load_through_cache(dir, file, cache_dir, status, options.verify_cache || verify_cache_from_environment());
  // A short name or model id is the friendlier display name than the folder's.
  if (!fs::exists(path)) impl->name = path;
  return std::shared_ptr<const Tokenizer>(new Tokenizer(std::move(impl)));
}

void Tokenizer::encode_into(std::string_view text, Ids& out, bool add_special) const {
  // simdjson's validator checks 32-64 bytes per step; the repair path runs only on invalid input.
  if (simdjson::validate_utf8(text.data(), text.size())) {
    impl_->encode(text, out, add_special);
  } else {
    impl_->encode(util::utf8::repair(text), out, add_special);
  }
}

Ids Tokenizer::encode(std::string_view text, bool add_special) const {
  Ids ids;
  ids.reserve(text.size() / 3 + 4);
  encode_into(text, ids, add_special);
  return ids;
}

std::size_t Tokenizer::count(std::string_view text, bool add_special) const {
  thread_local Ids scratch;
  scratch.clear();
  encode_into(text, scratch, add_special);
  return scratch.size();
}

util::ThreadPool* Tokenizer::kept_pool() const {
  // Called by the holder of batch_pool_busy_.
  if (batch_pool_ && !batch_pool_->threads_alive()) {
    // A forked child's copy: its threads stayed in the parent, and joining them here would wait
    // forever, so the copy is let go unjoined (a few hundred bytes) and a new pool made.
    (void)batch_pool_.release();
  }
  if (!batch_pool_) batch_pool_ = std::make_unique<util::ThreadPool>(util::ThreadPool::threads_for(0, SIZE_MAX));
  return batch_pool_.get();
}

std::vector<Ids> Tokenizer::encode_batch(std::span<const std::string_view> texts, bool add_special,
                                         unsigned threads) const {
  return start_batch(texts, add_special, threads).finish();
}

struct Tokenizer::BackgroundBatch::State {
  std::vector<Ids> out;
  std::function<void(std::size_t)> job;
  std::atomic<bool>* kept_busy = nullptr;  // the kept pool's flag, set while this batch holds it
  util::ThreadPool* pool = nullptr;        // the pool running the batch; null once finished (or never started)
  std::unique_ptr<util::ThreadPool> own;   // a pool of this batch's own when the kept one was busy
  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  // Runs once the batch is finished (BackgroundBatch waits before it lets its state go).
  ~State() {
    if (kept_busy != nullptr) kept_busy->store(false, std::memory_order_release);
  }
};

Tokenizer::BackgroundBatch::BackgroundBatch(std::unique_ptr<State> state) : state_(std::move(state)) {}
Tokenizer::BackgroundBatch::BackgroundBatch(BackgroundBatch&&) noexcept = default;
Tokenizer::BackgroundBatch& Tokenizer::BackgroundBatch::operator=(BackgroundBatch&& other) noexcept {
  if (this != &other) {
    BackgroundBatch done(std::move(*this));  // waits for the batch this one held
    state_ = std::move(other.state_);
  }
  return *this;
}
Tokenizer::BackgroundBatch::~BackgroundBatch() {
  if (!state_ || state_->pool == nullptr) return;
  try {
    state_->pool->finish();  // the job reads the texts and writes `out`: it may not outlive them
  } catch (...) {
    // Nobody asked for the ids; an encoding error has nowhere to go.
  }
}

std::vector<Ids> Tokenizer::BackgroundBatch::finish() {
  if (!state_) return {};
  if (util::ThreadPool* pool = std::exchange(state_->pool, nullptr)) pool->finish();
  return std::move(state_->out);
}

Tokenizer::BackgroundBatch Tokenizer::start_batch(std::span<const std::string_view> texts, bool add_special,
                                                  unsigned threads) const {
  auto state = std::make_unique<BackgroundBatch::State>();
  state->out.resize(texts.size());
  const unsigned taking_part = util::ThreadPool::threads_for(threads, texts.size());
  if (taking_part <= 1) {
    // The caller's own thread, its caches warm: encoded now.
    for (std::size_t i = 0; i < texts.size(); ++i) state->out[i] = encode(texts[i], add_special);
    return BackgroundBatch(std::move(state));
  }
  std::vector<Ids>* out = &state->out;
  state->job = [this, texts, add_special, out](std::size_t i) { (*out)[i] = encode(texts[i], add_special); };
  bool expected = false;
  if (batch_pool_busy_.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
    state->kept_busy = &batch_pool_busy_;
    state->pool = kept_pool();
  } else {
    state->own = std::make_unique<util::ThreadPool>(taking_part);
    state->pool = state->own.get();
  }
  state->pool->start(texts.size(), state->job, taking_part);
  return BackgroundBatch(std::move(state));
}

std::vector<Ids> Tokenizer::encode_batch(std::span<const std::string> texts, bool add_special, unsigned threads) const {
  const std::vector<std::string_view> views(texts.begin(), texts.end());
  return encode_batch(std::span<const std::string_view>(views), add_special, threads);
}

std::string Tokenizer::decode(std::span<const TokenId> ids, bool skip_special) const {
  return impl_->detokenize(std::vector<TokenId>(ids.begin(), ids.end()), skip_special);
}

std::optional<TokenId> Tokenizer::token_to_id(std::string_view token) const {
  if (const AddedToken* a = impl_->added->by_content(token)) return a->id;
  return impl_->model->token_to_id(token);
}

std::optional<std::string> Tokenizer::id_to_token(TokenId id) const {
  if (const AddedToken* a = impl_->added->by_id(id)) return a->content;
  if (const auto t = impl_->model->id_to_token(id)) return std::string(*t);
  return std::nullopt;
}

std::size_t Tokenizer::vocab_size() const {
  std::size_t n = impl_->model->size();
  for (const AddedToken& a : impl_->added->tokens()) n = std::max<std::size_t>(n, a.id + 1);
  return n;
}

bool Tokenizer::is_special(TokenId id) const {
  const AddedToken* a = impl_->added->by_id(id);
  return a != nullptr && a->special;
}

std::optional<TokenId> Tokenizer::find_special(std::string_view text) const {
  // The same split encode() makes. Tokens matched on normalized text (normalized=true, rare for
  // special ones) are looked for in the raw text too: a client's text is the likelier carrier of
  // their literal form, and finding one more than encode() would only refuses more.
  thread_local std::vector<Segment> segments;
  const AddedVocabulary& added = *impl_->added;
  for (const bool normalized : {false, true}) {
    segments.clear();
    if (normalized) {
      if (!added.has_normalized_tokens()) break;
      added.split_normalized(text, 0, text.size(), segments);
    } else {
      added.split_raw(text, 0, text.size(), segments);
    }
    for (const Segment& s : segments)
      if (s.token && is_special(*s.token)) return *s.token;
  }
  return std::nullopt;
}

const nlohmann::json& Tokenizer::config() const { return impl_->config(); }

std::optional<std::string> Tokenizer::special_token(std::string_view key) const {
  const auto it = impl_->config().find(std::string(key));
  if (it == impl_->config().end()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object()) {
    const auto content = it->find("content");
    if (content != it->end() && content->is_string()) return content->get<std::string>();
  }
  return std::nullopt;
}

const std::string& Tokenizer::source_dir() const { return impl_->dir; }
const std::string& Tokenizer::name() const { return impl_->name; }

}  // namespace overhead::tok
