#define _GNU_SOURCE
#include "cvideo.h"
#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/display.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// Bounds that keep one file's cost fixed whatever its length: packets read looking for one key
// frame, and frames decoded in order when every key frame tried was black.
enum { IO_BUFFER = 64 * 1024, MAX_PACKETS_PER_TRY = 512, MAX_SEQUENTIAL_FRAMES = 240, SEQUENTIAL_CHECK_EVERY = 8 };

// Where a representative frame is looked for, as fractions of the duration; 0 last (an intro
// or a clip too short to seek in).
static const double positions[] = {0.10, 0.20, 0.30, 0.45, 0.60, 0.0};

struct cvideo {
    int fd;
    int64_t position, size;
    AVIOContext *io;
    AVFormatContext *format;
    int stream, audio;
    AVCodecContext *decoder;
    AVPacket *packet;
    AVFrame *frame;       // the frame chosen
    AVFrame *candidate;   // the frame being judged
    struct SwsContext *sws;
    int width, height, display_width;
    uint8_t *whole;       // rows converted at once when the frame's size is not the stream's
};

static void say(char *message, size_t size, const char *what, int error) {
    if (!message || !size) return;
    char text[128] = "";
    if (error) av_strerror(error, text, sizeof text);
    snprintf(message, size, error ? "%s: %s" : "%s", what, text);
}

static int read_packet(void *opaque, uint8_t *buffer, int size) {
    cvideo *v = opaque;
    ssize_t n;
    do n = pread(v->fd, buffer, (size_t)size, v->position);
    while (n < 0 && errno == EINTR);
    if (n < 0) return AVERROR(errno);
    if (n == 0) return AVERROR_EOF;
    v->position += n;
    return (int)n;
}

static int64_t seek_to(void *opaque, int64_t offset, int whence) {
    cvideo *v = opaque;
    switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return v->size;
    case SEEK_SET: v->position = offset; break;
    case SEEK_CUR: v->position += offset; break;
    case SEEK_END: v->position = v->size + offset; break;
    default: return -1;
    }
    return v->position;
}

void cvideo_close(cvideo *v) {
    if (!v) return;
    if (v->format) avformat_close_input(&v->format);
    if (v->io) {
        av_freep(&v->io->buffer);
        avio_context_free(&v->io);
    }
    avcodec_free_context(&v->decoder);
    av_packet_free(&v->packet);
    av_frame_free(&v->frame);
    av_frame_free(&v->candidate);
    sws_freeContext(v->sws);
    av_free(v->whole);
    av_free(v);
}

static void copy_name(char *to, size_t size, enum AVCodecID id) {
    snprintf(to, size, "%s", id == AV_CODEC_ID_NONE ? "" : avcodec_get_name(id));
}

