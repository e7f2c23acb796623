#include "cwords.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/ubrk.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utext.h>

struct tc_words {
    UBreakIterator *breaks;
    UText *text;
    int32_t last;
};

tc_words *tc_words_open(char *error, int error_size) {
    UErrorCode status = U_ZERO_ERROR;
    UBreakIterator *breaks = ubrk_open(UBRK_WORD, "", NULL, 0, &status);
    if (U_FAILURE(status)) {
        snprintf(error, (size_t)error_size, "%s", u_errorName(status));
        return NULL;
    }
    tc_words *words = calloc(1, sizeof *words);
    if (!words) {
        ubrk_close(breaks);
        snprintf(error, (size_t)error_size, "out of memory");
        return NULL;
    }
    words->breaks = breaks;
    return words;
}

void tc_words_close(tc_words *words) {
    if (!words) return;
    ubrk_close(words->breaks);
    if (words->text) utext_close(words->text);
    free(words);
}

int tc_words_set(tc_words *words, const char *utf8, int64_t length) {
    UErrorCode status = U_ZERO_ERROR;
    // UText over UTF-8 reports native indices: byte offsets into the caller's text, no copy.
    words->text = utext_openUTF8(words->text, utf8, length, &status);
    if (U_FAILURE(status)) return -1;
    ubrk_setUText(words->breaks, words->text, &status);
    if (U_FAILURE(status)) return -1;
    words->last = ubrk_first(words->breaks);
    return 0;
}

int tc_words_next(tc_words *words, int64_t *start, int64_t *end) {
    for (;;) {
        int32_t next = ubrk_next(words->breaks);
        if (next == UBRK_DONE) return 0;
        int32_t from = words->last;
        words->last = next;
        // Rule status below UBRK_WORD_NONE_LIMIT: spaces, punctuation, symbols.
        if (ubrk_getRuleStatus(words->breaks) >= UBRK_WORD_NONE_LIMIT) {
            *start = from;
            *end = next;
            return 1;
        }
    }
}

// ICU keeps each normalizer as a singleton after the first call; asking again is cheap and,
// unlike a cached pointer of our own, free of races between threads.
static const UNormalizer2 *normalizer(const UNormalizer2 *(*get)(UErrorCode *)) {
    UErrorCode status = U_ZERO_ERROR;
    const UNormalizer2 *n = get(&status);
    return U_FAILURE(status) ? NULL : n;
}

int32_t tc_words_fold(const char *word, int32_t length, char *out, int32_t out_size) {
    enum { capacity = 256 };
    UChar a[capacity], b[capacity];
    UErrorCode status = U_ZERO_ERROR;
    int32_t n = 0;
    u_strFromUTF8(a, capacity, &n, word, length, &status);
    if (U_FAILURE(status) || n >= capacity) return -1;
    const UNormalizer2 *fold = normalizer(unorm2_getNFKCCasefoldInstance), *nfd = normalizer(unorm2_getNFDInstance),
                      *nfc = normalizer(unorm2_getNFCInstance);
    if (!fold || !nfd || !nfc) return -1;
    n = unorm2_normalize(fold, a, n, b, capacity, &status);
    if (U_FAILURE(status) || n >= capacity) return -1;
    n = unorm2_normalize(nfd, b, n, a, capacity, &status);
    if (U_FAILURE(status) || n >= capacity) return -1;
    // Drop the non-spacing marks NFD split off (é -> e + U+0301), then compose what is left.
    int32_t kept = 0;
    for (int32_t i = 0; i < n;) {
        UChar32 c;
        int32_t at = i;
        U16_NEXT(a, i, n, c);
        if (u_charType(c) == U_NON_SPACING_MARK) continue;
        while (at < i) b[kept++] = a[at++];
    }
    n = unorm2_normalize(nfc, b, kept, a, capacity, &status);
    if (U_FAILURE(status) || n >= capacity) return -1;
    int32_t written = 0;
    status = U_ZERO_ERROR;
    u_strToUTF8(out, out_size, &written, a, n, &status);
    if (status == U_BUFFER_OVERFLOW_ERROR) return written;
    if (U_FAILURE(status)) return -1;
    return written;
}
