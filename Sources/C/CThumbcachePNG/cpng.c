#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

#include "cpng.h"
#include "cpng_read.h"

struct cpng_decoder {
    cpng_reader *reader;  // thumbcache's own reader, when it takes the file; libpng otherwise
    png_structp png;
    png_infop info;
    FILE *file;
    char message[256];
    uint8_t *exif_copy;
};

static void on_error(png_structp png, png_const_charp text) {
    char *message = (char *)png_get_error_ptr(png);
    snprintf(message, 256, "%s", text ? text : "libpng error");
    png_longjmp(png, 1);
}

// Warnings are not printed. Benign ones (a bad ancillary chunk, which libpng drops) are
// tolerated; everything that matters for pixels is an error in libpng already.
static void on_warning(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;
}

// No single allocation of libpng's may pass this. A chunk's claimed length reached libpng's
// allocator at 1.9 GB despite png_set_chunk_malloc_max (found by Tools/fuzz png); row buffers
// of the widest image the limits admit stay far below it.
#define CPNG_MAX_ALLOCATION ((png_alloc_size_t)64 << 20)

static png_voidp capped_malloc(png_structp png, png_alloc_size_t size) {
    (void)png;
    return size <= CPNG_MAX_ALLOCATION ? malloc(size) : NULL;
}

static void capped_free(png_structp png, png_voidp pointer) {
    (void)png;
    free(pointer);
}

static void set_message(char *message, size_t size, const char *text) {
    if (message && size) snprintf(message, size, "%s", text);
}

// Reads like libpng's default, but tells a truncated file from an I/O error.
static void read_bytes(png_structp png, png_bytep out, png_size_t count) {
    FILE *file = (FILE *)png_get_io_ptr(png);
    if (fread(out, 1, count, file) == count) return;
    if (feof(file)) png_error(png, "unexpected end of file (truncated)");
    png_error(png, strerror(errno));
}

static cpng_status read_header(cpng_decoder *d, cpng_info *info) {
    if (setjmp(png_jmpbuf(d->png))) return CPNG_ERROR;
    png_set_read_fn(d->png, d->file, read_bytes);
    png_set_sig_bytes(d->png, 8);
    // Limits are enforced by the caller from the header; lift libpng's own 1M × 1M cap only
    // as far as the caller's checks go (they run before any pixel buffer exists).
    png_set_user_limits(d->png, 0x7fffffffL, 0x7fffffffL);
    png_set_chunk_malloc_max(d->png, 64u << 20);
#if defined(PNG_IGNORE_ADLER32) && defined(PNG_SET_OPTION_SUPPORTED)
    // libpng verifies every chunk's CRC-32, corrupt data included; zlib's Adler-32 over the same
    // bytes adds nothing but time (about 3 % of a warm).
    png_set_option(d->png, PNG_IGNORE_ADLER32, PNG_OPTION_ON);
#endif
    png_read_info(d->png, d->info);
    png_uint_32 w, h;
    int depth, color, interlace;
    png_get_IHDR(d->png, d->info, &w, &h, &depth, &color, &interlace, NULL, NULL);
    info->width = w;
    info->height = h;
    info->bit_depth = depth;
    info->color_type = color;
    info->interlaced = interlace != PNG_INTERLACE_NONE;
    info->has_alpha = (color & PNG_COLOR_MASK_ALPHA) || png_get_valid(d->png, d->info, PNG_INFO_tRNS);
    info->exif = NULL;
    info->exif_length = 0;
#ifdef PNG_eXIf_SUPPORTED
    png_uint_32 n = 0;
    png_bytep exif = NULL;
    if (png_get_eXIf_1(d->png, d->info, &n, &exif) && exif && n > 0) {
        d->exif_copy = malloc(n);
        if (d->exif_copy) {
            memcpy(d->exif_copy, exif, n);
            info->exif = d->exif_copy;
            info->exif_length = n;
        }
    }
#endif
    return CPNG_OK;
}

static cpng_decoder *open_file(FILE *file, int own_reader, cpng_info *info, cpng_status *status, char *message,
                              size_t message_size);

cpng_decoder *cpng_open(const char *path, cpng_info *info, cpng_status *status, char *message, size_t message_size) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        *status = CPNG_IO;
        set_message(message, message_size, strerror(errno));
        return NULL;
    }
    return open_file(file, 1, info, status, message, message_size);
}

cpng_decoder *cpng_open_fd(int fd, cpng_info *info, cpng_status *status, char *message, size_t message_size) {
    int own = dup(fd);
    FILE *file = own >= 0 ? fdopen(own, "rb") : NULL;
    if (!file || fseek(file, 0, SEEK_SET) != 0) {
        *status = CPNG_IO;
        set_message(message, message_size, strerror(errno));
        if (file) fclose(file); else if (own >= 0) close(own);
        return NULL;
    }
    return open_file(file, 1, info, status, message, message_size);
}

