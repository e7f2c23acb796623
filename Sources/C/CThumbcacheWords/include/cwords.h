#ifndef CTHUMBCACHE_WORDS_H
#define CTHUMBCACHE_WORDS_H

#include <stdint.h>

// Words of UTF-8 text by the Unicode word-break rules (ICU, with its dictionaries for Chinese,
// Japanese, Thai and the other scripts written without spaces), and their folded form. ICU's
// functions carry its version in their names, which Swift cannot call through the macros; this
// shim is the only place that names them.

typedef struct tc_words tc_words;

// A word iterator, or NULL (with ICU's error name in `error`) if ICU cannot make one.
tc_words *tc_words_open(char *error, int error_size);
void tc_words_close(tc_words *words);

// Iterates the words of `utf8[0..<length]` from the start; the text must outlive the iteration.
// Returns 0, or -1 if ICU refused the text.
int tc_words_set(tc_words *words, const char *utf8, int64_t length);

// The next word's byte range in the text set; 1 if there is one, 0 at the end. Spaces,
// punctuation and symbols between words are skipped.
int tc_words_next(tc_words *words, int64_t *start, int64_t *end);

// `word` folded: NFKC, case folded, diacritics (non-spacing marks) removed, into `out`.
// Returns the folded length in bytes (more than `out_size` means it did not fit), or -1.
int32_t tc_words_fold(const char *word, int32_t length, char *out, int32_t out_size);

// `text` without case (full case folding) and/or diacritics (the non-spacing marks of its
// canonical decomposition), composed (NFC): what the metadata index folds a value to. A string
// from malloc, its length in `folded_length`; NULL if ICU cannot be loaded or refuses the text.
char *tc_text_fold(const char *text, int64_t length, int fold_case, int fold_diacritics, int64_t *folded_length);

#endif
