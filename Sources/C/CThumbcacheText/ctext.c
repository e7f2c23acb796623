#include "ctext.h"
#include <ft2build.h>
#include FT_FREETYPE_H
#include FT_BITMAP_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tc_libraries.h"

// FreeType is loaded with dlopen at the first text page or font, not linked: the plug-in's program
// forks the documents family too, and its image worker (the same program) never draws text.
#define FREETYPE_FUNCTIONS(X)                                                                            \
    X(FT_Init_FreeType) X(FT_Done_FreeType) X(FT_New_Memory_Face) X(FT_Done_Face) X(FT_Error_String)        \
    X(FT_Select_Charmap) X(FT_Set_Charmap) X(FT_Select_Size) X(FT_Set_Char_Size) X(FT_Get_Char_Index)       \
    X(FT_Get_First_Char) X(FT_Get_Next_Char) X(FT_Load_Char) X(FT_Load_Glyph) X(FT_Render_Glyph)            \
    X(FT_Bitmap_Init) X(FT_Bitmap_Copy) X(FT_Bitmap_Done)

/// The functions used, each field named as FreeType names the function.
static struct { FREETYPE_FUNCTIONS(TC_LIBRARY_FIELD) } ft;
static const char *const names[] = {FREETYPE_FUNCTIONS(TC_LIBRARY_NAME)};
static tc_library library = TC_LIBRARY("FreeType", "libfreetype.so.6", "libfreetype6", names, ft);

const char *ctext_load(void) { return tc_library_load(&library); }

// Light hinting: vertical only, so a monospaced grid keeps its advances at small sizes.
static const FT_Int32 load_flags = FT_LOAD_RENDER | FT_LOAD_TARGET_LIGHT | FT_LOAD_COLOR;

// A rendered glyph kept for reuse: a page repeats a few dozen characters thousands of times.
typedef struct {
    int loaded, left, top;
    FT_Bitmap bitmap;
} cached_glyph;

struct ctext_face {
    FT_Library library;
    FT_Face face;
    // A page's ASCII glyphs, kept across pages drawn at the same size (`page_size`, 26.6): a warm
    // of many text files draws the same few glyphs again and again, and loading and hinting them
    // was most of a page's time.
    cached_glyph page_glyphs[128];
    FT_F26Dot6 page_size;
    double advance_per_em;
};

static void forget_page_glyphs(ctext_face *f) {
    for (int i = 0; i < 128; i++)
        if (f->page_glyphs[i].loaded) {
            ft.FT_Bitmap_Done(f->library, &f->page_glyphs[i].bitmap);
            f->page_glyphs[i].loaded = 0;
        }
    f->page_size = 0;
}

static void say(char *message, size_t size, const char *text) {
    if (message && size) snprintf(message, size, "%s", text);
}

static void say_error(char *message, size_t size, const char *what, FT_Error error) {
    // Debian's FreeType is built without error strings: the number then (fterrdef.h names it).
    const char *name = ft.FT_Error_String(error);
    if (!message || !size) return;
    if (name) snprintf(message, size, "%s (FreeType: %s)", what, name);
    else snprintf(message, size, "%s (FreeType error 0x%02X)", what, (unsigned)error);
}

void ctext_close(ctext_face *f) {
    if (!f) return;
    forget_page_glyphs(f);
    if (f->face) ft.FT_Done_Face(f->face);
    if (f->library) ft.FT_Done_FreeType(f->library);
    free(f);
}

ctext_face *ctext_open(const uint8_t *bytes, size_t length, long index, ctext_info *info, char *message, size_t message_size) {
    memset(info, 0, sizeof *info);
    const char *unloaded = ctext_load();
    if (unloaded) {
        say(message, message_size, unloaded);
        return NULL;
    }
    ctext_face *f = calloc(1, sizeof *f);
    if (!f) {
        say(message, message_size, "out of memory");
        return NULL;
    }
    FT_Error e = ft.FT_Init_FreeType(&f->library);
    if (e) {
        say_error(message, message_size, "FreeType did not start", e);
        ctext_close(f);
        return NULL;
    }
    e = ft.FT_New_Memory_Face(f->library, bytes, (FT_Long)length, index, &f->face);
    if (e) {
        say_error(message, message_size, "not a font FreeType reads", e);
        f->face = NULL;
        ctext_close(f);
        return NULL;
    }
    FT_Face face = f->face;
    if (face->num_glyphs <= 0) {
        say(message, message_size, "the font has no glyphs");
        ctext_close(f);
        return NULL;
    }
    // Prefer a Unicode map; a symbol font's own map is what it has otherwise.
    if (ft.FT_Select_Charmap(face, FT_ENCODING_UNICODE) && face->num_charmaps > 0) ft.FT_Set_Charmap(face, face->charmaps[0]);
    info->family = face->family_name;
    info->style = face->style_name;
    info->faces = face->num_faces;
    info->glyphs = face->num_glyphs;
    info->scalable = FT_IS_SCALABLE(face) ? 1 : 0;
    return f;
}

