#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <setjmp.h>
#include <sys/stat.h>
#include <jpeglib.h>
#include <jerror.h>

#include "cjpeg.h"
#include "eighth.h"

struct error_manager {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX + 64];
    int fatal_warning;
};

struct cjpeg_decoder {
    struct jpeg_decompress_struct cinfo;
    struct error_manager error;
    FILE *file;
    int started;
    int cmyk;            // output is CMYK, converted to RGBA here
    int adobe_inverted;  // Adobe CMYK/YCCK stores inverted values
    uint8_t *scratch;    // one CMYK row
    uint8_t *exif;
    size_t exif_length;
    uint8_t *xmp;
    size_t xmp_length;
    const uint8_t *bytes;  // the JPEG in memory, when it is read from there
    size_t length;
    eighth *eighth;        // the image at 1/8, when eighth.c decodes it
    uint32_t next_row;
    int flags;             // cjpeg_start's
    uint64_t whole_limit;  // libjpeg's progressive decode refused over this many pixels (0: any)
};

static void on_error_exit(j_common_ptr cinfo) {
    struct error_manager *e = (struct error_manager *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, e->message);
    longjmp(e->jump, 1);
}

// Strict policy. These warnings mean pixels were invented (grey fill) or lost: fail.
// Others (e.g. "extraneous bytes before marker", common in camera files) are tolerated.
static void on_emit_message(j_common_ptr cinfo, int level) {
    struct error_manager *e = (struct error_manager *)cinfo->err;
    if (level >= 0) return;  // trace messages
    int code = cinfo->err->msg_code;
    if (code == JWRN_JPEG_EOF || code == JWRN_HIT_MARKER || code == JWRN_HUFF_BAD_CODE || code == JWRN_MUST_RESYNC ||
        code == JWRN_NOT_SEQUENTIAL || code == JWRN_BOGUS_PROGRESSION) {
        if (!e->fatal_warning) {
            e->fatal_warning = 1;
            (*cinfo->err->format_message)(cinfo, e->message);
        }
    }
}

static void set_message(char *message, size_t size, const char *text) {
    if (message && size) snprintf(message, size, "%s", text);
}

// libjpeg's stdio source reads 4 KiB at a time, and its Huffman decoder takes its fast path only
// while a whole MCU's worst case (512 bytes a block) is buffered: with 4 KiB, a quarter of the time.
// This source reads 64 KiB at a time, so nearly every MCU is decoded on the fast path.
enum { SOURCE_BUFFER = 1 << 16 };

struct file_source {
    struct jpeg_source_mgr base;
    FILE *file;
    JOCTET *buffer;
    int start_of_file;
};

static void source_init(j_decompress_ptr cinfo) { ((struct file_source *)cinfo->src)->start_of_file = 1; }

// As libjpeg's own source: an empty file is an error; an end before the image's end is a warning
// (fatal under the strict policy) followed by an inserted end-of-image marker.
static boolean source_fill(j_decompress_ptr cinfo) {
    struct file_source *s = (struct file_source *)cinfo->src;
    size_t count = fread(s->buffer, 1, SOURCE_BUFFER, s->file);
    if (count == 0) {
        if (s->start_of_file) ERREXIT(cinfo, JERR_INPUT_EMPTY);
        WARNMS(cinfo, JWRN_JPEG_EOF);
        s->buffer[0] = (JOCTET)0xFF;
        s->buffer[1] = (JOCTET)JPEG_EOI;
        count = 2;
    }
    s->base.next_input_byte = s->buffer;
    s->base.bytes_in_buffer = count;
    s->start_of_file = 0;
    return TRUE;
}

static void source_skip(j_decompress_ptr cinfo, long count) {
    struct jpeg_source_mgr *s = cinfo->src;
    if (count <= 0) return;
    while (count > (long)s->bytes_in_buffer) {
        count -= (long)s->bytes_in_buffer;
        (void)(*s->fill_input_buffer)(cinfo);
    }
    s->next_input_byte += count;
    s->bytes_in_buffer -= (size_t)count;
}

