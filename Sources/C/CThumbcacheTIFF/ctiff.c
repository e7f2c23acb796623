#define _GNU_SOURCE
#include "ctiff.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <tiffio.h>
#include "tc_libraries.h"

// libtiff is loaded with dlopen at the first TIFF, not linked: with the codecs it brings (LERC,
// JBIG, libdeflate…) it took about half a millisecond of every image worker's start, which a JPEG
// never needs. A confined worker may still load it then: Landlock lets it read the system's
// libraries (Sources/C/CThumbcacheSandbox, SECURITY.md).
#define TIFF_FUNCTIONS(X)                                                                              \
    X(TIFFClientOpenExt) X(TIFFClose) X(TIFFComputeStrip) X(TIFFComputeTile) X(TIFFCurrentDirectory)   \
    X(TIFFGetField) X(TIFFGetFieldDefaulted) X(TIFFGetStrileByteCount) X(TIFFIsTiled)                  \
    X(TIFFNumberOfStrips) X(TIFFOpenOptionsAlloc) X(TIFFOpenOptionsFree)                               \
    X(TIFFOpenOptionsSetErrorHandlerExtR) X(TIFFOpenOptionsSetMaxSingleMemAlloc)                       \
    X(TIFFOpenOptionsSetWarningHandlerExtR) X(TIFFRGBAImageBegin) X(TIFFRGBAImageEnd)                  \
    X(TIFFRGBAImageGet) X(TIFFRGBAImageOK) X(TIFFReadDirectory) X(TIFFReadEncodedStrip)                \
    X(TIFFReadEncodedTile) X(TIFFReadRawStrip) X(TIFFSetDirectory) X(TIFFSetErrorHandler)              \
    X(TIFFSetSubDirectory) X(TIFFSetWarningHandler) X(TIFFStripSize) X(TIFFTileSize)

/// The functions used, each field named as the headers name the function.
static struct { TIFF_FUNCTIONS(TC_LIBRARY_FIELD) } lib;
static const char *const names[] = {TIFF_FUNCTIONS(TC_LIBRARY_NAME)};
static tc_library library = TC_LIBRARY("libtiff", "libtiff.so.6", "libtiff6", names, lib);

const char *ctiff_load(void) { return tc_library_load(&library); }

// No single allocation of libtiff's may pass this: strip and tile buffers of real files stay far
// below; a header claiming a 4 GB strip fails here instead of reaching the allocator.
#define CTIFF_MAX_ALLOCATION ((tmsize_t)64 << 20)
// Directories looked at for reduced-resolution copies and pages (a crafted file may chain many).
#define CTIFF_MAX_DIRECTORIES 64

struct ctiff_decoder {
    TIFF *tiff;
    int fd;
    off_t offset;
    off_t size;
    char message[256];
    TIFFRGBAImage image;
    int began;
    tdir_t main_directory;
    uint32_t width, height;   // the main image's
    // Later top-level pages marked as reduced copies, noted while the directories are counted at
    // open, so that choosing one reads no directory twice.
    struct { tdir_t directory; uint32_t width, height; } reduced_pages[CTIFF_MAX_DIRECTORIES];
    int reduced_page_count;
    // What libtiff's RGBA interface cannot convert is read as stored and converted here.
    enum { RGBA_INTERFACE, RAW_FLOAT, RAW_CMYK16 } mode;
    uint16_t samples, bits;
    int alpha_sample;        // index of the alpha sample, or -1
    int gray;                // one colour sample
    uint8_t *chunk;          // one strip or tile as stored
    tmsize_t chunk_size;
    float low, high;         // float samples' range over the image (colour samples, finite ones)
    uint32_t raw_width, raw_height;  // the chosen image's (the main one's or a reduced copy's)
};

static void set_message(char *message, size_t size, const char *text) {
    if (message && size) snprintf(message, size, "%s", text);
}

static int on_error(TIFF *tiff, void *user, const char *module, const char *format, va_list args) {
    (void)tiff;
    (void)module;
    struct ctiff_decoder *d = user;
    if (d && !d->message[0]) vsnprintf(d->message, sizeof d->message, format, args);
    return 1;
}