cvideo *cvideo_open(int fd, cvideo_info *info, char *message, size_t message_size) {
    memset(info, 0, sizeof *info);
    av_log_set_level(AV_LOG_QUIET);
    struct stat s;
    if (fstat(fd, &s) != 0) {
        say(message, message_size, "cannot read the file's size", AVERROR(errno));
        return NULL;
    }
    cvideo *v = av_mallocz(sizeof *v);
    if (!v) return NULL;
    v->fd = fd;
    v->size = s.st_size;
    v->stream = v->audio = -1;
    uint8_t *buffer = av_malloc(IO_BUFFER);
    v->io = buffer ? avio_alloc_context(buffer, IO_BUFFER, 0, v, read_packet, NULL, seek_to) : NULL;
    v->format = avformat_alloc_context();
    v->packet = av_packet_alloc();
    v->frame = av_frame_alloc();
    v->candidate = av_frame_alloc();
    if (!v->io || !v->format || !v->packet || !v->frame || !v->candidate) {
        if (!v->io) av_free(buffer);
        say(message, message_size, "out of memory", 0);
        cvideo_close(v);
        return NULL;
    }
    v->format->pb = v->io;
    v->format->flags |= AVFMT_FLAG_CUSTOM_IO;
    // Probing reads a bounded prefix, not the file: a stream without an index is not scanned.
    v->format->probesize = 4 << 20;
    v->format->max_analyze_duration = 5 * AV_TIME_BASE;
    int rc = avformat_open_input(&v->format, NULL, NULL, NULL);
    if (rc < 0) {
        say(message, message_size, "not a container FFmpeg reads", rc);
        cvideo_close(v);
        return NULL;
    }
    rc = avformat_find_stream_info(v->format, NULL);
    if (rc < 0) {
        say(message, message_size, "cannot read the streams", rc);
        cvideo_close(v);
        return NULL;
    }

    // The largest moving picture is the video; a picture stream flagged as attached is a cover.
    int64_t area = 0;
    for (unsigned i = 0; i < v->format->nb_streams; i++) {
        AVStream *st = v->format->streams[i];
        AVCodecParameters *p = st->codecpar;
        if (p->codec_type != AVMEDIA_TYPE_VIDEO) continue;
        if (st->disposition & AV_DISPOSITION_ATTACHED_PIC) {
            if (!info->cover && st->attached_pic.size > 0) {
                info->cover = st->attached_pic.data;
                info->cover_length = (size_t)st->attached_pic.size;
            }
        } else if (p->width > 0 && p->height > 0 && (int64_t)p->width * p->height > area) {
            area = (int64_t)p->width * p->height;
            v->stream = (int)i;
        }
    }
    v->audio = av_find_best_stream(v->format, AVMEDIA_TYPE_AUDIO, -1, -1, NULL, 0);
    if (v->audio < 0) v->audio = -1;
    if (v->stream < 0 && !info->cover && v->audio < 0) {
        say(message, message_size, "no video, audio or picture stream", 0);
        cvideo_close(v);
        return NULL;
    }
    // Only the video's packets are wanted: demuxers skip the rest (audio is never decoded).
    for (unsigned i = 0; i < v->format->nb_streams; i++) {
        if ((int)i != v->stream) v->format->streams[i]->discard = AVDISCARD_ALL;
    }

    if (v->format->duration != AV_NOPTS_VALUE && v->format->duration > 0) info->duration = v->format->duration / (double)AV_TIME_BASE;
    info->bit_rate = v->format->bit_rate;
    if (v->audio >= 0) {
        AVCodecParameters *a = v->format->streams[v->audio]->codecpar;
        info->audio_channels = a->ch_layout.nb_channels;
        info->audio_sample_rate = a->sample_rate;
        info->audio_bit_rate = a->bit_rate;
        copy_name(info->audio_codec, sizeof info->audio_codec, a->codec_id);
    }
    if (v->stream >= 0) {
        AVStream *st = v->format->streams[v->stream];
        AVCodecParameters *p = st->codecpar;
        info->has_video = 1;
        info->width = v->width = p->width;
        info->height = v->height = p->height;
        AVRational sar = st->sample_aspect_ratio.num > 0 ? st->sample_aspect_ratio : p->sample_aspect_ratio;
        v->display_width = p->width;
        if (sar.num > 0 && sar.den > 0 && sar.num != sar.den) {
            long w = lround((double)p->width * sar.num / sar.den);
            v->display_width = w < 1 ? 1 : w > 4L * p->width ? 4 * p->width : (int)w;
        }
        info->display_width = v->display_width;
        info->video_bit_rate = p->bit_rate;
        copy_name(info->video_codec, sizeof info->video_codec, p->codec_id);
        const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(p->format);
        if (d) info->bits_per_sample = d->comp[0].depth;
        if (info->duration == 0 && st->duration != AV_NOPTS_VALUE && st->duration > 0) info->duration = st->duration * av_q2d(st->time_base);
        const int32_t *matrix = (const int32_t *)av_stream_get_side_data(st, AV_PKT_DATA_DISPLAYMATRIX, NULL);
        if (matrix) {
            // av_display_rotation_get is counter-clockwise; the turn that makes frames upright is clockwise.
            double angle = av_display_rotation_get(matrix);
            if (!isnan(angle)) {
                long r = lround(-angle) % 360;
                if (r < 0) r += 360;
                info->rotation = (int)(((r + 45) / 90 * 90) % 360);
            }
            info->flipped = (double)matrix[0] * matrix[4] - (double)matrix[1] * matrix[3] < 0;
        }
    }
    return v;
}