// Sizes a face: scalable ones to `pixels` per em (26.6), bitmap-only ones to their strike nearest it.
static FT_Error set_size(FT_Face face, FT_F26Dot6 pixels) {
    if (FT_IS_SCALABLE(face)) return ft.FT_Set_Char_Size(face, 0, pixels < 64 ? 64 : pixels, 72, 72);
    if (face->num_fixed_sizes <= 0) return FT_Err_Invalid_Pixel_Size;
    int best = 0;
    for (int i = 1; i < face->num_fixed_sizes; i++) {
        long d = labs(face->available_sizes[i].y_ppem - pixels), b = labs(face->available_sizes[best].y_ppem - pixels);
        if (d < b) best = i;
    }
    return ft.FT_Select_Size(face, best);
}

// Blends a rendered glyph onto the canvas at (x, y) (its top left), in `ink` over what is there.
static void blit(const FT_Bitmap *b, int x, int y, const uint8_t ink[3], uint8_t *rgba, int width, int height) {
    for (unsigned row = 0; row < b->rows; row++) {
        int cy = y + (int)row;
        if (cy < 0 || cy >= height) continue;
        const uint8_t *src = b->buffer + (long)row * b->pitch;
        for (unsigned col = 0; col < b->width; col++) {
            int cx = x + (int)col;
            if (cx < 0 || cx >= width) continue;
            uint8_t *p = rgba + ((size_t)cy * width + cx) * 4;
            unsigned r = ink[0], g = ink[1], bl = ink[2], a;
            switch (b->pixel_mode) {
            case FT_PIXEL_MODE_GRAY: a = src[col]; break;
            case FT_PIXEL_MODE_MONO: a = (src[col >> 3] >> (7 - (col & 7))) & 1 ? 255 : 0; break;
            case FT_PIXEL_MODE_BGRA: {
                // Premultiplied colour (emoji fonts): the glyph's own colours, not the ink.
                const uint8_t *s = src + col * 4;
                a = s[3];
                if (!a) continue;
                p[0] = (uint8_t)(s[2] + p[0] * (255 - a) / 255);
                p[1] = (uint8_t)(s[1] + p[1] * (255 - a) / 255);
                p[2] = (uint8_t)(s[0] + p[2] * (255 - a) / 255);
                continue;
            }
            default: return;
            }
            if (!a) continue;
            p[0] = (uint8_t)((r * a + p[0] * (255 - a)) / 255);
            p[1] = (uint8_t)((g * a + p[1] * (255 - a)) / 255);
            p[2] = (uint8_t)((bl * a + p[2] * (255 - a)) / 255);
        }
    }
}

static void fill_white(uint8_t *rgba, int width, int height) { memset(rgba, 255, (size_t)width * height * 4); }

// A page's edge, light grey, so a white page shows on a white window.
static void frame(uint8_t *rgba, int width, int height) {
    int t = width / 256 + 1;
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            if (x >= t && x < width - t && y >= t && y < height - t) {
                x = width - t - 1;
                continue;
            }
            uint8_t *p = rgba + ((size_t)y * width + x) * 4;
            p[0] = p[1] = 200;
            p[2] = 205;
        }
}