static void source_term(j_decompress_ptr cinfo) { (void)cinfo; }

// Allocated in libjpeg's permanent pool, so jpeg_destroy_decompress frees it.
static void file_source(j_decompress_ptr cinfo, FILE *file) {
    struct file_source *s = (struct file_source *)(*cinfo->mem->alloc_small)((j_common_ptr)cinfo, JPOOL_PERMANENT,
                                                                             sizeof(struct file_source));
    s->buffer = (JOCTET *)(*cinfo->mem->alloc_large)((j_common_ptr)cinfo, JPOOL_PERMANENT, SOURCE_BUFFER);
    s->file = file;
    s->base.init_source = source_init;
    s->base.fill_input_buffer = source_fill;
    s->base.skip_input_data = source_skip;
    s->base.resync_to_restart = jpeg_resync_to_restart;
    s->base.term_source = source_term;
    s->base.bytes_in_buffer = 0;
    s->base.next_input_byte = NULL;
    cinfo->src = &s->base;
}

static cjpeg_status read_header(cjpeg_decoder *d, cjpeg_info *info, const uint8_t *bytes, size_t length) {
    if (setjmp(d->error.jump)) return CJPEG_ERROR;
    jpeg_create_decompress(&d->cinfo);
    if (d->file) file_source(&d->cinfo, d->file);
    else jpeg_mem_src(&d->cinfo, bytes, (unsigned long)length);
    jpeg_save_markers(&d->cinfo, JPEG_APP0 + 1, 0xffff);
    jpeg_read_header(&d->cinfo, TRUE);
    if (d->error.fatal_warning) return CJPEG_ERROR;
    info->width = d->cinfo.image_width;
    info->height = d->cinfo.image_height;
    info->components = d->cinfo.num_components;
    info->color_space = d->cinfo.jpeg_color_space;
    info->progressive = d->cinfo.progressive_mode;
    info->eighth = eighth_eligible(&d->cinfo);
    info->eighth_bytes = info->eighth ? eighth_held_bytes(&d->cinfo) : 0;
    info->exif = NULL;
    info->exif_length = 0;
    info->xmp = NULL;
    info->xmp_length = 0;
    static const char xmp_prefix[] = "http://ns.adobe.com/xap/1.0/";  // and its NUL: 29 bytes
    for (jpeg_saved_marker_ptr m = d->cinfo.marker_list; m; m = m->next) {
        if (m->marker != JPEG_APP0 + 1) continue;
        if (!d->exif && m->data_length > 6 && memcmp(m->data, "Exif\0\0", 6) == 0) {
            d->exif_length = m->data_length - 6;
            d->exif = malloc(d->exif_length);
            if (d->exif) {
                memcpy(d->exif, m->data + 6, d->exif_length);
                info->exif = d->exif;
                info->exif_length = d->exif_length;
            }
        } else if (!d->xmp && m->data_length > sizeof xmp_prefix && memcmp(m->data, xmp_prefix, sizeof xmp_prefix) == 0) {
            d->xmp_length = m->data_length - sizeof xmp_prefix;
            d->xmp = malloc(d->xmp_length);
            if (d->xmp) {
                memcpy(d->xmp, m->data + sizeof xmp_prefix, d->xmp_length);
                info->xmp = d->xmp;
                info->xmp_length = d->xmp_length;
            }
        }
    }
    return CJPEG_OK;
}

// The source reads 64 KiB straight into its own buffer; a stdio buffer too would only copy.
static FILE *unbuffered(FILE *file) {
    if (file) setvbuf(file, NULL, _IONBF, 0);
    return file;
}

