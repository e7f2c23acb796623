#ifndef CPNG_READ_H
#define CPNG_READ_H
// thumbcache's own reader for the common PNG: rows inflated by ISA-L and unfiltered here, for
// what libpng with zlib spent most of a large PNG's decode on (Docs/IMAGING.md, "PNG input").
// It takes only files it reads exactly as libpng would; anything else goes back to libpng.
#include <stdio.h>

#include "cpng.h"

typedef struct cpng_reader cpng_reader;

/// Reads the chunks before the image data from `file`, positioned just after the signature.
/// Returns a reader for an 8- or 16-bit image whose chunks are all well formed;
/// otherwise NULL, with `file` back just after the signature for libpng.
cpng_reader *cpng_reader_open(FILE *file, cpng_info *info);

/// Allocates the row buffers; CPNG_ERROR with `message` if they are too large.
cpng_status cpng_reader_start(cpng_reader *reader, char *message, size_t message_size);

/// The next row of a non-interlaced image as RGBA8 (width × 4 bytes): palette, gray and tRNS
/// expanded, 16 bits rounded to 8, as libpng's transforms in cpng_start make them.
cpng_status cpng_reader_row(cpng_reader *reader, uint8_t *rgba, char *message, size_t message_size);

/// Every row as cpng_reader_row makes them, into `rows` (height pointers); interlaced images too.
cpng_status cpng_reader_image(cpng_reader *reader, uint8_t **rows, char *message, size_t message_size);

void cpng_reader_close(cpng_reader *reader);

#endif