int ctext_draw_page(ctext_face *f, const uint8_t *fallback, size_t fallback_length, const uint32_t *text,
                    const int32_t *lengths, int lines, int columns, uint8_t *rgba, int width, int height, char *message,
                    size_t message_size) {
    FT_Face face = f->face;
    fill_white(rgba, width, height);
    frame(rgba, width, height);
    if (columns < 1 || width < 8 || height < 8) return 0;
    int margin = width * 6 / 100;
    if (margin < 1) margin = 1;
    FT_Error e = 0;
    if (f->advance_per_em == 0) {
        // The advance per em, unhinted, from the face's own cell: the grid's width is exact.
        e = set_size(face, 64 * 64);
        if (e || ft.FT_Load_Char(face, 'M', FT_LOAD_NO_HINTING | FT_LOAD_NO_BITMAP)) {
            say_error(message, message_size, "the monospaced font does not draw", e);
            return -1;
        }
        f->advance_per_em = (double)face->glyph->linearHoriAdvance / 65536.0 / 64.0;
        if (f->advance_per_em <= 0.1) f->advance_per_em = 0.6;
        f->page_size = 0;
    }
    double advance_per_em = f->advance_per_em;
    double em = (double)(width - 2 * margin) / columns / advance_per_em;
    FT_F26Dot6 size = (FT_F26Dot6)(em * 64);
    if (size != f->page_size) {
        forget_page_glyphs(f);
        if ((e = set_size(face, size))) {
            say_error(message, message_size, "the monospaced font does not draw", e);
            return -1;
        }
        f->page_size = size;
    }
    double advance = em * advance_per_em;
    long line_height = face->size->metrics.height, ascender = face->size->metrics.ascender;
    if (line_height <= 0) line_height = (long)(em * 64 * 1.2);
    static const uint8_t ink[3] = {34, 34, 34};
    cached_glyph *cache = f->page_glyphs;
    // The fallback face, parsed at the first character the monospaced one lacks.
    FT_Face other = NULL;
    int other_tried = 0;
    const uint32_t *cursor = text;
    for (int i = 0; i < lines; i++) {
        long top = (long)margin * 64 + i * line_height;
        if (top + line_height > (long)(height - margin) * 64) break;
        int baseline = (int)((top + ascender + 32) >> 6);
        int column = 0;
        for (int c = 0; c < lengths[i] && column < columns; c++) {
            uint32_t cp = cursor[c];
            int x = margin + (int)(column * advance + 0.5);
            if (cp == ' ' || cp == 0xA0) {
                column++;
                continue;
            }
            if (cp < 128 && cache[cp].loaded) {
                blit(&cache[cp].bitmap, x + cache[cp].left, baseline - cache[cp].top, ink, rgba, width, height);
                column++;
                continue;
            }
            FT_Face use = face;
            if (cp >= 128 && fallback && !ft.FT_Get_Char_Index(face, cp)) {
                if (!other_tried) {
                    other_tried = 1;
                    if (ft.FT_New_Memory_Face(f->library, fallback, (FT_Long)fallback_length, 0, &other)) other = NULL;
                    else if (set_size(other, (FT_F26Dot6)(em * 64))) {
                        ft.FT_Done_Face(other);
                        other = NULL;
                    }
                }
                if (other && ft.FT_Get_Char_Index(other, cp)) use = other;
            }
            if (ft.FT_Load_Char(use, cp, load_flags)) {  // a glyph that does not draw is left blank
                column++;
                continue;
            }
            FT_GlyphSlot g = use->glyph;
            // A fallback glyph wider than a cell and a half (CJK) takes two, as a terminal draws it.
            int cells = use != face && g->advance.x > (FT_Pos)(advance * 1.5 * 64) ? 2 : 1;
            if (column + cells > columns) break;
            blit(&g->bitmap, x + g->bitmap_left, baseline - g->bitmap_top, ink, rgba, width, height);
            column += cells;
            if (cp < 128) {
                cached_glyph *k = &cache[cp];
                ft.FT_Bitmap_Init(&k->bitmap);
                if (!ft.FT_Bitmap_Copy(f->library, &g->bitmap, &k->bitmap)) {
                    k->loaded = 1;
                    k->left = g->bitmap_left;
                    k->top = g->bitmap_top;
                }
            }
        }
        cursor += lengths[i];
    }
    if (other) ft.FT_Done_Face(other);
    return 0;
}