const char *cvideo_tag(cvideo *v, const char *key) {
    AVDictionaryEntry *e = av_dict_get(v->format->metadata, key, NULL, 0);
    // Ogg keeps Vorbis comments on the stream, not the container.
    if (!e && v->audio >= 0) e = av_dict_get(v->format->streams[v->audio]->metadata, key, NULL, 0);
    return e && e->value && e->value[0] ? e->value : NULL;
}

// How much a frame shows: -1 when nearly black or one colour (a fade, a title card's background),
// else the spread of its luma. Judged on a 64 × 64 grid of luma samples; formats without a luma
// plane pass.
static double interest(const AVFrame *f) {
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    if (!d || (d->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_HWACCEL))) return 1e9;
    const AVComponentDescriptor *c = &d->comp[0];
    int big = (d->flags & AV_PIX_FMT_FLAG_BE) != 0, wide = c->depth > 8;
    int bins[16] = {0};
    double sum = 0, squares = 0;
    int n = 0;
    for (int gy = 0; gy < 64; gy++) {
        const uint8_t *row = f->data[c->plane] + (int64_t)(f->height * gy / 64) * f->linesize[c->plane];
        for (int gx = 0; gx < 64; gx++) {
            const uint8_t *p = row + (int64_t)(f->width * gx / 64) * c->step + c->offset;
            int value = wide ? (big ? p[0] << 8 | p[1] : p[1] << 8 | p[0]) >> c->shift >> (c->depth - 8) : p[0];
            if (value > 255) value = 255;
            bins[value >> 4]++;
            sum += value;
            squares += (double)value * value;
            n++;
        }
    }
    int top = 0;
    for (int i = 0; i < 16; i++) if (bins[i] > top) top = bins[i];
    double mean = sum / n, spread = sqrt(fmax(0, squares / n - mean * mean));
    // Video black is 16; a frame whose samples nearly all fall in one sixteenth is a flat field.
    if (mean < 32 || top > n * 85 / 100) return -1 - spread / 1000;
    return spread;
}

static int open_decoder(cvideo *v, char *message, size_t message_size) {
    AVCodecParameters *p = v->format->streams[v->stream]->codecpar;
    const AVCodec *codec = avcodec_find_decoder(p->codec_id);
    if (!codec) {
        say(message, message_size, "no decoder for this video codec", 0);
        return -1;
    }
    v->decoder = avcodec_alloc_context3(codec);
    if (!v->decoder) return say(message, message_size, "out of memory", 0), -1;
    int rc = avcodec_parameters_to_context(v->decoder, p);
    // One thread: the worker pool decodes files side by side, and a frame thread pool would only
    // add start-up and delay.
    v->decoder->thread_count = 1;
    if (rc >= 0) rc = avcodec_open2(v->decoder, codec, NULL);
    if (rc < 0) return say(message, message_size, "cannot start the video decoder", rc), -1;
    return 0;
}

// The next key frame's packet of the video stream, decoded alone and drained: 1 with
// v->candidate set, 0 when none came within the bound, negative on a read error.
static int decode_key_frame(cvideo *v, int64_t *pts) {
    for (int i = 0; i < MAX_PACKETS_PER_TRY; i++) {
        int rc = av_read_frame(v->format, v->packet);
        if (rc < 0) return rc == AVERROR_EOF ? 0 : rc;
        int key = v->packet->stream_index == v->stream && (v->packet->flags & AV_PKT_FLAG_KEY);
        if (!key) {
            av_packet_unref(v->packet);
            continue;
        }
        *pts = v->packet->pts;
        rc = avcodec_send_packet(v->decoder, v->packet);
        av_packet_unref(v->packet);
        if (rc < 0) continue;  // a damaged key frame: try the next
        avcodec_send_packet(v->decoder, NULL);  // drain: a decoder with reordering delay gives it now
        rc = avcodec_receive_frame(v->decoder, v->candidate);
        avcodec_flush_buffers(v->decoder);
        if (rc == 0) return 1;
    }
    return 0;
}

static void keep(cvideo *v) {
    av_frame_unref(v->frame);
    av_frame_move_ref(v->frame, v->candidate);
}

