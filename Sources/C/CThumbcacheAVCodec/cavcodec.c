#include "cavcodec.h"

#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
#include <libavutil/log.h>
#include <libavutil/pixfmt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc_libraries.h"

#define AVCODEC_FUNCTIONS(X)                                                                                       \
    X(avcodec_find_decoder) X(avcodec_alloc_context3) X(avcodec_open2) X(avcodec_free_context)                    \
    X(avcodec_send_packet) X(avcodec_receive_frame) X(avcodec_flush_buffers) X(av_packet_alloc) X(av_packet_free)
#define AVUTIL_FUNCTIONS(X) X(av_frame_alloc) X(av_frame_free) X(av_frame_unref) X(av_strerror) X(av_log_set_level)

static struct { AVCODEC_FUNCTIONS(TC_LIBRARY_FIELD) } codec;
static struct { AVUTIL_FUNCTIONS(TC_LIBRARY_FIELD) } util;
static const char *const codec_names[] = {AVCODEC_FUNCTIONS(TC_LIBRARY_NAME)};
static const char *const util_names[] = {AVUTIL_FUNCTIONS(TC_LIBRARY_NAME)};
// The sonames of the headers built against (Debian 12's FFmpeg 5.1): another major version lays
// its structures out otherwise, so it is not loaded, and libde265 decodes instead.
#define SONAME(name, major) "lib" #name ".so." #major
#define SONAME_OF(name, major) SONAME(name, major)
static tc_library codec_library = TC_LIBRARY("libavcodec", SONAME_OF(avcodec, LIBAVCODEC_VERSION_MAJOR), "libavcodec59", codec_names, codec);
static tc_library util_library = TC_LIBRARY("libavutil", SONAME_OF(avutil, LIBAVUTIL_VERSION_MAJOR), "libavutil57", util_names, util);

const char *cavc_load(void) {
    const char *why = tc_library_load(&util_library);
    if (why) return why;
    // Silent: its log asks whether standard error is a terminal (an ioctl the worker's filter does
    // not allow), and what went wrong comes back in the return codes.
    util.av_log_set_level(AV_LOG_QUIET);
    return tc_library_load(&codec_library);
}

struct cavc_hevc {
    AVCodecContext *context;
    AVPacket *packet;
    AVFrame *frame;
};

cavc_hevc *cavc_hevc_new(int skip_filters) {
    if (cavc_load()) return NULL;
    const AVCodec *hevc = codec.avcodec_find_decoder(AV_CODEC_ID_HEVC);
    if (!hevc) return NULL;
    cavc_hevc *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->context = codec.avcodec_alloc_context3(hevc);
    d->packet = codec.av_packet_alloc();
    d->frame = util.av_frame_alloc();
    if (!d->context || !d->packet || !d->frame) goto fail;
    // One thread: the caller runs a decoder per core it may use.
    d->context->thread_count = 1;
    if (skip_filters) d->context->skip_loop_filter = AVDISCARD_ALL;
    // Damage it detects is an error, not a picture with parts made up (libde265 goes on more often).
    d->context->err_recognition = AV_EF_EXPLODE;
    if (codec.avcodec_open2(d->context, hevc, NULL) < 0) goto fail;
    return d;
fail:
    cavc_hevc_free(d);
    return NULL;
}

void cavc_hevc_free(cavc_hevc *d) {
    if (!d) return;
    if (d->frame) util.av_frame_free(&d->frame);
    if (d->packet) codec.av_packet_free(&d->packet);
    if (d->context) codec.avcodec_free_context(&d->context);
    free(d);
}

void cavc_hevc_release(cavc_hevc *d) { util.av_frame_unref(d->frame); }

static int fail(char *message, size_t size, const char *what, int error) {
    char text[128] = "";
    if (error) util.av_strerror(error, text, sizeof text);
    snprintf(message, size, "libavcodec: %s%s%s", what, error ? ": " : "", text);
    return -1;
}

// The layout of a decoded frame's pixel format: 0 where it is none of the YUV layouts a HEIF
// picture has.
static int layout(int format, int *chroma, int *bits) {
    switch (format) {
    case AV_PIX_FMT_GRAY8: *chroma = 0; *bits = 8; return 1;
    case AV_PIX_FMT_YUV420P: case AV_PIX_FMT_YUVJ420P: *chroma = 1; *bits = 8; return 1;
    case AV_PIX_FMT_YUV422P: case AV_PIX_FMT_YUVJ422P: *chroma = 2; *bits = 8; return 1;
    case AV_PIX_FMT_YUV444P: case AV_PIX_FMT_YUVJ444P: *chroma = 3; *bits = 8; return 1;
    case AV_PIX_FMT_GRAY10LE: *chroma = 0; *bits = 10; return 1;
    case AV_PIX_FMT_YUV420P10LE: *chroma = 1; *bits = 10; return 1;
    case AV_PIX_FMT_YUV422P10LE: *chroma = 2; *bits = 10; return 1;
    case AV_PIX_FMT_YUV444P10LE: *chroma = 3; *bits = 10; return 1;
    case AV_PIX_FMT_GRAY12LE: *chroma = 0; *bits = 12; return 1;
    case AV_PIX_FMT_YUV420P12LE: *chroma = 1; *bits = 12; return 1;
    case AV_PIX_FMT_YUV422P12LE: *chroma = 2; *bits = 12; return 1;
    case AV_PIX_FMT_YUV444P12LE: *chroma = 3; *bits = 12; return 1;
    default: return 0;
    }
}

int cavc_hevc_decode(cavc_hevc *d, const uint8_t *stream, size_t length, int64_t max_pixels, cavc_picture *picture,
                     char *message, size_t message_size) {
    util.av_frame_unref(d->frame);
    // Each picture on its own: nothing of the last one is kept or referred to.
    codec.avcodec_flush_buffers(d->context);
    if (length > INT32_MAX) return fail(message, message_size, "the picture is too large", 0);
    d->context->max_pixels = max_pixels;
    d->packet->data = (uint8_t *)stream;
    d->packet->size = (int)length;
    int error = codec.avcodec_send_packet(d->context, d->packet);
    d->packet->data = NULL;
    d->packet->size = 0;
    if (error < 0) return fail(message, message_size, "the picture was refused", error);
    // The end of the stream: the decoder gives its one picture now.
    if ((error = codec.avcodec_send_packet(d->context, NULL)) < 0) return fail(message, message_size, "the stream's end was refused", error);
    if ((error = codec.avcodec_receive_frame(d->context, d->frame)) < 0) return fail(message, message_size, "no picture decoded", error);
    // libavcodec conceals damage and says so in the frame's flags: a damaged picture is an error here.
    if (d->frame->flags & AV_FRAME_FLAG_CORRUPT || d->frame->decode_error_flags)
        return fail(message, message_size, "the picture's data is damaged", 0);
    int chroma, bits;
    if (!layout(d->frame->format, &chroma, &bits)) return fail(message, message_size, "a pixel format HEIF does not use", 0);
    picture->width = d->frame->width;
    picture->height = d->frame->height;
    picture->chroma = chroma;
    picture->bits = bits;
    for (int c = 0; c < 3; c++) {
        picture->planes[c] = c == 0 || chroma ? d->frame->data[c] : NULL;
        picture->strides[c] = c == 0 || chroma ? d->frame->linesize[c] : 0;
    }
    return 0;
}