int ctext_mapped(ctext_face *f, uint32_t *out, int capacity) {
    FT_UInt glyph = 0;
    int n = 0, tried = 0;
    // Characters with ink only (not spaces, marks that draw nothing, or empty outlines), among
    // the first few thousand the font maps.
    for (FT_ULong cp = ft.FT_Get_First_Char(f->face, &glyph); glyph && n < capacity && tried < 4096;
         cp = ft.FT_Get_Next_Char(f->face, cp, &glyph), tried++) {
        if (cp <= 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0xA0)) continue;
        if (ft.FT_Load_Glyph(f->face, glyph, FT_LOAD_NO_SCALE | FT_LOAD_NO_HINTING | FT_LOAD_NO_BITMAP)) continue;
        if (f->face->glyph->metrics.width > 0 && f->face->glyph->metrics.height > 0) out[n++] = (uint32_t)cp;
    }
    return n;
}

// The ink box of `count` code points set on one baseline at the face's current size (26.6),
// and the pen's total advance.
static int measure(FT_Face face, const uint32_t *text, int count, long *x_min, long *x_max, long *y_min, long *y_max) {
    long pen = 0;
    int drawn = 0;
    *x_min = *y_min = 1L << 40;
    *x_max = *y_max = -(1L << 40);
    for (int i = 0; i < count; i++) {
        FT_UInt index = ft.FT_Get_Char_Index(face, text[i]);
        if (!index || ft.FT_Load_Glyph(face, index, FT_LOAD_NO_HINTING | FT_LOAD_COLOR)) continue;
        FT_Glyph_Metrics *m = &face->glyph->metrics;
        if (m->width > 0 && m->height > 0) {
            long l = pen + m->horiBearingX, r = l + m->width, t = m->horiBearingY, b = t - m->height;
            if (l < *x_min) *x_min = l;
            if (r > *x_max) *x_max = r;
            if (b < *y_min) *y_min = b;
            if (t > *y_max) *y_max = t;
            drawn++;
        }
        pen += face->glyph->advance.x;
    }
    return drawn;
}

int ctext_draw_sample(ctext_face *f, const uint32_t *text, int count, uint8_t *rgba, int width, int height,
                      char *message, size_t message_size) {
    FT_Face face = f->face;
    f->page_size = 0;  // the face is sized anew here: a page drawn next sizes it again
    fill_white(rgba, width, height);
    long x_min, x_max, y_min, y_max;
    // Measured at 100 px per em, then scaled to fit (bitmap fonts keep their strike's size).
    FT_Error e = set_size(face, 100 * 64);
    if (e) {
        say_error(message, message_size, "the font cannot be sized", e);
        return -1;
    }
    if (!measure(face, text, count, &x_min, &x_max, &y_min, &y_max)) {
        say(message, message_size, "the font draws none of the sample's characters");
        return -1;
    }
    if (FT_IS_SCALABLE(face)) {
        double fit_w = 0.8 * width * 64 / (double)(x_max - x_min), fit_h = 0.6 * height * 64 / (double)(y_max - y_min);
        double em = 100 * (fit_w < fit_h ? fit_w : fit_h);
        if (em > 4 * height) em = 4 * height;  // a degenerate ink box must not ask for an absurd size
        if ((e = set_size(face, (FT_F26Dot6)(em * 64)))) {
            say_error(message, message_size, "the font cannot be sized", e);
            return -1;
        }
        measure(face, text, count, &x_min, &x_max, &y_min, &y_max);
    }
    // Centre the ink box.
    long pen_x = ((long)width * 64 - (x_max - x_min)) / 2 - x_min, baseline = ((long)height * 64 + (y_max - y_min)) / 2 + y_min;
    static const uint8_t ink[3] = {0, 0, 0};
    for (int i = 0; i < count; i++) {
        FT_UInt index = ft.FT_Get_Char_Index(face, text[i]);
        if (!index || ft.FT_Load_Glyph(face, index, FT_LOAD_NO_HINTING | FT_LOAD_COLOR)) continue;
        FT_GlyphSlot g = face->glyph;
        if (g->format != FT_GLYPH_FORMAT_BITMAP && ft.FT_Render_Glyph(g, FT_RENDER_MODE_NORMAL)) {
            pen_x += g->advance.x;
            continue;
        }
        blit(&g->bitmap, (int)((pen_x + 32) >> 6) + g->bitmap_left, (int)((baseline + 32) >> 6) - g->bitmap_top, ink, rgba, width, height);
        pen_x += g->advance.x;
    }
    return 0;
}
