#ifndef CTIFF_H
#define CTIFF_H
// thumbcache's shim over libtiff: errors become a message on the decoder (never printed), reads
// go through pread on a descriptor (no mapping: a 150 MB uncompressed TIFF must not enter RSS
// whole), single allocations are capped, and pixels come as top-down bands of RGBA through
// libtiff's RGBA interface (palette, gray, CMYK, YCbCr, 16-bit and alpha converted by libtiff),
// or, for what that interface refuses (float samples, 16-bit CMYK), from the stored strips or
// tiles converted by the shim: float data in 0…1 as display values, gray data outside that
// range stretched over its own, HDR colour compressed by a soft knee.
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t width;
    uint32_t height;
    int bits_per_sample;
    int photometric;       // PHOTOMETRIC_* as stored
    int orientation;       // the Orientation tag, 1…8 (EXIF's values)
    int has_alpha;         // an extra sample marked as alpha
    uint32_t band_rows;    // rows per strip or tile: how many rows one read yields
    int pages;             // directories that are not reduced-resolution copies
    int reduced_images;    // reduced-resolution copies (later pages or SubIFDs) available
} ctiff_info;

typedef struct ctiff_decoder ctiff_decoder;

/// Opens the TIFF on `fd` (read with pread from offset 0; the caller keeps `fd`). NULL on failure.
ctiff_decoder *ctiff_open_fd(int fd, ctiff_info *info, char *message, size_t message_size);

/// Chooses the image to decode: the smallest reduced-resolution copy at least `min_width` ×
/// `min_height`, else the full image. Sets `width`/`height` (and `band_rows`) to the chosen one's.
int ctiff_select(ctiff_decoder *decoder, uint32_t min_width, uint32_t min_height, uint32_t *width, uint32_t *height,
                 uint32_t *band_rows);

/// Starts RGBA conversion of the chosen image. 0 on success.
int ctiff_begin(ctiff_decoder *decoder);

/// Reads `rows` rows from `row` on, top to bottom as stored (orientation not applied), into
/// `raster` (width × rows RGBA8, premultiplied when the image has alpha). 0 on success.
int ctiff_read_band(ctiff_decoder *decoder, uint32_t row, uint32_t rows, uint32_t *raster);

/// The chosen image's layout when its strips can be decoded by the caller: 8-bit unsigned samples in
/// strips, chunky, LZW, MSB-first, RGB (3 samples, or 4 with alpha) or black-is-zero gray (1, or 2
/// with alpha), no predictor or horizontal differencing.
typedef struct {
    int samples;           // per pixel
    int alpha;             // 0: none, 1: associated (premultiplied), 2: unassociated
    int predictor;         // 1: none, 2: horizontal differencing
    uint32_t rows_per_strip;
} ctiff_lzw_layout;

/// 1 and `layout` filled when the chosen image (after ctiff_select) has that layout, else 0.
int ctiff_lzw_strips(ctiff_decoder *decoder, ctiff_lzw_layout *layout);

/// The stored (compressed) size of `strip`, or -1 when it is out of range or above the allocation cap.
int64_t ctiff_raw_strip_size(ctiff_decoder *decoder, uint32_t strip);

/// Reads `strip` as stored into `buffer`; the bytes read, or -1.
int64_t ctiff_read_raw_strip(ctiff_decoder *decoder, uint32_t strip, void *buffer, int64_t size);

/// Reads `strip` decoded by libtiff (predictor undone) into `buffer`; the bytes read, or -1.
int64_t ctiff_read_strip(ctiff_decoder *decoder, uint32_t strip, void *buffer, int64_t size);

const char *ctiff_message(const ctiff_decoder *decoder);

void ctiff_close(ctiff_decoder *decoder);

/// Loads libtiff if it is not yet loaded: NULL, or why it cannot be. ctiff_open_fd loads it
/// itself; a worker whose confinement would not let it load later calls this before.
const char *ctiff_load(void);

#endif
