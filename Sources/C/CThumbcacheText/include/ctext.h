#ifndef CTEXT_H
#define CTEXT_H
#include <stddef.h>
#include <stdint.h>

// FreeType behind a narrow C interface: a face parsed from memory, a page of monospaced text or
// a font's own sample drawn straight into a straight-alpha RGBA canvas at the size asked for.

typedef struct ctext_face ctext_face;

/// Loads FreeType (dlopen) if no call has yet: NULL once loaded, else why not. ctext_open loads it.
const char *ctext_load(void);

typedef struct {
    const char *family;  // valid until ctext_close; NULL when the font names none
    const char *style;
    long faces;          // faces in the file (a collection has several)
    long glyphs;
    int scalable;        // 0: bitmap strikes only
} ctext_info;

/// Parses face `index` of the font in `bytes` (which must outlive it). NULL with a message when
/// FreeType cannot read it.
ctext_face *ctext_open(const uint8_t *bytes, size_t length, long index, ctext_info *info, char *message, size_t message_size);

/// Draws a page: white with a grey edge, a margin of 6 % of the width, then `lines` lines of code points
/// (`lengths[i]` each, laid end to end in `text`) on a grid of `columns` monospaced cells, as
/// many lines as fit. A character `face` lacks is drawn from the font in `fallback` (may be
/// NULL; parsed only if needed), two cells wide when its glyph is (CJK). Every pixel of `rgba` is
/// written, so it need not be cleared. 0, or -1 with a message.
int ctext_draw_page(ctext_face *face, const uint8_t *fallback, size_t fallback_length, const uint32_t *text,
                    const int32_t *lengths, int lines, int columns, uint8_t *rgba, int width, int height, char *message,
                    size_t message_size);

/// Draws `count` code points centred on white, as large as fits 80 % of the width and 60 % of the
/// height; every pixel is written. 0, or -1 with a message (no glyph of them in the font).
int ctext_draw_sample(ctext_face *face, const uint32_t *text, int count, uint8_t *rgba, int width, int height,
                      char *message, size_t message_size);

/// The first `capacity` printable code points the font maps (for a font without Latin letters).
int ctext_mapped(ctext_face *face, uint32_t *out, int capacity);

void ctext_close(ctext_face *face);

#endif