// Every frame from the start, judged every few frames: for clips whose only key frame is black.
static int decode_in_order(cvideo *v, double *best) {
    if (av_seek_frame(v->format, v->stream, 0, AVSEEK_FLAG_BACKWARD) < 0 && avformat_seek_file(v->format, -1, INT64_MIN, 0, 0, 0) < 0) return 0;
    avcodec_flush_buffers(v->decoder);
    int frames = 0, packets = 0;
    while (frames < MAX_SEQUENTIAL_FRAMES && packets < MAX_SEQUENTIAL_FRAMES * 4) {
        int rc = av_read_frame(v->format, v->packet);
        if (rc < 0) break;
        packets++;
        if (v->packet->stream_index != v->stream) {
            av_packet_unref(v->packet);
            continue;
        }
        avcodec_send_packet(v->decoder, v->packet);
        av_packet_unref(v->packet);
        while (avcodec_receive_frame(v->decoder, v->candidate) == 0) {
            if (++frames % SEQUENTIAL_CHECK_EVERY) {
                av_frame_unref(v->candidate);
                continue;
            }
            double score = interest(v->candidate);
            if (score > *best) {
                *best = score;
                keep(v);
                if (score >= 0) return 1;
            } else {
                av_frame_unref(v->candidate);
            }
        }
    }
    return 0;
}

int cvideo_decode(cvideo *v, char *message, size_t message_size) {
    if (v->stream < 0) return say(message, message_size, "no video stream", 0), -1;
    if (!v->decoder && open_decoder(v, message, message_size) != 0) return -1;
    AVStream *st = v->format->streams[v->stream];
    double duration = v->format->duration != AV_NOPTS_VALUE && v->format->duration > 0 ? v->format->duration / (double)AV_TIME_BASE : 0;
    int64_t start = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
    double best = -1e9;
    int found = 0, error = 0;
    int64_t tried[sizeof positions / sizeof positions[0]];
    int tries = 0;
    for (size_t i = 0; i < sizeof positions / sizeof positions[0]; i++) {
        if (positions[i] > 0 && duration <= 0) continue;
        int64_t target = start + av_rescale_q((int64_t)(positions[i] * duration * AV_TIME_BASE), AV_TIME_BASE_Q, st->time_base);
        if (av_seek_frame(v->format, v->stream, target, AVSEEK_FLAG_BACKWARD) < 0) {
            if (positions[i] > 0) continue;
            avformat_seek_file(v->format, -1, INT64_MIN, 0, 0, 0);
        }
        avcodec_flush_buffers(v->decoder);
        int64_t pts = AV_NOPTS_VALUE;
        int rc = decode_key_frame(v, &pts);
        if (rc < 0) error = rc;
        if (rc <= 0) continue;
        // Two positions that land on the same key frame need one judgement.
        int seen = 0;
        for (int t = 0; t < tries; t++) seen |= tried[t] == pts && pts != AV_NOPTS_VALUE;
        tried[tries++] = pts;
        double score = interest(v->candidate);
        if (!seen && score > best) {
            best = score;
            keep(v);
            found = 1;
        } else {
            av_frame_unref(v->candidate);
        }
        if (best >= 0) return 0;
    }
    // Every key frame tried was dark or flat: look between them, from the start.
    if (decode_in_order(v, &best) || found || v->frame->data[0]) return 0;
    say(message, message_size, "no video frame could be decoded", error);
    return -1;
}

int cvideo_decode_at(cvideo *v, double fraction, char *message, size_t message_size) {
    if (v->stream < 0) return say(message, message_size, "no video stream", 0), -1;
    if (!v->decoder && open_decoder(v, message, message_size) != 0) return -1;
    AVStream *st = v->format->streams[v->stream];
    double duration = v->format->duration != AV_NOPTS_VALUE && v->format->duration > 0 ? v->format->duration / (double)AV_TIME_BASE : 0;
    if (duration <= 0 || !(fraction >= 0 && fraction <= 1)) return say(message, message_size, "no duration to seek in", 0), -1;
    int64_t start = st->start_time != AV_NOPTS_VALUE ? st->start_time : 0;
    int64_t target = start + av_rescale_q((int64_t)(fraction * duration * AV_TIME_BASE), AV_TIME_BASE_Q, st->time_base);
    if (av_seek_frame(v->format, v->stream, target, AVSEEK_FLAG_BACKWARD) < 0) avformat_seek_file(v->format, -1, INT64_MIN, 0, 0, 0);
    avcodec_flush_buffers(v->decoder);
    int64_t pts = AV_NOPTS_VALUE;
    int rc = decode_key_frame(v, &pts);
    if (rc <= 0) return say(message, message_size, "no key frame could be decoded there", rc), -1;
    keep(v);
    return 0;
}