static int on_warning(TIFF *tiff, void *user, const char *module, const char *format, va_list args) {
    (void)tiff, (void)user, (void)module, (void)format, (void)args;
    return 1;  // warnings (unknown tags and the like) are not printed
}

static tmsize_t read_proc(thandle_t handle, void *buffer, tmsize_t size) {
    struct ctiff_decoder *d = handle;
    tmsize_t done = 0;
    while (done < size) {
        ssize_t n = pread(d->fd, (char *)buffer + done, (size_t)(size - done), d->offset + done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += n;
    }
    d->offset += done;
    return done;
}

static tmsize_t write_proc(thandle_t handle, void *buffer, tmsize_t size) {
    (void)handle, (void)buffer, (void)size;
    return -1;
}

static toff_t seek_proc(thandle_t handle, toff_t offset, int whence) {
    struct ctiff_decoder *d = handle;
    off_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? d->offset : d->size;
    d->offset = base + (off_t)offset;
    return (toff_t)d->offset;
}

static int close_proc(thandle_t handle) {
    (void)handle;
    return 0;
}

static toff_t size_proc(thandle_t handle) { return (toff_t)((struct ctiff_decoder *)handle)->size; }

static int map_proc(thandle_t handle, void **base, toff_t *size) {
    (void)handle, (void)base, (void)size;
    return 0;  // never mapped: reads stay bounded by strips and tiles
}

static void unmap_proc(thandle_t handle, void *base, toff_t size) { (void)handle, (void)base, (void)size; }

static int is_reduced(TIFF *tiff) {
    uint32_t type = 0;
    return lib.TIFFGetField(tiff, TIFFTAG_SUBFILETYPE, &type) && (type & FILETYPE_REDUCEDIMAGE);
}

static void size_of(TIFF *tiff, uint32_t *width, uint32_t *height) {
    *width = *height = 0;
    lib.TIFFGetField(tiff, TIFFTAG_IMAGEWIDTH, width);
    lib.TIFFGetField(tiff, TIFFTAG_IMAGELENGTH, height);
}

static uint32_t band_rows_of(TIFF *tiff, uint32_t height) {
    uint32_t rows = 0;
    if (lib.TIFFIsTiled(tiff)) {
        lib.TIFFGetField(tiff, TIFFTAG_TILELENGTH, &rows);
    } else {
        lib.TIFFGetFieldDefaulted(tiff, TIFFTAG_ROWSPERSTRIP, &rows);
    }
    if (rows == 0 || rows > height) rows = height;
    return rows;
}

ctiff_decoder *ctiff_open_fd(int fd, ctiff_info *info, char *message, size_t message_size) {
    const char *unloaded = ctiff_load();
    if (unloaded) {
        set_message(message, message_size, unloaded);
        return NULL;
    }
    // Errors without a TIFF handle would go to the global handlers, which print: silence them.
    lib.TIFFSetErrorHandler(NULL);
    lib.TIFFSetWarningHandler(NULL);
    struct ctiff_decoder *d = calloc(1, sizeof *d);
    if (!d) {
        set_message(message, message_size, "out of memory");
        return NULL;
    }
    struct stat s;
    if (fstat(fd, &s) != 0) {
        set_message(message, message_size, strerror(errno));
        free(d);
        return NULL;
    }
    d->fd = fd;
    d->size = s.st_size;
    TIFFOpenOptions *options = lib.TIFFOpenOptionsAlloc();
    lib.TIFFOpenOptionsSetErrorHandlerExtR(options, on_error, d);
    lib.TIFFOpenOptionsSetWarningHandlerExtR(options, on_warning, d);
    lib.TIFFOpenOptionsSetMaxSingleMemAlloc(options, CTIFF_MAX_ALLOCATION);
    d->tiff = lib.TIFFClientOpenExt("tiff", "rm", d, read_proc, write_proc, seek_proc, close_proc, size_proc, map_proc, unmap_proc,
                                options);
    lib.TIFFOpenOptionsFree(options);
    if (!d->tiff) {
        set_message(message, message_size, d->message[0] ? d->message : "not a readable TIFF file");
        free(d);
        return NULL;
    }
    memset(info, 0, sizeof *info);
    TIFF *t = d->tiff;
    d->main_directory = lib.TIFFCurrentDirectory(t);
    size_of(t, &info->width, &info->height);
    d->width = info->width;
    d->height = info->height;
    uint16_t bits = 1, photometric = 0, orientation = 1, extra = 0;
    uint16_t *extra_types = NULL;
    lib.TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &bits);
    lib.TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &photometric);
    lib.TIFFGetFieldDefaulted(t, TIFFTAG_ORIENTATION, &orientation);
    lib.TIFFGetFieldDefaulted(t, TIFFTAG_EXTRASAMPLES, &extra, &extra_types);
    info->bits_per_sample = bits;
    info->photometric = photometric;
    info->orientation = orientation >= 1 && orientation <= 8 ? orientation : 1;
    info->has_alpha = extra > 0 && extra_types &&
                      (extra_types[0] == EXTRASAMPLE_ASSOCALPHA || extra_types[0] == EXTRASAMPLE_UNASSALPHA);
    info->band_rows = band_rows_of(t, info->height);
    // Reduced-resolution copies: SubIFDs of the first image, and later reduced pages.
    uint16_t subifd_count = 0;
    uint64_t *subifds = NULL;
    if (lib.TIFFGetField(t, TIFFTAG_SUBIFD, &subifd_count, &subifds)) info->reduced_images += subifd_count;
    int pages = 1;
    for (int i = 1; i < CTIFF_MAX_DIRECTORIES && lib.TIFFReadDirectory(t); i++) {
        if (!is_reduced(t)) {
            pages++;
            continue;
        }
        info->reduced_images++;
        int n = d->reduced_page_count++;
        d->reduced_pages[n].directory = lib.TIFFCurrentDirectory(t);
        size_of(t, &d->reduced_pages[n].width, &d->reduced_pages[n].height);
    }
    info->pages = pages;
    d->message[0] = 0;
    if (!lib.TIFFSetDirectory(t, d->main_directory)) {
        set_message(message, message_size, d->message[0] ? d->message : "cannot return to the first TIFF image");
        ctiff_close(d);
        return NULL;
    }
    return d;
}