// A decoder over `file` (which it then owns) or over `bytes`, with its header read.
static cjpeg_decoder *open_source(FILE *file, const uint8_t *bytes, size_t length, cjpeg_info *info,
                                  cjpeg_status *status, char *message, size_t message_size) {
    cjpeg_decoder *d = calloc(1, sizeof *d);
    if (!d) {
        if (file) fclose(file);
        *status = CJPEG_ERROR;
        set_message(message, message_size, "out of memory");
        return NULL;
    }
    d->file = file;
    d->bytes = bytes;
    d->length = length;
    d->cinfo.err = jpeg_std_error(&d->error.base);
    d->error.base.error_exit = on_error_exit;
    d->error.base.emit_message = on_emit_message;
    *status = read_header(d, info, bytes, length);
    if (*status != CJPEG_OK) {
        set_message(message, message_size, d->error.message);
        cjpeg_close(d);
        return NULL;
    }
    return d;
}

static cjpeg_decoder *open_file(FILE *file, cjpeg_info *info, cjpeg_status *status, char *message, size_t message_size);


cjpeg_decoder *cjpeg_open(const char *path, cjpeg_info *info, cjpeg_status *status, char *message, size_t message_size) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        *status = CJPEG_IO;
        set_message(message, message_size, strerror(errno));
        return NULL;
    }
    return open_file(unbuffered(file), info, status, message, message_size);
}

cjpeg_decoder *cjpeg_open_fd(int fd, cjpeg_info *info, cjpeg_status *status, char *message, size_t message_size) {
    int own = dup(fd);
    FILE *file = unbuffered(own >= 0 ? fdopen(own, "rb") : NULL);
    if (!file || fseek(file, 0, SEEK_SET) != 0) {
        *status = CJPEG_IO;
        set_message(message, message_size, strerror(errno));
        if (file) fclose(file); else if (own >= 0) close(own);
        return NULL;
    }
    return open_file(file, info, status, message, message_size);
}

static cjpeg_decoder *open_file(FILE *file, cjpeg_info *info, cjpeg_status *status, char *message, size_t message_size) {
    unsigned char soi[2];
    if (fread(soi, 1, 2, file) != 2 || soi[0] != 0xFF || soi[1] != 0xD8) {
        fclose(file);
        *status = CJPEG_NOT_JPEG;
        set_message(message, message_size, "not a JPEG file (no start-of-image marker)");
        return NULL;
    }
    rewind(file);
    return open_source(file, NULL, 0, info, status, message, message_size);
}

cjpeg_decoder *cjpeg_open_memory(const uint8_t *bytes, size_t length, cjpeg_info *info, cjpeg_status *status,
                                 char *message, size_t message_size) {
    if (length < 3 || bytes[0] != 0xFF || bytes[1] != 0xD8) {
        *status = CJPEG_NOT_JPEG;
        set_message(message, message_size, "not a JPEG (no start-of-image marker)");
        return NULL;
    }
    return open_source(NULL, bytes, length, info, status, message, message_size);
}

// The decoder as after cjpeg_open again: the source rewound and the header read anew, for libjpeg
// to decode from the start (and report what is wrong). 0, or -1 where that failed.
static int reopen(cjpeg_decoder *d) {
    eighth_free(d->eighth);
    d->eighth = NULL;
    jpeg_destroy_decompress(&d->cinfo);
    d->error.fatal_warning = 0;
    d->error.message[0] = 0;
    if (d->file && fseek(d->file, 0, SEEK_SET) != 0) {
        snprintf(d->error.message, sizeof d->error.message, "cannot read the file again: %s", strerror(errno));
        return -1;
    }
    cjpeg_info info;
    return read_header(d, &info, d->bytes, d->length) == CJPEG_OK ? 0 : -1;
}

// Tries eighth.c: 1 when it takes the image; 2 when it does not (nothing read); otherwise (0, or
// -1 on failure) as reopen. With CJPEG_START_TWO_THREADS it is told where the rest of the file is.
static int decode_eighth(cjpeg_decoder *d) {
    eighth_more more = {.file = -1};
    if (d->flags & CJPEG_START_TWO_THREADS) {
        struct jpeg_source_mgr *src = d->cinfo.src;
        struct stat st;
        long position = d->file ? ftell(d->file) : -1;
        if (d->bytes) {
            more.data = src->next_input_byte;
            more.length = src->bytes_in_buffer;
        } else if (position >= (long)src->bytes_in_buffer && fstat(fileno(d->file), &st) == 0 && S_ISREG(st.st_mode) &&
                   st.st_size > position) {
            more.file = fileno(d->file);
            more.offset = (uint64_t)position - src->bytes_in_buffer;
            more.length = (size_t)((uint64_t)st.st_size - more.offset);
        }
    }
    int two = more.data || more.file >= 0;
    if (!eighth_takes(&d->cinfo, two ? more.length : 0)) return 2;
    d->eighth = eighth_decode(&d->cinfo, &d->error.fatal_warning, two ? &more : NULL);
    return d->eighth ? 1 : reopen(d);
}

