#ifndef CAVCODEC_H
#define CAVCODEC_H
// HEVC still pictures through FFmpeg's libavcodec, loaded with dlopen at the first one (its 96
// libraries are no part of a worker's start). It decodes the same pixels as libde265, with and
// without the in-loop filters, in about three quarters of the time (Docs/PERFORMANCE.md).
#include <stddef.h>
#include <stdint.h>

typedef struct cavc_hevc cavc_hevc;

/// A decoded picture, valid until cavc_hevc_release or the next decode.
typedef struct {
    int width, height;         // luma, after the conformance window
    int chroma;                // 0 monochrome, 1 4:2:0, 2 4:2:2, 3 4:4:4
    int bits;                  // 8 to 12; above 8 a sample is two bytes, little-endian
    const uint8_t *planes[3];  // Y, Cb, Cr (one plane when monochrome)
    int strides[3];            // bytes from a row to the next
} cavc_picture;

/// Loads libavcodec and libavutil if they are not yet loaded: NULL, or why they cannot be.
const char *cavc_load(void);

/// A decoder of one picture at a time, on the calling thread; `skip_filters` leaves out
/// deblocking and SAO (a thumbnail averages them away). NULL when the libraries cannot be loaded
/// (cavc_load says why) or memory is short.
cavc_hevc *cavc_hevc_new(int skip_filters);
void cavc_hevc_free(cavc_hevc *decoder);

/// Decodes the one picture of `stream` (Annex B: each NAL unit after a 00 00 00 01 start code;
/// the parameter sets first), refused before it is allocated if larger than `max_pixels`. 0 with
/// `picture` filled, or -1 with the reason in `message`: damage libavcodec would conceal is one.
int cavc_hevc_decode(cavc_hevc *decoder, const uint8_t *stream, size_t length, int64_t max_pixels, cavc_picture *picture,
                     char *message, size_t message_size);

/// Gives back the last picture's planes.
void cavc_hevc_release(cavc_hevc *decoder);

#endif