int ctiff_select(ctiff_decoder *d, uint32_t min_width, uint32_t min_height, uint32_t *width, uint32_t *height,
                 uint32_t *band_rows) {
    TIFF *t = d->tiff;
    uint32_t best_w = d->width, best_h = d->height;
    tdir_t best_directory = d->main_directory;
    uint64_t best_subifd = 0;  // 0: a top-level directory
    d->message[0] = 0;
    if (!lib.TIFFSetDirectory(t, d->main_directory)) return -1;
    // Only a smaller image can be chosen: at full size nothing more is read.
    if (min_width < d->width || min_height < d->height) {
        for (int i = 0; i < d->reduced_page_count; i++) {
            uint32_t w = d->reduced_pages[i].width, h = d->reduced_pages[i].height;
            if (w >= min_width && h >= min_height && (uint64_t)w * h < (uint64_t)best_w * best_h) {
                best_w = w, best_h = h, best_directory = d->reduced_pages[i].directory;
            }
        }
        // SubIFDs of the main image: read here, when a smaller image is wanted at all.
        uint16_t count = 0;
        uint64_t *offsets = NULL;
        uint64_t list[CTIFF_MAX_DIRECTORIES];
        int n = 0;
        if (lib.TIFFGetField(t, TIFFTAG_SUBIFD, &count, &offsets))
            for (int i = 0; i < count && n < CTIFF_MAX_DIRECTORIES; i++) list[n++] = offsets[i];
        for (int i = 0; i < n; i++) {
            if (!lib.TIFFSetSubDirectory(t, list[i])) continue;
            uint32_t w, h;
            size_of(t, &w, &h);
            if (w >= min_width && h >= min_height && (uint64_t)w * h < (uint64_t)best_w * best_h) {
                best_w = w, best_h = h, best_subifd = list[i], best_directory = d->main_directory;
            }
        }
        d->message[0] = 0;
        if (!lib.TIFFSetDirectory(t, best_directory)) return -1;
        if (best_subifd && !lib.TIFFSetSubDirectory(t, best_subifd)) return -1;
    }
    *width = best_w;
    *height = best_h;
    *band_rows = band_rows_of(t, best_h);
    return 0;
}

