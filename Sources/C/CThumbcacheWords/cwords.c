#include "cwords.h"

// ICU is loaded with dlopen on first use, not linked: linking it put libicuuc, libicudata and
// their loading (about half a millisecond) into every start of every thumbcache process, a cache
// hit's included, and only indexing and searching words need it.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unicode/ubrk.h>
#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#include <unicode/utext.h>
#include <unicode/uvernum.h>
#include "tc_libraries.h"

#define TC_QUOTED(x) #x
// A name as the headers spell it, version suffix included (ubrk_open: "ubrk_open_72").
#define TC_SYMBOL(x) TC_QUOTED(x)
#define TC_SYMBOL_NAME(name) TC_SYMBOL(name),

#define ICU_FUNCTIONS(X)                                                                        \
    X(ubrk_open) X(ubrk_close) X(ubrk_first) X(ubrk_next) X(ubrk_getRuleStatus) X(ubrk_setUText) \
    X(utext_openUTF8) X(utext_close) X(u_errorName) X(u_strFromUTF8) X(u_strToUTF8) X(u_charType) \
    X(unorm2_getNFKCCasefoldInstance) X(unorm2_getNFDInstance) X(unorm2_getNFCInstance) X(unorm2_normalize)

/// The functions used, each field named as the headers name the function.
static struct { ICU_FUNCTIONS(TC_LIBRARY_FIELD) } icu;
static const char *const names[] = {ICU_FUNCTIONS(TC_SYMBOL_NAME)};
static tc_library library = TC_LIBRARY("ICU", "libicuuc.so." TC_SYMBOL(U_ICU_VERSION_MAJOR_NUM),
                                       "libicu" TC_SYMBOL(U_ICU_VERSION_MAJOR_NUM), names, icu);

struct tc_words {
    UBreakIterator *breaks;
    UText *text;
    int32_t last;
};

tc_words *tc_words_open(char *error, int error_size) {
    const char *unloaded = tc_library_load(&library);
    if (unloaded) {
        snprintf(error, (size_t)error_size, "%s", unloaded);
        return NULL;
    }
    UErrorCode status = U_ZERO_ERROR;
    UBreakIterator *breaks = icu.ubrk_open(UBRK_WORD, "", NULL, 0, &status);
    if (U_FAILURE(status)) {
        snprintf(error, (size_t)error_size, "%s", icu.u_errorName(status));
        return NULL;
    }
    tc_words *words = calloc(1, sizeof *words);
    if (!words) {
        icu.ubrk_close(breaks);
        snprintf(error, (size_t)error_size, "out of memory");
        return NULL;
    }
    words->breaks = breaks;
    return words;
}

void tc_words_close(tc_words *words) {
    if (!words) return;
    icu.ubrk_close(words->breaks);
    if (words->text) icu.utext_close(words->text);
    free(words);
}

int tc_words_set(tc_words *words, const char *utf8, int64_t length) {
    UErrorCode status = U_ZERO_ERROR;
    // UText over UTF-8 reports native indices: byte offsets into the caller's text, no copy.
    words->text = icu.utext_openUTF8(words->text, utf8, length, &status);
    if (U_FAILURE(status)) return -1;
    icu.ubrk_setUText(words->breaks, words->text, &status);
    if (U_FAILURE(status)) return -1;
    words->last = icu.ubrk_first(words->breaks);
    return 0;
}

int tc_words_next(tc_words *words, int64_t *start, int64_t *end) {
    for (;;) {
        int32_t next = icu.ubrk_next(words->breaks);
        if (next == UBRK_DONE) return 0;
        int32_t from = words->last;
        words->last = next;
        // Rule status below UBRK_WORD_NONE_LIMIT: spaces, punctuation, symbols.
        if (icu.ubrk_getRuleStatus(words->breaks) >= UBRK_WORD_NONE_LIMIT) {
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
    if (tc_library_load(&library)) return -1;
    enum { capacity = 256 };
    UChar a[capacity], b[capacity];
    UErrorCode status = U_ZERO_ERROR;
    int32_t n = 0;
    icu.u_strFromUTF8(a, capacity, &n, word, length, &status);
    if (U_FAILURE(status) || n >= capacity) return -1;
    const UNormalizer2 *fold = normalizer(icu.unorm2_getNFKCCasefoldInstance), *nfd = normalizer(icu.unorm2_getNFDInstance),
                      *nfc = normalizer(icu.unorm2_getNFCInstance);
    if (!fold || !nfd || !nfc) return -1;
    n = icu.unorm2_normalize(fold, a, n, b, capacity, &status);
    if (U_FAILURE(status) || n >= capacity) return -1;
    n = icu.unorm2_normalize(nfd, b, n, a, capacity, &status);
    if (U_FAILURE(status) || n >= capacity) return -1;
    // Drop the non-spacing marks NFD split off (é -> e + U+0301), then compose what is left.
    int32_t kept = 0;
    for (int32_t i = 0; i < n;) {
        UChar32 c;
        int32_t at = i;
        U16_NEXT(a, i, n, c);
        if (icu.u_charType(c) == U_NON_SPACING_MARK) continue;
        while (at < i) b[kept++] = a[at++];
    }
    n = icu.unorm2_normalize(nfc, b, kept, a, capacity, &status);
    if (U_FAILURE(status) || n >= capacity) return -1;
    int32_t written = 0;
    status = U_ZERO_ERROR;
    icu.u_strToUTF8(out, out_size, &written, a, n, &status);
    if (status == U_BUFFER_OVERFLOW_ERROR) return written;
    if (U_FAILURE(status)) return -1;
    return written;
}
