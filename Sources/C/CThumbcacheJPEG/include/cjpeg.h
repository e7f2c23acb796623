#ifndef CJPEG_H
#define CJPEG_H
// thumbcache's shim over libjpeg(-turbo). libjpeg reports errors through an error manager that
// would call exit(); here every error longjmps back into the shim, which returns a status and a
// message. Warnings that mean lost pixels (truncation, bad entropy data) are errors too.
// Only prefixed names are exposed: no jpeglib.h types.
#include <stddef.h>
#include <stdint.h>

typedef enum {
    CJPEG_OK = 0,
    CJPEG_ERROR = 1,      // libjpeg error or a pixel-losing warning; see cjpeg_message
    CJPEG_IO = 2,         // the file could not be opened
    CJPEG_NOT_JPEG = 3,
    CJPEG_TOO_LARGE = 4,  // over the limit set by cjpeg_limit_whole_image
} cjpeg_status;

typedef struct {
    uint32_t width;           // as stored
    uint32_t height;
    int components;           // 1 gray, 3 YCbCr/RGB, 4 CMYK/YCCK
    int color_space;          // 1 gray, 2 RGB, 3 YCbCr, 4 CMYK, 5 YCCK
    int progressive;
    int eighth;               // at 1/8 the shim decodes it from its DC coefficients (eighth.c)
    uint64_t eighth_bytes;    // what that holds: 3 bytes a block of a progressive image, 0 when streamed
    const uint8_t *exif;      // APP1 "Exif\0\0" payload after the 6-byte prefix (valid until close), or NULL
    size_t exif_length;
    const uint8_t *xmp;       // APP1 XMP packet after its "http://ns.adobe.com/xap/1.0/\0" prefix (valid until close), or NULL
    size_t xmp_length;
} cjpeg_info;

typedef struct cjpeg_decoder cjpeg_decoder;

cjpeg_decoder *cjpeg_open(const char *path, cjpeg_info *info, cjpeg_status *status, char *message, size_t message_size);

/// Like cjpeg_open, for an open descriptor (read from its start; the decoder reads a duplicate, the
/// caller keeps and closes `fd`).
cjpeg_decoder *cjpeg_open_fd(int fd, cjpeg_info *info, cjpeg_status *status, char *message, size_t message_size);

/// Like cjpeg_open, for a JPEG held in memory (such as an EXIF thumbnail); `bytes` must outlive the decoder.
cjpeg_decoder *cjpeg_open_memory(const uint8_t *bytes, size_t length, cjpeg_info *info, cjpeg_status *status,
                                 char *message, size_t message_size);

enum {
    CJPEG_START_FAST = 1,     // the fast integer IDCT and merged (non-"fancy") chroma upsampling:
                              // for output shrunk at least 2× afterwards, where their small errors vanish
    CJPEG_START_LIBJPEG = 2,  // at 1/8 too, libjpeg's own decoder (the reference the shim's is held to)
    CJPEG_START_TWO_THREADS = 4,  // at 1/8, a sequential image's scan may be decoded on two threads
};

/// Starts decompression to RGBA8 at scale 1/denominator (1, 2, 4 or 8). The scaled size is
/// libjpeg's: ceil(width / denominator) × ceil(height / denominator). At 1/8 the shim decodes
/// what it can itself (eighth.c): libjpeg's pixels, from a fraction of its work.
cjpeg_status cjpeg_start(cjpeg_decoder *decoder, int denominator, int flags, uint32_t *out_width, uint32_t *out_height);

/// Refuses, with CJPEG_TOO_LARGE, libjpeg's decode of a progressive image of more than
/// `max_pixels` (0: any), since libjpeg holds all its coefficients: the caller's limit where only
/// the shim's own 1/8 decode (`eighth_bytes`) was counted on, which gives up to libjpeg on data
/// it does not take.
void cjpeg_limit_whole_image(cjpeg_decoder *decoder, uint64_t max_pixels);

/// After cjpeg_start: 0 where libjpeg decodes, 1 where the shim does (eighth.c), 2 where the
/// shim decoded the scan on two threads.
int cjpeg_decoded_by(const cjpeg_decoder *decoder);

/// Reads the next output row (out_width × 4 bytes).
cjpeg_status cjpeg_read_row(cjpeg_decoder *decoder, uint8_t *row);

/// Finishes decompression, reading to the end of the image (detects truncation after the last row).
cjpeg_status cjpeg_finish(cjpeg_decoder *decoder);

const char *cjpeg_message(const cjpeg_decoder *decoder);

void cjpeg_close(cjpeg_decoder *decoder);

typedef enum {
    CJPEG_COLOR_RGB = 0,    // YCbCr in the file
    CJPEG_COLOR_GRAY = 1,   // the first byte of each pixel, as one gray component
    CJPEG_COLOR_CMYK = 2,   // the four bytes as C, M, Y, K (Adobe-inverted convention)
    CJPEG_COLOR_YCCK = 3,   // the four bytes as inverted CMYK, stored as YCCK
} cjpeg_color;

typedef struct {
    int quality;            // 1–100
    int progressive;
    cjpeg_color color;
    int luma_h, luma_v;     // luma sampling factors: 2,2 = 4:2:0; 2,1 = 4:2:2; 1,1 = 4:4:4 (0 = default)
    int restart_rows;       // restart marker every N MCU rows (0 = none)
} cjpeg_options;

/// Encodes 4-byte pixels (RGBA, alpha ignored; or CMYK) as a JPEG with an optional EXIF payload
/// written as an APP1 "Exif" segment. The buffer is malloc'd: free with cjpeg_free.
cjpeg_status cjpeg_encode_rgba(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                               const cjpeg_options *options, const uint8_t *exif, size_t exif_length,
                               uint8_t **out, size_t *out_length, char *message, size_t message_size);

void cjpeg_free(void *pointer);

#endif
