#ifndef CPNG_H
#define CPNG_H
// thumbcache's shim over libpng, and its own reader for the common PNG (cpng_read.h). libpng reports errors by longjmp; every function here owns the
// setjmp, turns errors into a status and a message, and never lets libpng print or exit.
// Only prefixed names are exposed: no png.h types.
#include <stddef.h>
#include <stdint.h>

typedef enum {
    CPNG_OK = 0,
    CPNG_ERROR = 1,       // libpng reported an error; see cpng_message
    CPNG_IO = 2,          // the file could not be opened or read
    CPNG_NOT_PNG = 3,     // bad signature
} cpng_status;

typedef struct {
    uint32_t width;
    uint32_t height;
    int bit_depth;         // as stored: 1, 2, 4, 8 or 16
    int color_type;        // as stored: 0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA
    int interlaced;        // 1 for Adam7
    int has_alpha;         // alpha channel or tRNS
    const uint8_t *exif;   // the eXIf chunk if it precedes the image data (valid until close), or NULL
    size_t exif_length;
} cpng_info;

typedef struct cpng_decoder cpng_decoder;

/// Opens `path` and reads the header. On failure returns NULL with a message in `message`.
cpng_decoder *cpng_open(const char *path, cpng_info *info, cpng_status *status, char *message, size_t message_size);

/// Like cpng_open, for an open descriptor (read from its start; the decoder reads a duplicate, the
/// caller keeps and closes `fd`). What a sandboxed worker uses: it is handed descriptors, never paths.
cpng_decoder *cpng_open_fd(int fd, cpng_info *info, cpng_status *status, char *message, size_t message_size);

/// Like cpng_open, for a PNG held in memory; `bytes` must outlive the decoder.
cpng_decoder *cpng_open_memory(const uint8_t *bytes, size_t length, cpng_info *info, cpng_status *status, char *message,
                               size_t message_size);

/// Like cpng_open_memory, but always through libpng: the reference the tests hold thumbcache's own
/// reader to.
cpng_decoder *cpng_open_memory_libpng(const uint8_t *bytes, size_t length, cpng_info *info, cpng_status *status,
                                      char *message, size_t message_size);

/// 1 when thumbcache's own reader decodes this file (an 8- or 16-bit image, its rows
/// inflated by ISA-L), 0 when libpng does.
int cpng_uses_own_reader(const cpng_decoder *decoder);

/// For the tests: unfilters random rows of 3 to 8 bytes a pixel with every implementation this
/// CPU runs (byte by byte, SSE4.1, AVX2) and returns how many rows came out different.
int cpng_unfilter_disagreements(uint32_t seed);

/// Sets the output to 8-bit RGBA (palette, gray, tRNS expanded; 16-bit scaled with rounding).
cpng_status cpng_start(cpng_decoder *decoder);

/// Reads the next row of a non-interlaced image into `row` (width × 4 bytes).
cpng_status cpng_read_row(cpng_decoder *decoder, uint8_t *row);

/// Reads a whole image (interlaced ones need every pass) into `rows` (height pointers).
cpng_status cpng_read_image(cpng_decoder *decoder, uint8_t **rows);

/// The last error's message.
const char *cpng_message(const cpng_decoder *decoder);

void cpng_close(cpng_decoder *decoder);

/// Encodes RGBA8 (or RGB8 when `has_alpha` is 0, the 4th byte being ignored) rows into a new
/// malloc'd buffer, deflated by ISA-L (level 1, the Up filter). Returns CPNG_OK and sets *out /
/// *out_length (free with cpng_free). `exif` (may be NULL) is written as an eXIf chunk; `text`
/// holds `text_count` key/value pairs (key, value, key, value…; Latin-1) written as uncompressed
/// tEXt chunks before the image data.
cpng_status cpng_encode_rgba(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride, int has_alpha,
                             const uint8_t *exif, size_t exif_length,
                             const char *const *text, size_t text_count,
                             uint8_t **out, size_t *out_length, char *message, size_t message_size);

void cpng_free(void *pointer);

#endif
