/* The C API: render a conversation with a tokenizer's chat template, count and decode its
 * tokens, encode a batch on two threads, and report an error.
 *
 *   c_example [TOKENIZER]   (a short name, a folder holding tokenizer.json, or an HF model id) */
#include <stdio.h>
#include <string.h>

#include <overhead/overhead.h>

int main(int argc, char** argv) {
  const char* name = argc > 1 ? argv[1] : "phi-4";
  overhead_chat* chat = NULL;
  if (overhead_chat_load(name, &chat) != OVERHEAD_OK) {
    fprintf(stderr, "c_example: %s\n", overhead_last_error());
    return 1;
  }
  const overhead_tokenizer* tok = overhead_chat_tokenizer(chat);

  const char* messages = "[{\"role\": \"user\", \"content\": \"Hello! \\u3053\\u3093\\u306b\\u3061\\u306f\"}]";
  char* text = NULL;
  size_t text_length = 0;
  overhead_ids ids = {NULL, 0};
  int failed = overhead_chat_render(chat, messages, NULL, 1, NULL, &text, &text_length) != OVERHEAD_OK ||
               overhead_encode(tok, text, text_length, 1, &ids) != OVERHEAD_OK;
  if (failed) {
    fprintf(stderr, "c_example: %s\n", overhead_last_error());
  } else {
    printf("%zu bytes rendered, %zu tokens, vocabulary %zu\n", text_length, ids.size, overhead_vocab_size(tok));
  }

  /* Decoding the ids without the added BOS gives the rendered text back. */
  overhead_ids plain = {NULL, 0};
  char* decoded = NULL;
  if (!failed && overhead_encode(tok, text, text_length, 0, &plain) == OVERHEAD_OK &&
      overhead_decode(tok, plain.data, plain.size, 0, &decoded, NULL) == OVERHEAD_OK) {
    printf("round trip: %s\n", strcmp(decoded, text) == 0 ? "same text" : "differs");
  }

  const char* texts[] = {"one", "two words", "three words here"};
  const size_t lengths[] = {3, 9, 16};
  overhead_ids batch[3];
  if (!failed && overhead_encode_batch(tok, texts, lengths, 3, 0, 2, batch) == OVERHEAD_OK) {
    printf("batch: %zu %zu %zu tokens\n", batch[0].size, batch[1].size, batch[2].size);
    for (int i = 0; i < 3; ++i) overhead_ids_free(&batch[i]);
  }

  /* Errors: a status code, and the message the `overhead` command would print. */
  overhead_tokenizer* missing = NULL;
  overhead_status status = overhead_tokenizer_load("no-such-tokenizer", &missing);
  printf("error %d: %.60s...\n", (int)status, overhead_last_error());

  overhead_string_free(decoded);
  overhead_ids_free(&plain);
  overhead_ids_free(&ids);
  overhead_string_free(text);
  overhead_chat_free(chat);
  return failed || status != OVERHEAD_ERROR_LOAD ? 1 : 0;
}