// ---------------------------------------------------------------------------- raw samples

// One stored sample as a float: IEEE half, single or double, or 16-bit unsigned scaled to 0…1.
static float sample_at(const ctiff_decoder *d, const uint8_t *p, size_t index) {
    if (d->mode == RAW_CMYK16) {
        uint16_t v;
        memcpy(&v, p + index * 2, 2);
        return v / 65535.0f;
    }
    switch (d->bits) {
    case 16: {
        uint16_t h;
        memcpy(&h, p + index * 2, 2);
        uint32_t sign = (uint32_t)(h >> 15) << 31, exponent = h >> 10 & 31, mantissa = h & 1023, f;
        if (exponent == 0) {
            float v = mantissa / 16777216.0f;  // subnormal: mantissa × 2^-24
            return sign ? -v : v;
        }
        f = exponent == 31 ? sign | 0x7F800000u | mantissa << 13 : sign | (exponent + 112) << 23 | mantissa << 13;
        float v;
        memcpy(&v, &f, 4);
        return v;
    }
    case 64: {
        double v;
        memcpy(&v, p + index * 8, 8);
        return (float)v;
    }
    default: {
        float v;
        memcpy(&v, p + index * 4, 4);
        return v;
    }
    }
}

// What the chosen image needs: libtiff's RGBA interface, or the shim's own conversion for float
// samples (gray or RGB, chunky) and 16-bit CMYK, which that interface refuses. Records the tags
// the conversion reads.
static int conversion_of(ctiff_decoder *d) {
    TIFF *t = d->tiff;
    uint16_t format = SAMPLEFORMAT_UINT, photometric = 0, planar = PLANARCONFIG_CONTIG, inkset = INKSET_CMYK;
    d->samples = 1, d->bits = 1;
    lib.TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLESPERPIXEL, &d->samples);
    lib.TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &d->bits);
    lib.TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLEFORMAT, &format);
    lib.TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &photometric);
    lib.TIFFGetFieldDefaulted(t, TIFFTAG_PLANARCONFIG, &planar);
    lib.TIFFGetFieldDefaulted(t, TIFFTAG_INKSET, &inkset);
    uint16_t n = d->samples, bits = d->bits;
    d->gray = photometric == PHOTOMETRIC_MINISBLACK;
    if (planar != PLANARCONFIG_CONTIG) return RGBA_INTERFACE;
    if (format == SAMPLEFORMAT_IEEEFP && (bits == 16 || bits == 32 || bits == 64) &&
        ((d->gray && n >= 1 && n <= 2) || (photometric == PHOTOMETRIC_RGB && n >= 3 && n <= 4)))
        return RAW_FLOAT;
    if (photometric == PHOTOMETRIC_SEPARATED && inkset == INKSET_CMYK && bits == 16 && format == SAMPLEFORMAT_UINT && n >= 4 && n <= 5)
        return RAW_CMYK16;
    return RGBA_INTERFACE;
}

// Reads the strip or tile holding (`x`, `y`) into d->chunk; its first row and column come back.
static int read_chunk(ctiff_decoder *d, uint32_t x, uint32_t y, uint32_t *chunk_x, uint32_t *chunk_y, uint32_t *chunk_w) {
    TIFF *t = d->tiff;
    if (lib.TIFFIsTiled(t)) {
        uint32_t tw = 0, th = 0;
        lib.TIFFGetField(t, TIFFTAG_TILEWIDTH, &tw);
        lib.TIFFGetField(t, TIFFTAG_TILELENGTH, &th);
        if (!tw || !th) return -1;
        *chunk_x = x / tw * tw, *chunk_y = y / th * th, *chunk_w = tw;
        return lib.TIFFReadEncodedTile(t, lib.TIFFComputeTile(t, x, y, 0, 0), d->chunk, d->chunk_size) < 0 ? -1 : 0;
    }
    uint32_t rows = band_rows_of(t, d->raw_height);
    *chunk_x = 0, *chunk_y = y / rows * rows, *chunk_w = d->raw_width;
    return lib.TIFFReadEncodedStrip(t, lib.TIFFComputeStrip(t, y, 0), d->chunk, d->chunk_size) < 0 ? -1 : 0;
}

