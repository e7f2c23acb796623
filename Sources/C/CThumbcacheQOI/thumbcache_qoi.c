#include "thumbcache_qoi.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define QOI_NO_STDIO
#define QOI_IMPLEMENTATION
#include <qoi.h>

static const uint8_t end_marker[8] = {0, 0, 0, 0, 0, 0, 0, 1};

int tcqoi_header(const void *data, size_t size, tcqoi_info *info) {
    const uint8_t *b = data;
    if (size < QOI_HEADER_SIZE + sizeof end_marker) return -2;
    if (memcmp(b, "qoif", 4) != 0) return -1;
    info->width = (uint32_t)b[4] << 24 | (uint32_t)b[5] << 16 | (uint32_t)b[6] << 8 | b[7];
    info->height = (uint32_t)b[8] << 24 | (uint32_t)b[9] << 16 | (uint32_t)b[10] << 8 | b[11];
    info->channels = b[12];
    info->colorspace = b[13];
    if (info->width == 0 || info->height == 0 || info->channels < 3 || info->channels > 4 || info->colorspace > 1) return -1;
    return 0;
}

int tcqoi_has_end_marker(const void *data, size_t size) {
    return size >= sizeof end_marker && memcmp((const uint8_t *)data + size - sizeof end_marker, end_marker, sizeof end_marker) == 0;
}

uint8_t *tcqoi_decode_rgba(const void *data, size_t size) {
    if (size > INT_MAX) return NULL;  // qoi.h takes an int
    qoi_desc desc;
    return qoi_decode(data, (int)size, &desc, 4);
}

uint8_t *tcqoi_encode_rgba(const uint8_t *pixels, uint32_t width, uint32_t height, int channels, size_t *length) {
    qoi_desc desc = {.width = width, .height = height, .channels = 4, .colorspace = QOI_SRGB};
    uint8_t *rgb = NULL;
    const void *input = pixels;
    if (channels == 3) {  // qoi.h encodes what it is given: drop alpha first
        rgb = malloc((size_t)width * height * 3);
        if (!rgb) return NULL;
        for (size_t i = 0; i < (size_t)width * height; i++) memcpy(rgb + i * 3, pixels + i * 4, 3);
        desc.channels = 3;
        input = rgb;
    }
    int n = 0;
    uint8_t *out = qoi_encode(input, &desc, &n);
    free(rgb);
    *length = out ? (size_t)n : 0;
    return out;
}

void tcqoi_free(void *pointer) { free(pointer); }
