/* The C API of overhead: load a HuggingFace tokenizer (BPE family) and its chat template, encode
 * text to the same ids as HF tokenizers, decode ids, and render conversations exactly as
 * transformers' apply_chat_template(..., tokenize=False) does.
 *
 * Conventions:
 *   - Handles are opaque; every handle made by a *_load function is released with its *_free.
 *     A loaded handle is immutable: any number of threads may use it at once.
 *   - Every function that can fail returns an overhead_status. OVERHEAD_OK is 0; on any other code
 *     overhead_last_error() holds the message (the same text the `overhead` command prints), valid
 *     in the calling thread until its next call into this API.
 *   - Text is UTF-8 with an explicit length (it may hold NUL bytes); text that is not valid UTF-8
 *     is repaired (each invalid sequence becomes U+FFFD) before encoding, as HF does.
 *   - Results the library allocates (overhead_ids, strings) are released with overhead_ids_free /
 *     overhead_string_free, never with free().
 *   - No C++ exception ever crosses this boundary.
 */
#ifndef OVERHEAD_OVERHEAD_H
#define OVERHEAD_OVERHEAD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum overhead_status {
  OVERHEAD_OK = 0,
  OVERHEAD_ERROR_ARGUMENT = 1, /* a NULL handle or pointer, or a bad value (the message names it) */
  OVERHEAD_ERROR_LOAD = 2,     /* the tokenizer or its files could not be found or are unsupported */
  OVERHEAD_ERROR_TEMPLATE = 3, /* the chat template failed to compile or to render */
  OVERHEAD_ERROR_JSON = 4,     /* messages or variables are not valid JSON of the right shape */
  OVERHEAD_ERROR_MEMORY = 5,   /* out of memory */
  OVERHEAD_ERROR_INTERNAL = 6  /* anything else (the message says what) */
} overhead_status;

/* A tokenizer: the files behind a short name (phi-4, llama-3.3-70b-instruct, ...), a folder
 * holding tokenizer.json, a tokenizer.json file, or an HF model id found in the local HF cache. */
typedef struct overhead_tokenizer overhead_tokenizer;
/* A tokenizer bound to the chat template of its tokenizer_config.json. */
typedef struct overhead_chat overhead_chat;

/* Token ids owned by the library. */
typedef struct overhead_ids {
  uint32_t* data;
  size_t size;
} overhead_ids;

/* The message of the last failed call in this thread ("" when none). */
const char* overhead_last_error(void);

overhead_status overhead_tokenizer_load(const char* name_or_path, overhead_tokenizer** out);
void overhead_tokenizer_free(overhead_tokenizer* tokenizer);

/* tokenizer(text, add_special_tokens=add_special)["input_ids"]; *out is filled (release it with
 * overhead_ids_free). */
overhead_status overhead_encode(const overhead_tokenizer* tokenizer, const char* text, size_t length, int add_special,
                                overhead_ids* out);
/* Encodes texts[i] (lengths[i] bytes) into out[i] for i < count, on `threads` threads (0 = all
 * cores; never more than the cores or `count`, a larger number is capped). `out` is an array of
 * `count` overhead_ids the caller provides; each is released with overhead_ids_free. On failure
 * no element of `out` holds memory. */
overhead_status overhead_encode_batch(const overhead_tokenizer* tokenizer, const char* const* texts,
                                      const size_t* lengths, size_t count, int add_special, unsigned threads,
                                      overhead_ids* out);
/* Number of ids overhead_encode would give. */
overhead_status overhead_count(const overhead_tokenizer* tokenizer, const char* text, size_t length, int add_special,
                               size_t* out);
/* tokenizer.decode(ids, skip_special_tokens=skip_special): *out is a NUL-terminated string of
 * *out_length bytes (out_length may be NULL); release it with overhead_string_free. */
overhead_status overhead_decode(const overhead_tokenizer* tokenizer, const uint32_t* ids, size_t count,
                                int skip_special, char** out, size_t* out_length);
/* Highest id + 1 (model vocabulary and added tokens). */
size_t overhead_vocab_size(const overhead_tokenizer* tokenizer);

/* Loads the tokenizer `name_or_path` and compiles its chat template (tokenizer_config.json). */
overhead_status overhead_chat_load(const char* name_or_path, overhead_chat** out);
void overhead_chat_free(overhead_chat* chat);
/* The tokenizer of a chat handle, owned by it (valid until overhead_chat_free). */
const overhead_tokenizer* overhead_chat_tokenizer(const overhead_chat* chat);
/* Renders `messages_json` (a JSON array of messages) as apply_chat_template(messages,
 * add_generation_prompt=..., tokenize=False, **variables) does. `variables_json` is NULL or a
 * JSON object of further template variables (tools, documents, enable_thinking, ...); `date` is
 * NULL (the clock) or "YYYY-MM-DD", which pins strftime_now. *out as for overhead_decode. */
overhead_status overhead_chat_render(const overhead_chat* chat, const char* messages_json, const char* variables_json,
                                     int add_generation_prompt, const char* date, char** out, size_t* out_length);

void overhead_ids_free(overhead_ids* ids); /* releases ids->data and zeroes *ids; NULL is allowed */
void overhead_string_free(char* text);     /* NULL is allowed */

#ifdef __cplusplus
}
#endif

#endif /* OVERHEAD_OVERHEAD_H */