// The float samples' range: one pass over every strip or tile before any row is made, so that
// data outside 0…1 (elevations, HDR radiance) can be mapped into it.
static int float_range(ctiff_decoder *d) {
    float low = INFINITY, high = -INFINITY;
    uint32_t rows = band_rows_of(d->tiff, d->raw_height);
    for (uint32_t y = 0; y < d->raw_height; y += rows) {
        for (uint32_t x = 0; x < d->raw_width;) {
            uint32_t cx, cy, cw;
            if (read_chunk(d, x, y, &cx, &cy, &cw) != 0) return -1;
            uint32_t h = rows < d->raw_height - cy ? rows : d->raw_height - cy, w = cw < d->raw_width - cx ? cw : d->raw_width - cx;
            for (uint32_t r = 0; r < h; r++)
                for (uint32_t c = 0; c < w; c++)
                    for (int s = 0; s < d->samples; s++) {
                        if (s == d->alpha_sample) continue;
                        float v = sample_at(d, d->chunk, ((size_t)r * cw + c) * d->samples + s);
                        if (isfinite(v)) low = v < low ? v : low, high = v > high ? v : high;
                    }
            x = lib.TIFFIsTiled(d->tiff) ? cx + cw : d->raw_width;
        }
    }
    d->low = isfinite(low) ? low : 0;
    d->high = isfinite(high) ? high : 1;
    return 0;
}

// A colour sample to 0…255. Data within 0…1 is taken as display values, as ImageMagick writes
// them; gray data outside that range is stretched from its minimum to its maximum; in colour
// data reaching above 1 (HDR), values above 0.8 are compressed by a soft knee that tends to 1.
static uint8_t tone(const ctiff_decoder *d, float v) {
    if (!isfinite(v)) return v > 0 ? 255 : 0;
    if (d->gray && (d->low < 0 || d->high > 1)) v = d->high > d->low ? (v - d->low) / (d->high - d->low) : 0;
    else if (d->high > 1 && v > 0.8f) v = 0.8f + 0.2f * (1 - expf(-(v - 0.8f) / 0.2f));
    if (v <= 0) return 0;
    return v >= 1 ? 255 : (uint8_t)(v * 255 + 0.5f);
}

static uint8_t unit(float v) { return v <= 0 ? 0 : v >= 1 ? 255 : (uint8_t)(v * 255 + 0.5f); }

// Starts the shim's own conversion (d->mode and the tags already read by conversion_of).
static int raw_begin(ctiff_decoder *d) {
    TIFF *t = d->tiff;
    size_of(t, &d->raw_width, &d->raw_height);
    uint16_t extra = 0, *types = NULL;
    lib.TIFFGetFieldDefaulted(t, TIFFTAG_EXTRASAMPLES, &extra, &types);
    d->alpha_sample = extra > 0 && types && (types[0] == EXTRASAMPLE_ASSOCALPHA || types[0] == EXTRASAMPLE_UNASSALPHA)
                          ? d->samples - extra : -1;
    // The colour samples the conversion reads must exist in every pixel: a gray image has one,
    // RGB three and CMYK four besides any alpha (ExtraSamples may claim otherwise).
    int colour = d->samples - (d->alpha_sample >= 0);
    if (d->gray ? colour != 1 : colour < (d->mode == RAW_CMYK16 ? 4 : 3)) {
        snprintf(d->message, sizeof d->message, "%d samples per pixel, %d of them colour, do not fit the photometric interpretation",
                 d->samples, colour);
        return -1;
    }
    d->chunk_size = lib.TIFFIsTiled(t) ? lib.TIFFTileSize(t) : lib.TIFFStripSize(t);
    if (d->chunk_size <= 0 || d->chunk_size > CTIFF_MAX_ALLOCATION || !(d->chunk = malloc(d->chunk_size))) {
        snprintf(d->message, sizeof d->message, "a strip or tile of %lld bytes", (long long)d->chunk_size);
        return -1;
    }
    if (d->mode == RAW_FLOAT && float_range(d) != 0) {
        if (!d->message[0]) snprintf(d->message, sizeof d->message, "cannot read the float samples");
        return -1;
    }
    return 0;
}

