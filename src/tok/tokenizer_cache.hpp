// The compiled tokenizer cache: a binary form of a loaded tokenizer, so a worker start maps one
// file instead of parsing tens of MB of JSON and rebuilding every hash table.
//
// One file per tokenizer.json location, `<folder name>-<hash of the path>.tokc` in the cache
// folder (never beside the model files, which may be read-only). It holds a fixed header
// (magic, format version, a fingerprint of the table hashing of this build, the sha256 of
// tokenizer.json, a checksum of tokenizer_config.json, the stamp of tokenizer.json - device, inode, size,
// mtime, ctime - a check of the header, the payload size and a payload checksum), then
// the payload: tokenizer.json without model.vocab and model.merges (parsed through the same
// checks as ever; it is a few KB) and the BPE model's tables, which the loaded model views in
// place. A file is used only if every header field matches, its size is exactly header plus
// payload, the checksum matches and every count and size the reader walks lies inside it;
// anything else (truncated, flipped bytes, another version, a changed tokenizer.json or config)
// is rebuilt from the JSON and replaced atomically (write to a temporary, rename). The tables'
// entries are checked where they are read, not walked at load.
// The payload checksum (the only pass over the whole 16-33 MB) is recomputed only when the cache
// file's own stat stamp differs from the one recorded beside it (`<file>.verified`) when it last
// matched, or when asked to (LoadOptions::verify_cache); otherwise the payload is mapped and only
// the pages the lookups touch are ever read.
// tokenizer.json is hashed only when its stamp differs from the file's (or was not trusted: a
// file changed within two seconds of the stat); a file accepted on the hash under a new stamp is
// rewritten with it once, so an unchanged tokenizer is never read, only stat'ed.
// A cache folder that cannot be written only means loading from JSON, never an error.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "tok/tokenizer.hpp"
#include "tok/tokenizer_impl.hpp"

namespace overhead::tok {

// The cache folder used when none is given: $OVERHEAD_TOKENIZER_CACHE (empty or "off": none),
// else $XDG_CACHE_HOME/overhead/tokenizers, else $HOME/.cache/overhead/tokenizers; nullopt when
// there is none of them.
std::optional<std::string> default_tokenizer_cache_dir();

// The cache file for tokenizer.json at `file` inside `cache_dir`.
std::string tokenizer_cache_path(const std::string& cache_dir, const std::string& file);

// True when $OVERHEAD_TOKENIZER_CACHE_VERIFY is set (and not "0"): every load through the cache
// recomputes the payload checksum, as LoadOptions::verify_cache does.
bool verify_cache_from_environment();

// Loads tokenizer.json at `file` (folder `dir`) through the cache in `cache_dir` (nullopt: no
// cache). Errors in the tokenizer files themselves throw LoadError exactly as without a cache.
// `verify`: recompute the payload checksum even when the file is unchanged since it last matched.
std::unique_ptr<TokenizerImpl> load_through_cache(const std::string& dir, const std::string& file,
                                                  const std::optional<std::string>& cache_dir, CacheStatus* status,
                                                  bool verify = false);

}  // namespace overhead::tok
