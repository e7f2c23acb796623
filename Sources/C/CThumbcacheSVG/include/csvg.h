#ifndef CSVG_H
#define CSVG_H
// thumbcache's shim over librsvg and cairo: an SVG parsed from memory (no base URI, so no file or
// network reference can resolve) and drawn at an exact pixel size; GLib types stay in here.
#include <stddef.h>
#include <stdint.h>

typedef struct csvg_document csvg_document;

/// Parses the SVG in `bytes` (which must outlive the call only). Sets its intrinsic size in
/// pixels (from width/height, else the viewBox, else 0). NULL with a message on failure.
csvg_document *csvg_open(const uint8_t *bytes, size_t length, double *width, double *height, char *message, size_t message_size);

/// Draws the whole document scaled into `width` × `height` pixels, straight into `rgba` (zeroed:
/// transparent) in cairo's ARGB32: premultiplied native-endian 32-bit words, rows of width × 4
/// bytes; the caller makes straight RGBA of it. 0 on success.
int csvg_render(csvg_document *document, int width, int height, uint8_t *rgba, char *message, size_t message_size);

void csvg_close(csvg_document *document);

#endif