// Rows [row, row + rows) as premultiplied RGBA8, from stored strips or tiles.
static int raw_read_band(ctiff_decoder *d, uint32_t row, uint32_t rows, uint32_t *raster) {
    uint8_t *out = (uint8_t *)raster;
    for (uint32_t x = 0; x < d->raw_width;) {
        uint32_t cx, cy, cw;
        if (read_chunk(d, x, row, &cx, &cy, &cw) != 0) {
            if (!d->message[0]) snprintf(d->message, sizeof d->message, "cannot read rows %u to %u", row, row + rows);
            return -1;
        }
        uint32_t w = cw < d->raw_width - cx ? cw : d->raw_width - cx;
        for (uint32_t r = 0; r < rows; r++) {
            for (uint32_t c = 0; c < w; c++) {
                size_t at = ((size_t)(row - cy + r) * cw + c) * d->samples;
                uint8_t *o = out + ((size_t)r * d->raw_width + cx + c) * 4;
                uint8_t a = d->alpha_sample >= 0 ? unit(sample_at(d, d->chunk, at + d->alpha_sample)) : 255;
                if (d->mode == RAW_CMYK16) {
                    float k = 1 - sample_at(d, d->chunk, at + 3);
                    for (int s = 0; s < 3; s++) o[s] = unit((1 - sample_at(d, d->chunk, at + s)) * k);
                } else if (d->gray) {
                    o[0] = o[1] = o[2] = tone(d, sample_at(d, d->chunk, at));
                } else {
                    for (int s = 0; s < 3; s++) o[s] = tone(d, sample_at(d, d->chunk, at + s));
                }
                for (int s = 0; s < 3; s++) o[s] = (uint8_t)((o[s] * a + 127) / 255);
                o[3] = a;
            }
        }
        x = lib.TIFFIsTiled(d->tiff) ? cx + cw : d->raw_width;
    }
    return 0;
}

// ---------------------------------------------------------------------------- RGBA interface

int ctiff_begin(ctiff_decoder *d) {
    char text[1024] = {0};
    d->mode = conversion_of(d);
    if (d->mode != RGBA_INTERFACE) return raw_begin(d);
    // Stop at the first strip or tile libtiff cannot decode: its pixels would be invented (the
    // strict policy, as for a truncated JPEG), not a thumbnail of the file.
    if (!lib.TIFFRGBAImageOK(d->tiff, text) || !lib.TIFFRGBAImageBegin(&d->image, d->tiff, 1, text)) {
        if (!d->message[0]) snprintf(d->message, sizeof d->message, "%s", text[0] ? text : "cannot convert this TIFF to RGBA");
        return -1;
    }
    d->began = 1;
    // Stored order, top to bottom: the orientation is applied by the caller, which also turns
    // (libtiff's RGBA interface only flips, so it would mirror a rotated image).
    d->image.req_orientation = ORIENTATION_TOPLEFT;
    d->image.orientation = ORIENTATION_TOPLEFT;
    return 0;
}

int ctiff_read_band(ctiff_decoder *d, uint32_t row, uint32_t rows, uint32_t *raster) {
    if (d->mode != RGBA_INTERFACE) return raw_read_band(d, row, rows, raster);
    d->image.row_offset = (int)row;
    d->image.col_offset = 0;
    if (!lib.TIFFRGBAImageGet(&d->image, raster, d->image.width, rows)) {
        if (!d->message[0]) snprintf(d->message, sizeof d->message, "cannot read rows %u to %u", row, row + rows);
        return -1;
    }
    return 0;
}