static void set_colours(cvideo *v, const AVFrame *f) {
    int full = f->color_range == AVCOL_RANGE_JPEG || f->format == AV_PIX_FMT_YUVJ420P || f->format == AV_PIX_FMT_YUVJ422P ||
               f->format == AV_PIX_FMT_YUVJ444P;
    int space = f->colorspace;
    // Untagged video: HD is BT.709 as a rule, SD BT.601.
    if (space == AVCOL_SPC_UNSPECIFIED || space == AVCOL_SPC_RESERVED) space = f->height >= 720 ? AVCOL_SPC_BT709 : AVCOL_SPC_BT470BG;
    const int *table = sws_getCoefficients(space);
    sws_setColorspaceDetails(v->sws, table, full, table, 1, 0, 1 << 16, 1 << 16);
}

int cvideo_rows(cvideo *v, int y, int count, uint8_t *rgba, size_t stride, char *message, size_t message_size) {
    const AVFrame *f = v->frame;
    if (!f->data[0] || y < 0 || count <= 0 || y + count > v->height) return say(message, message_size, "no such rows", 0), -1;
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(f->format);
    if (!d) return say(message, message_size, "unknown pixel format", 0), -1;
    int unit = 1 << d->log2_chroma_h;
    int banded = f->height == v->height && !(d->flags & (AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BITSTREAM | AV_PIX_FMT_FLAG_HWACCEL)) &&
                 y % unit == 0 && (count % unit == 0 || y + count == v->height);
    if (banded) {
        // The band is converted as an image of its own: planes offset to its first row (chroma
        // rows by the vertical subsampling).
        v->sws = sws_getCachedContext(v->sws, f->width, count, f->format, v->display_width, count, AV_PIX_FMT_RGBA, SWS_BILINEAR, NULL, NULL, NULL);
        if (!v->sws) return say(message, message_size, "cannot convert this pixel format", 0), -1;
        set_colours(v, f);
        const uint8_t *planes[4] = {0};
        int strides[4] = {0};
        int chroma = !(d->flags & AV_PIX_FMT_FLAG_RGB);
        for (int p = 0; p < 4 && f->data[p]; p++) {
            int row = chroma && (p == 1 || p == 2) ? y >> d->log2_chroma_h : y;
            planes[p] = f->data[p] + (int64_t)row * f->linesize[p];
            strides[p] = f->linesize[p];
        }
        uint8_t *out[4] = {rgba, NULL, NULL, NULL};
        int outStrides[4] = {(int)stride, 0, 0, 0};
        if (sws_scale(v->sws, planes, strides, 0, count, out, outStrides) != count) return say(message, message_size, "conversion failed", 0), -1;
        return 0;
    }
    // A frame of another size than the stream's (a mid-stream change) or a paletted one: the
    // whole frame converted once, to the stream's size.
    size_t row = (size_t)v->display_width * 4;
    if (!v->whole) {
        v->whole = av_malloc(row * v->height);
        v->sws = sws_getCachedContext(v->sws, f->width, f->height, f->format, v->display_width, v->height, AV_PIX_FMT_RGBA, SWS_BILINEAR, NULL, NULL, NULL);
        if (!v->whole || !v->sws) return say(message, message_size, "cannot convert this frame", 0), -1;
        set_colours(v, f);
        uint8_t *out[4] = {v->whole, NULL, NULL, NULL};
        int outStrides[4] = {(int)row, 0, 0, 0};
        if (sws_scale(v->sws, (const uint8_t *const *)f->data, f->linesize, 0, f->height, out, outStrides) <= 0)
            return say(message, message_size, "conversion failed", 0), -1;
    }
    for (int i = 0; i < count; i++) memcpy(rgba + i * stride, v->whole + (size_t)(y + i) * row, row);
    return 0;
}
