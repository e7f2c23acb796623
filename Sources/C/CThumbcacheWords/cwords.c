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
    X(unorm2_getNFKCCasefoldInstance) X(unorm2_getNFDInstance) X(unorm2_getNFCInstance) X(unorm2_normalize) \
    X(u_strFoldCase) X(u_hasBinaryProperty) X(u_tolower)

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

// A growing UTF-16 string.
typedef struct { UChar *chars; int32_t count, capacity; } tc_uchars;

static int tc_append(tc_uchars *s, const UChar *chars, int32_t n) {
    if (s->count + n > s->capacity) {
        int32_t capacity = (s->count + n) * 2 + 16;
        UChar *grown = realloc(s->chars, sizeof(UChar) * (size_t)capacity);
        if (!grown) return -1;
        s->chars = grown;
        s->capacity = capacity;
    }
    memcpy(s->chars + s->count, chars, sizeof(UChar) * (size_t)n);
    s->count += n;
    return 0;
}

static int tc_append_scalar(tc_uchars *s, UChar32 c) {
    UChar units[2];
    int32_t n = 0;
    U16_APPEND_UNSAFE(units, n, c);
    return tc_append(s, units, n);
}

// Where Foundation's case folding, which the index's terms were made with, differs from ICU's
// (an index folded one way must find its terms the same way): Cherokee's letters fold to their
// lowercase (Unicode's folding goes to the capitals since 8.0), and the Old Church Slavonic
// variants of Cyrillic letters (U+1C80–1C88) stay as they are.
static int tc_is_cherokee(UChar32 c) { return (c >= 0x13A0 && c <= 0x13FF) || (c >= 0xAB70 && c <= 0xABBF); }
static int tc_is_unfolded_cyrillic(UChar32 c) { return c >= 0x1C80 && c <= 0x1C88; }

// Appends `c` case folded (full folding, one scalar to one or more); `marks` false drops the
// combining marks a folding yields (a base that keeps no diacritics).
static int tc_append_folded(tc_uchars *s, UChar32 c, int marks) {
    if (tc_is_cherokee(c)) return tc_append_scalar(s, icu.u_tolower(c));
    if (tc_is_unfolded_cyrillic(c)) return tc_append_scalar(s, c);
    UChar in[2], out[8];
    int32_t n = 0;
    U16_APPEND_UNSAFE(in, n, c);
    UErrorCode status = U_ZERO_ERROR;
    int32_t m = icu.u_strFoldCase(out, 8, in, n, U_FOLD_CASE_DEFAULT, &status);
    // A scalar folding leaves alone is kept, a combining mark with no letter before it included.
    if (U_FAILURE(status) || m > 8 || (m == n && memcmp(in, out, sizeof(UChar) * (size_t)n) == 0)) return tc_append(s, in, n);
    for (int32_t i = 0; i < m;) {
        UChar32 f;
        U16_NEXT(out, i, m, f);
        if (!marks && icu.u_hasBinaryProperty(f, UCHAR_GRAPHEME_EXTEND)) continue;
        if (tc_append_scalar(s, f)) return -1;
    }
    return 0;
}

// `s` composed again (NFC), as the index has always stored its terms, in UTF-8 from malloc; NULL
// where ICU refuses it or memory runs out.
static char *tc_composed_utf8(const UNormalizer2 *nfc, const tc_uchars *s, int64_t *length) {
    UErrorCode status = U_ZERO_ERROR;
    int32_t n = icu.unorm2_normalize(nfc, s->chars, s->count, NULL, 0, &status);
    if (status != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(status)) return NULL;
    UChar *composed = malloc(sizeof(UChar) * (size_t)(n + 1));
    if (!composed) return NULL;
    status = U_ZERO_ERROR;
    n = icu.unorm2_normalize(nfc, s->chars, s->count, composed, n + 1, &status);
    int32_t written = 0;
    char *out = NULL;
    if (U_SUCCESS(status)) {
        icu.u_strToUTF8(NULL, 0, &written, composed, n, &status);
        status = U_ZERO_ERROR;
        out = malloc((size_t)written + 1);
    }
    if (out) icu.u_strToUTF8(out, written + 1, &written, composed, n, &status);
    free(composed);
    if (out && U_FAILURE(status)) {
        free(out);
        return NULL;
    }
    if (out) *length = written;
    return out;
}

char *tc_text_fold(const char *text, int64_t length, int fold_case, int fold_diacritics, int64_t *folded_length) {
    if (tc_library_load(&library) || length > INT32_MAX / 4) return NULL;
    const UNormalizer2 *nfd = normalizer(icu.unorm2_getNFDInstance), *nfc = normalizer(icu.unorm2_getNFCInstance);
    if (!nfd || !nfc) return NULL;
    int32_t n = 0;
    UErrorCode status = U_ZERO_ERROR;
    icu.u_strFromUTF8(NULL, 0, &n, text, (int32_t)length, &status);
    if (status != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(status)) return NULL;
    UChar *in = malloc(sizeof(UChar) * (size_t)(n + 1));
    if (!in) return NULL;
    status = U_ZERO_ERROR;
    icu.u_strFromUTF8(in, n + 1, &n, text, (int32_t)length, &status);
    tc_uchars folded = {0};
    int failed = U_FAILURE(status);
    // The rules of Foundation's folding, which the index's terms were made with: a letter of the
    // Latin, Greek or Cyrillic blocks (below U+0510) loses the marks of its canonical decomposition
    // and the combining marks after it; a letter of another script keeps both; case folds per scalar.
    int base_drops_marks = 0, have_base = 0;
    for (int32_t i = 0; i < n && !failed;) {
        UChar32 c;
        U16_NEXT(in, i, n, c);
        int extend = icu.u_hasBinaryProperty(c, UCHAR_GRAPHEME_EXTEND);
        if (fold_diacritics && extend && have_base) {
            if (!base_drops_marks) failed = tc_append_scalar(&folded, c);
            continue;
        }
        UChar one[2], parts[32];
        int32_t k = 0, p = 0;
        U16_APPEND_UNSAFE(one, k, c);
        UChar32 first = c;
        if (fold_diacritics) {
            status = U_ZERO_ERROR;
            p = icu.unorm2_normalize(nfd, one, k, parts, 32, &status);
            if (U_FAILURE(status)) { memcpy(parts, one, sizeof(UChar) * (size_t)k); p = k; }
            int32_t at = 0;
            U16_NEXT(parts, at, p, first);
            base_drops_marks = first < 0x0510;
            have_base = !extend;
            if (base_drops_marks) p = at;  // the base alone
        } else {
            memcpy(parts, one, sizeof(UChar) * (size_t)k);
            p = k;
        }
        if (fold_case) {
            int32_t at = 0;
            U16_NEXT(parts, at, p, first);
            failed = tc_append_folded(&folded, first, !(fold_diacritics && base_drops_marks));
            if (!failed && at < p) failed = tc_append(&folded, parts + at, p - at);
        } else {
            failed = tc_append(&folded, parts, p);
        }
    }
    free(in);
    char *out = failed ? NULL : tc_composed_utf8(nfc, &folded, folded_length);
    free(folded.chars);
    return out;
}