static cpng_decoder *open_memory(const uint8_t *bytes, size_t length, int own_reader, cpng_info *info, cpng_status *status,
                                char *message, size_t message_size) {
    FILE *file = length ? fmemopen((void *)bytes, length, "rb") : NULL;
    if (!file) {
        *status = CPNG_NOT_PNG;
        set_message(message, message_size, "empty or unreadable PNG data");
        return NULL;
    }
    return open_file(file, own_reader, info, status, message, message_size);
}

cpng_decoder *cpng_open_memory(const uint8_t *bytes, size_t length, cpng_info *info, cpng_status *status, char *message,
                               size_t message_size) {
    return open_memory(bytes, length, 1, info, status, message, message_size);
}

cpng_decoder *cpng_open_memory_libpng(const uint8_t *bytes, size_t length, cpng_info *info, cpng_status *status, char *message,
                                      size_t message_size) {
    return open_memory(bytes, length, 0, info, status, message, message_size);
}

int cpng_uses_own_reader(const cpng_decoder *d) { return d->reader != NULL; }

static cpng_decoder *open_file(FILE *file, int own_reader, cpng_info *info, cpng_status *status, char *message,
                              size_t message_size) {
    uint8_t signature[8];
    if (fread(signature, 1, 8, file) != 8 || png_sig_cmp(signature, 0, 8) != 0) {
        fclose(file);
        *status = CPNG_NOT_PNG;
        set_message(message, message_size, "not a PNG file (bad signature)");
        return NULL;
    }
    cpng_decoder *d = calloc(1, sizeof *d);
    if (!d) {
        fclose(file);
        *status = CPNG_ERROR;
        set_message(message, message_size, "out of memory");
        return NULL;
    }
    d->file = file;
    d->reader = own_reader ? cpng_reader_open(file, info) : NULL;
    if (d->reader) {
        *status = CPNG_OK;
        return d;
    }
    d->png = png_create_read_struct_2(PNG_LIBPNG_VER_STRING, d->message, on_error, on_warning, NULL, capped_malloc, capped_free);
    d->info = d->png ? png_create_info_struct(d->png) : NULL;
    if (!d->png || !d->info) {
        *status = CPNG_ERROR;
        set_message(message, message_size, "out of memory");
        cpng_close(d);
        return NULL;
    }
    *status = read_header(d, info);
    if (*status != CPNG_OK) {
        set_message(message, message_size, d->message);
        cpng_close(d);
        return NULL;
    }
    return d;
}

cpng_status cpng_start(cpng_decoder *d) {
    if (d->reader) return cpng_reader_start(d->reader, d->message, sizeof d->message);
    if (setjmp(png_jmpbuf(d->png))) return CPNG_ERROR;
    png_set_expand(d->png);            // palette → RGB, gray < 8 bits → 8, tRNS → alpha
    png_set_scale_16(d->png);          // 16 → 8 bits with rounding
    png_set_gray_to_rgb(d->png);
    png_set_add_alpha(d->png, 0xff, PNG_FILLER_AFTER);
    if (png_get_interlace_type(d->png, d->info) != PNG_INTERLACE_NONE) png_set_interlace_handling(d->png);
    png_read_update_info(d->png, d->info);
    if (png_get_rowbytes(d->png, d->info) != (size_t)png_get_image_width(d->png, d->info) * 4) {
        snprintf(d->message, sizeof d->message, "unexpected row size after conversion to RGBA");
        return CPNG_ERROR;
    }
    return CPNG_OK;
}

cpng_status cpng_read_row(cpng_decoder *d, uint8_t *row) {
    if (d->reader) return cpng_reader_row(d->reader, row, d->message, sizeof d->message);
    if (setjmp(png_jmpbuf(d->png))) return CPNG_ERROR;
    png_read_row(d->png, row, NULL);
    return CPNG_OK;
}

cpng_status cpng_read_image(cpng_decoder *d, uint8_t **rows) {
    if (d->reader) return cpng_reader_image(d->reader, rows, d->message, sizeof d->message);
    if (setjmp(png_jmpbuf(d->png))) return CPNG_ERROR;
    png_read_image(d->png, rows);
    return CPNG_OK;
}

const char *cpng_message(const cpng_decoder *d) { return d->message; }

void cpng_close(cpng_decoder *d) {
    if (!d) return;
    cpng_reader_close(d->reader);
    if (d->png) png_destroy_read_struct(&d->png, d->info ? &d->info : NULL, NULL);
    if (d->file) fclose(d->file);
    free(d->exif_copy);
    free(d);
}

void cpng_free(void *pointer) { free(pointer); }