// ---------------------------------------------------------------------------- strips for the caller

int ctiff_lzw_strips(ctiff_decoder *d, ctiff_lzw_layout *layout) {
    TIFF *t = d->tiff;
    uint16_t compression = 0, bits = 1, format = SAMPLEFORMAT_UINT, photometric = 0, planar = PLANARCONFIG_CONTIG,
             samples = 1, predictor = PREDICTOR_NONE, fill = FILLORDER_MSB2LSB, extra = 0, *types = NULL;
    lib.TIFFGetFieldDefaulted(t, TIFFTAG_COMPRESSION, &compression);
    lib.TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &bits);
    lib.TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLEFORMAT, &format);
    lib.TIFFGetFieldDefaulted(t, TIFFTAG_PLANARCONFIG, &planar);
    lib.TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLESPERPIXEL, &samples);
    lib.TIFFGetFieldDefaulted(t, TIFFTAG_FILLORDER, &fill);
    // Asked of LZW's codec only: libtiff reads any other codec's private state as a predictor's
    // (or, without one, reports an error that would stay the decoder's message).
    if (compression == COMPRESSION_LZW) lib.TIFFGetFieldDefaulted(t, TIFFTAG_PREDICTOR, &predictor);
    lib.TIFFGetFieldDefaulted(t, TIFFTAG_EXTRASAMPLES, &extra, &types);
    if (!lib.TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &photometric)) return 0;
    if (lib.TIFFIsTiled(t) || compression != COMPRESSION_LZW || bits != 8 || format != SAMPLEFORMAT_UINT ||
        planar != PLANARCONFIG_CONTIG || fill != FILLORDER_MSB2LSB || (predictor != PREDICTOR_NONE && predictor != PREDICTOR_HORIZONTAL))
        return 0;
    int colour = photometric == PHOTOMETRIC_RGB ? 3 : photometric == PHOTOMETRIC_MINISBLACK ? 1 : 0;
    if (!colour) return 0;
    int alpha = 0;
    if (samples == colour + 1) {
        if (extra != 1 || !types || (types[0] != EXTRASAMPLE_ASSOCALPHA && types[0] != EXTRASAMPLE_UNASSALPHA)) return 0;
        alpha = types[0] == EXTRASAMPLE_ASSOCALPHA ? 1 : 2;
    } else if (samples != colour || extra != 0) {
        return 0;
    }
    uint32_t width = 0, height = 0;
    size_of(t, &width, &height);
    layout->samples = samples;
    layout->alpha = alpha;
    layout->predictor = predictor;
    layout->rows_per_strip = band_rows_of(t, height);
    return width > 0 && height > 0 && lib.TIFFNumberOfStrips(t) > 0;
}

int64_t ctiff_raw_strip_size(ctiff_decoder *d, uint32_t strip) {
    if (strip >= lib.TIFFNumberOfStrips(d->tiff)) return -1;
    uint64_t size = lib.TIFFGetStrileByteCount(d->tiff, strip);
    return size > (uint64_t)CTIFF_MAX_ALLOCATION ? -1 : (int64_t)size;
}

int64_t ctiff_read_raw_strip(ctiff_decoder *d, uint32_t strip, void *buffer, int64_t size) {
    return lib.TIFFReadRawStrip(d->tiff, strip, buffer, (tmsize_t)size);
}

int64_t ctiff_read_strip(ctiff_decoder *d, uint32_t strip, void *buffer, int64_t size) {
    return lib.TIFFReadEncodedStrip(d->tiff, strip, buffer, (tmsize_t)size);
}

const char *ctiff_message(const ctiff_decoder *d) { return d->message[0] ? d->message : "TIFF error"; }

void ctiff_close(ctiff_decoder *d) {
    if (!d) return;
    if (d->began) lib.TIFFRGBAImageEnd(&d->image);
    free(d->chunk);
    if (d->tiff) lib.TIFFClose(d->tiff);
    free(d);
}
