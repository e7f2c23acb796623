#ifndef CPDF_H
#define CPDF_H
#include <stddef.h>
#include <stdint.h>

// poppler (its C++ binding, drawing with Splash as pdftoppm does) behind a narrow C interface
// that keeps C++ out of Swift: a document parsed from memory, one of its pages drawn straight at
// the size asked for.

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cpdf_document cpdf_document;

/// Loads poppler's C++ binding into the global scope, once (cpdf_open does too): 0, or -1 with a
/// message (if `message` is not NULL). A worker calls it before its confinement where it expects a
/// PDF or has no Landlock.
int cpdf_load(char *message, size_t message_size);

typedef struct {
    int pages;
    double width, height;   // the chosen page's crop box in points, after its /Rotate
    const char *title;      // UTF-8, or NULL; valid until cpdf_close
    const char *author;
    const char *creator;
} cpdf_info;

/// Parses the document in `bytes` (which must outlive it) and loads its page `page` (0 the
/// first). NULL with a message when it is not a PDF poppler reads, is encrypted, has no pages,
/// or no such page (then `info->pages` says how many it has).
cpdf_document *cpdf_open(const uint8_t *bytes, size_t length, int page, cpdf_info *info, char *message, size_t message_size);

/// Draws the loaded page on white, scaled to `width × height` pixels, into `rgba` in ARGB32
/// (native-endian 32-bit words, rows of width × 4 bytes, as cairo's); the caller makes RGBA of
/// it. Every pixel is written (white where poppler's image came out smaller), so `rgba` need not
/// be cleared. 0, or -1 with a message.
int cpdf_render(cpdf_document *document, int width, int height, uint8_t *rgba, char *message, size_t message_size);

/// The text of every page in reading order, pages separated by a form feed, as UTF-8 into `out`:
/// at most `size` bytes, cut at a character's end. The bytes written, or -1 with a message.
long cpdf_text(cpdf_document *document, char *out, size_t size, char *message, size_t message_size);

void cpdf_close(cpdf_document *document);

#ifdef __cplusplus
}
#endif

#endif