static cjpeg_status start_libjpeg(cjpeg_decoder *d, int denominator, int flags, uint32_t *out_width, uint32_t *out_height);

// eighth.c stopped at bad data after giving `rows` rows: libjpeg decodes from the start, its
// first rows (the same) read past, so that it gives the rest or reports what is wrong.
static cjpeg_status resume_with_libjpeg(cjpeg_decoder *d, uint32_t rows) {
    if (reopen(d) != 0) return CJPEG_ERROR;
    if (setjmp(d->error.jump)) return CJPEG_ERROR;
    uint32_t w, h;
    if (start_libjpeg(d, 8, d->flags, &w, &h) != CJPEG_OK) return CJPEG_ERROR;
    uint8_t *skipped = malloc((size_t)w * 4);
    if (!skipped) return CJPEG_ERROR;
    cjpeg_status status = CJPEG_OK;
    for (uint32_t y = 0; y < rows && status == CJPEG_OK; y++) status = cjpeg_read_row(d, skipped);
    free(skipped);
    return status;
}

cjpeg_status cjpeg_start(cjpeg_decoder *d, int denominator, int flags, uint32_t *out_width, uint32_t *out_height) {
    if (setjmp(d->error.jump)) return CJPEG_ERROR;
    d->flags = flags;
    if (denominator == 8 && !(flags & CJPEG_START_LIBJPEG) && eighth_eligible(&d->cinfo)) {
        int done = decode_eighth(d);
        if (done < 0) return CJPEG_ERROR;
        if (done == 1) {
            d->started = 1;
            *out_width = eighth_width(d->eighth);
            *out_height = eighth_height(d->eighth);
            return CJPEG_OK;
        }
        // read_header set its own jump: this function's must be the one taken from here on.
        if (done == 0 && setjmp(d->error.jump)) return CJPEG_ERROR;
    }
    return start_libjpeg(d, denominator, flags, out_width, out_height);
}

void cjpeg_limit_whole_image(cjpeg_decoder *d, uint64_t max_pixels) { d->whole_limit = max_pixels; }

// libjpeg's decompression at 1/denominator; the caller has set the jump.
static cjpeg_status start_libjpeg(cjpeg_decoder *d, int denominator, int flags, uint32_t *out_width, uint32_t *out_height) {
    uint64_t pixels = (uint64_t)d->cinfo.image_width * d->cinfo.image_height;
    if (d->whole_limit && d->cinfo.progressive_mode && pixels > d->whole_limit) {
        snprintf(d->error.message, sizeof d->error.message,
                 "%u×%u pixels exceeds the limit of %llu pixels of a progressive JPEG that libjpeg decodes whole",
                 d->cinfo.image_width, d->cinfo.image_height, (unsigned long long)d->whole_limit);
        return CJPEG_TOO_LARGE;
    }
    int fast = flags & CJPEG_START_FAST;
    d->cinfo.scale_num = 1;
    d->cinfo.scale_denom = (unsigned)denominator;
    d->cinfo.dct_method = fast ? JDCT_IFAST : JDCT_ISLOW;
    d->cinfo.do_fancy_upsampling = fast ? FALSE : TRUE;
    if (d->cinfo.jpeg_color_space == JCS_CMYK || d->cinfo.jpeg_color_space == JCS_YCCK) {
        d->cinfo.out_color_space = JCS_CMYK;
        d->cmyk = 1;
        d->adobe_inverted = d->cinfo.saw_Adobe_marker;
    } else {
        d->cinfo.out_color_space = JCS_EXT_RGBA;
    }
    jpeg_start_decompress(&d->cinfo);
    d->started = 1;
    if (d->cmyk) {
        d->scratch = malloc((size_t)d->cinfo.output_width * 4);
        if (!d->scratch) {
            snprintf(d->error.message, sizeof d->error.message, "out of memory");
            return CJPEG_ERROR;
        }
    }
    *out_width = d->cinfo.output_width;
    *out_height = d->cinfo.output_height;
    return d->error.fatal_warning ? CJPEG_ERROR : CJPEG_OK;
}

