#ifndef CVIDEO_H
#define CVIDEO_H
#include <stddef.h>
#include <stdint.h>

// FFmpeg (libavformat, libavcodec, libswscale) behind a narrow C interface: the container read
// by pread on a descriptor (the worker opens no paths), one representative frame decoded from
// key frames only, its rows converted to RGBA a band at a time.

typedef struct cvideo cvideo;

typedef struct {
    int has_video;            // a moving-picture stream (not a cover picture)
    int width, height;        // coded size of the video stream
    int display_width;        // width after the sample aspect ratio (anamorphic video)
    int rotation;             // clockwise degrees that turn stored frames upright: 0, 90, 180, 270
    int flipped;              // the display matrix mirrors horizontally
    int bits_per_sample;      // of the video's pixel format, 0 if unknown
    double duration;          // seconds, 0 when unknown
    int64_t bit_rate;         // the container's, bits per second, 0 when unknown
    int64_t video_bit_rate;
    int64_t audio_bit_rate;
    int audio_channels;
    int audio_sample_rate;
    char video_codec[32];     // FFmpeg's codec name ("h264"), empty when none
    char audio_codec[32];
    const uint8_t *cover;     // an attached picture's bytes (ID3 APIC, FLAC PICTURE, MP4 covr…), or NULL
    size_t cover_length;
} cvideo_info;

/// Opens the container on `fd` (read from offset 0, never closed here). NULL with a message when
/// it is not a container FFmpeg reads or has nothing to show.
cvideo *cvideo_open(int fd, cvideo_info *info, char *message, size_t message_size);

/// A tag of the container or of its first audio stream (title, artist, album, genre, date,
/// track…), or NULL. Valid until cvideo_close.
const char *cvideo_tag(cvideo *video, const char *key);

/// Decodes the representative frame (Docs/MEDIA.md: seek to 10…60 % of the duration, key frames
/// only, nearly black or uniform frames skipped). 0, or -1 with a message.
int cvideo_decode(cvideo *video, char *message, size_t message_size);

/// Decodes the key frame at or before `fraction` (0 to 1) of the duration, whatever it shows: a
/// preview's later page. 0, or -1 with a message (no duration known, nothing decodable there).
int cvideo_decode_at(cvideo *video, double fraction, char *message, size_t message_size);

/// Converts rows [y, y + count) of the decoded frame to RGBA at display_width × height
/// (`stride` bytes apart). 0, or -1 with a message.
int cvideo_rows(cvideo *video, int y, int count, uint8_t *rgba, size_t stride, char *message, size_t message_size);

void cvideo_close(cvideo *video);

#endif
