#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "ctestpng.h"

typedef struct {
    uint8_t *bytes;
    size_t length, capacity;
} buffer;

static void append(png_structp png, png_bytep data, size_t count) {
    buffer *b = png_get_io_ptr(png);
    if (b->length + count > b->capacity) {
        size_t capacity = (b->length + count) * 2;
        uint8_t *grown = realloc(b->bytes, capacity);
        if (!grown) png_error(png, "out of memory");
        b->bytes = grown;
        b->capacity = capacity;
    }
    memcpy(b->bytes + b->length, data, count);
    b->length += count;
}

static void flush(png_structp png) { (void)png; }

int ctestpng_encode(const uint8_t *samples, size_t stride, const ctestpng_format *f, uint8_t **out, size_t *length) {
    buffer b = {0};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        return 1;
    }
    png_bytep *rows = calloc(f->height, sizeof *rows);
    if (!rows || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(rows);
        free(b.bytes);
        return 1;
    }
    png_set_write_fn(png, &b, append, flush);
    png_set_IHDR(png, info, f->width, f->height, f->bit_depth, f->color_type,
                 f->interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    static const int filters[] = {PNG_FILTER_NONE, PNG_FILTER_SUB, PNG_FILTER_UP, PNG_FILTER_AVG, PNG_FILTER_PAETH};
    png_set_filter(png, 0, f->filter >= 0 && f->filter <= 4 ? filters[f->filter] : PNG_ALL_FILTERS);
    if (f->idat_size) png_set_compression_buffer_size(png, f->idat_size);
    if (f->palette) {
        png_color colors[256];
        for (int i = 0; i < f->palette_count && i < 256; i++) {
            colors[i].red = f->palette[3 * i];
            colors[i].green = f->palette[3 * i + 1];
            colors[i].blue = f->palette[3 * i + 2];
        }
        png_set_PLTE(png, info, colors, f->palette_count);
    }
    if (f->trns || f->key) {
        png_color_16 key = {0};
        if (f->key && f->color_type == PNG_COLOR_TYPE_GRAY) key.gray = f->key[0];
        if (f->key && f->color_type == PNG_COLOR_TYPE_RGB) {
            key.red = f->key[0];
            key.green = f->key[1];
            key.blue = f->key[2];
        }
        png_set_tRNS(png, info, f->trns, f->trns ? f->trns_count : 0, f->key ? &key : NULL);
    }
    png_write_info(png, info);
    for (uint32_t y = 0; y < f->height; y++) rows[y] = (png_bytep)(samples + y * stride);
    png_write_image(png, rows);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    free(rows);
    *out = b.bytes;
    *length = b.length;
    return 0;
}

void ctestpng_free(void *pointer) { free(pointer); }