cjpeg_status cjpeg_read_row(cjpeg_decoder *d, uint8_t *row) {
    if (d->eighth) {
        if (d->next_row >= eighth_height(d->eighth)) {
            snprintf(d->error.message, sizeof d->error.message, "no more scanlines");
            return CJPEG_ERROR;
        }
        if (eighth_row(d->eighth, d->next_row, row)) {
            d->next_row++;
            return CJPEG_OK;
        }
        if (resume_with_libjpeg(d, d->next_row) != CJPEG_OK) return CJPEG_ERROR;
    }
    if (setjmp(d->error.jump)) return CJPEG_ERROR;
    JSAMPROW target = d->cmyk ? d->scratch : row;
    if (jpeg_read_scanlines(&d->cinfo, &target, 1) != 1) {
        snprintf(d->error.message, sizeof d->error.message, "no more scanlines");
        return CJPEG_ERROR;
    }
    if (d->error.fatal_warning) return CJPEG_ERROR;
    if (d->cmyk) {
        uint32_t w = d->cinfo.output_width;
        for (uint32_t x = 0; x < w; x++) {
            unsigned c = d->scratch[4 * x], m = d->scratch[4 * x + 1], y = d->scratch[4 * x + 2], k = d->scratch[4 * x + 3];
            if (!d->adobe_inverted) {
                c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k;
            }
            // Inverted CMYK: value 255 means no ink. RGB = (1 - C)(1 - K) with inverted channels.
            row[4 * x] = (uint8_t)((c * k + 127) / 255);
            row[4 * x + 1] = (uint8_t)((m * k + 127) / 255);
            row[4 * x + 2] = (uint8_t)((y * k + 127) / 255);
            row[4 * x + 3] = 255;
        }
    }
    return CJPEG_OK;
}

cjpeg_status cjpeg_finish(cjpeg_decoder *d) {
    if (d->eighth) {
        if (eighth_finish(d->eighth)) {
            d->started = 0;
            return CJPEG_OK;
        }
        if (resume_with_libjpeg(d, d->next_row) != CJPEG_OK) return CJPEG_ERROR;
        // Rows eighth.c did not give (a caller that finishes early) are libjpeg's to read past.
        uint8_t *skipped = malloc((size_t)d->cinfo.output_width * 4);
        if (!skipped) return CJPEG_ERROR;
        cjpeg_status status = CJPEG_OK;
        while (status == CJPEG_OK && d->cinfo.output_scanline < d->cinfo.output_height) status = cjpeg_read_row(d, skipped);
        free(skipped);
        if (status != CJPEG_OK) return status;
    }
    if (setjmp(d->error.jump)) return CJPEG_ERROR;
    jpeg_finish_decompress(&d->cinfo);
    d->started = 0;
    return d->error.fatal_warning ? CJPEG_ERROR : CJPEG_OK;
}

const char *cjpeg_message(const cjpeg_decoder *d) { return d->error.message; }

void cjpeg_close(cjpeg_decoder *d) {
    if (!d) return;
    // jpeg_destroy never fails; abort also releases a decompression in progress.
    jpeg_destroy_decompress(&d->cinfo);
    eighth_free(d->eighth);
    if (d->file) fclose(d->file);
    free(d->scratch);
    free(d->exif);
    free(d->xmp);
    free(d);
}

// MARK: Encoding

struct encoder {
    struct jpeg_compress_struct cinfo;
    struct error_manager error;
    unsigned char *buffer;
    unsigned long length;
    uint8_t *row;
};

