#ifndef CJPEG_EIGHTH_H
#define CJPEG_EIGHTH_H
// A JPEG decoded at 1/8 scale from its entropy-coded data, with libjpeg-turbo's own arithmetic, so
// that its pixels are libjpeg's at scale_denom = 8 byte for byte (Docs/IMAGING.md, "JPEG at 1/8").
// Internal to the shim: cjpeg.c hands it libjpeg's parsed header and its source.
#include <stdint.h>
#include <jpeglib.h>

typedef struct eighth eighth;

/// The rest of the file after the source's position, for a decode on two threads: in memory
/// (`data`), or in the open file `file` from `offset` (`data` NULL); `length` bytes.
typedef struct {
    const uint8_t *data;
    int file;
    uint64_t offset;
    size_t length;
} eighth_more;

/// Whether the header read by `cinfo` (up to its first scan) is one this decoder takes: 8-bit
/// Huffman-coded grayscale, or YCbCr sampled 4:4:4 or 4:2:2, sequential or progressive, or 4:2:0
/// in one sequential scan.
int eighth_eligible(j_decompress_ptr cinfo);

/// Whether eighth_decode should take the image, given `length` bytes of the file after the
/// source's position for two threads (0: none): an eligible one, but 4:2:0 only on two threads.
int eighth_takes(j_decompress_ptr cinfo, uint64_t length);

/// The bytes eighth_decode holds for an eligible image: 3 a block of one it holds whole (a
/// progressive or multi-scan image), 0 for one it streams.
uint64_t eighth_held_bytes(j_decompress_ptr cinfo);

/// Decodes every scan from `cinfo`'s source, positioned after the first SOS header, to the end
/// of the image; a one-scan sequential image only as its rows are asked for, or, given the rest of
/// the file (`more`, else NULL), held whole and decoded on two threads. NULL (or 0 from
/// eighth_row or eighth_finish) when the data is anything but clean (a bad code, a marker out of
/// place, an early end, a warning libjpeg would give): the caller then decodes the file with
/// libjpeg from its start, whose rows are the same, and which reports what is wrong.
eighth *eighth_decode(j_decompress_ptr cinfo, int *fatal_warning, const eighth_more *more);

uint32_t eighth_width(const eighth *e);
/// 2 where the scan was decoded on two threads (the guessing thread fell into step), else 1.
int eighth_threads_used(const eighth *e);
uint32_t eighth_height(const eighth *e);

/// Writes output row `y` as RGBA8 (width × 4 bytes); rows are asked for in order. 0 on bad data.
int eighth_row(eighth *e, uint32_t y, uint8_t *row);

/// Reads the rest of the image to its end, after the last row. 0 on bad data.
int eighth_finish(eighth *e);

void eighth_free(eighth *e);

#endif