static cjpeg_status encode(struct encoder *e, const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                           const cjpeg_options *o, const uint8_t *exif, size_t exif_length) {
    if (setjmp(e->error.jump)) return CJPEG_ERROR;
    jpeg_create_compress(&e->cinfo);
    jpeg_mem_dest(&e->cinfo, &e->buffer, &e->length);
    e->cinfo.image_width = width;
    e->cinfo.image_height = height;
    switch (o->color) {
    case CJPEG_COLOR_GRAY:
        e->cinfo.input_components = 1;
        e->cinfo.in_color_space = JCS_GRAYSCALE;
        break;
    case CJPEG_COLOR_CMYK:
    case CJPEG_COLOR_YCCK:
        e->cinfo.input_components = 4;
        e->cinfo.in_color_space = JCS_CMYK;
        break;
    default:
        e->cinfo.input_components = 4;
        e->cinfo.in_color_space = JCS_EXT_RGBA;
    }
    jpeg_set_defaults(&e->cinfo);
    if (o->color == CJPEG_COLOR_YCCK) jpeg_set_colorspace(&e->cinfo, JCS_YCCK);
    jpeg_set_quality(&e->cinfo, o->quality, TRUE);
    if (o->luma_h > 0 && o->luma_v > 0 && o->color != CJPEG_COLOR_GRAY) {
        e->cinfo.comp_info[0].h_samp_factor = o->luma_h;
        e->cinfo.comp_info[0].v_samp_factor = o->luma_v;
    }
    if (o->restart_rows > 0) e->cinfo.restart_in_rows = o->restart_rows;
    if (o->progressive) jpeg_simple_progression(&e->cinfo);
    jpeg_start_compress(&e->cinfo, TRUE);
    if (exif && exif_length > 0 && exif_length <= 65533 - 6) {
        unsigned char *segment = malloc(exif_length + 6);
        if (segment) {
            memcpy(segment, "Exif\0\0", 6);
            memcpy(segment + 6, exif, exif_length);
            jpeg_write_marker(&e->cinfo, JPEG_APP0 + 1, segment, (unsigned)(exif_length + 6));
            free(segment);
        }
    }
    if (o->color == CJPEG_COLOR_GRAY) {
        e->row = malloc(width);
        if (!e->row) {
            snprintf(e->error.message, sizeof e->error.message, "out of memory");
            return CJPEG_ERROR;
        }
    }
    for (uint32_t y = 0; y < height; y++) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)y * stride);
        if (e->row) {
            for (uint32_t x = 0; x < width; x++) e->row[x] = row[4 * x];
            row = e->row;
        }
        jpeg_write_scanlines(&e->cinfo, &row, 1);
    }
    jpeg_finish_compress(&e->cinfo);
    return CJPEG_OK;
}

cjpeg_status cjpeg_encode_rgba(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                               const cjpeg_options *options, const uint8_t *exif, size_t exif_length,
                               uint8_t **out, size_t *out_length, char *message, size_t message_size) {
    struct encoder *e = calloc(1, sizeof *e);
    if (!e) {
        set_message(message, message_size, "out of memory");
        return CJPEG_ERROR;
    }
    e->cinfo.err = jpeg_std_error(&e->error.base);
    e->error.base.error_exit = on_error_exit;
    e->error.base.emit_message = on_emit_message;
    cjpeg_status status = encode(e, pixels, width, height, stride, options, exif, exif_length);
    jpeg_destroy_compress(&e->cinfo);
    free(e->row);
    if (status != CJPEG_OK) {
        set_message(message, message_size, e->error.message);
        free(e->buffer);
    } else {
        *out = e->buffer;
        *out_length = e->length;
    }
    free(e);
    return status;
}

void cjpeg_free(void *pointer) { free(pointer); }

int cjpeg_decoded_by(const cjpeg_decoder *d) {
    if (!d->eighth) return 0;
    return eighth_threads_used(d->eighth) == 2 ? 2 : 1;
}
