// Tools/floors.c: the bare decode of image files by their format's own library, at the scale
// thumbcache decodes them to for a box of BOX pixels, every row delivered and dropped. The floor
// a warm's time per file is compared with (Tools/compare-floors builds and runs it).
//
//   floors jpeg|png|webp BOX FILE...   prints the best of 3 passes over the files, in seconds
//
// jpeg: libjpeg-turbo with DCT scaling by the largest 1/8, 1/4 or 1/2 that leaves at least 2×
// for the final filter (thumbcache's and libvips's rule), the fast IDCT and plain upsampling
// (what thumbcache asks for when at least 2× of shrinking follows), rows as RGBA; the whole file
// read first and decoded from memory, so its Huffman decoder always takes its fast path (which
// libjpeg's stdio source, 4 KiB at a time, denies it three times in four).
// png: libpng with zlib, every row expanded to 8-bit RGBA (what libvips and most tools run).
// webp: libwebp scaling on load to twice the box on the longer side (what thumbcache asks for),
// the in-loop filter and fancy upsampling off (as thumbcache when at least 2× of shrinking follows),
// into RGBA.
#include <stddef.h>
#include <stdio.h>  // before jpeglib.h, which needs FILE and size_t

#include <jpeglib.h>
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <webp/decode.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

// The box fits the longer side and keeps the aspect, so both sides shrink by the longer's ratio.
static int shrink_for(unsigned width, unsigned height, int box) {
    double ratio = (width > height ? (double)width : (double)height) / box;
    for (int d = 8; d >= 2; d /= 2)
        if (ratio / d >= 2) return d;
    return 1;
}

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
} jpeg_error;

static void jpeg_fail(j_common_ptr info) { longjmp(((jpeg_error *)info->err)->jump, 1); }

// The whole of `path` in a new buffer; NULL if it cannot be read or is empty.
static uint8_t *read_whole(const char *path, size_t *length) {
    FILE *file = fopen(path, "rb");
    if (!file) return NULL;
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    rewind(file);
    uint8_t *data = size > 0 ? malloc((size_t)size) : NULL;
    if (data && fread(data, 1, (size_t)size, file) != (size_t)size) {
        free(data);
        data = NULL;
    }
    fclose(file);
    *length = data ? (size_t)size : 0;
    return data;
}

static int decode_jpeg(const char *path, int box) {
    size_t length;
    uint8_t *data = read_whole(path, &length);
    if (!data) return 1;
    struct jpeg_decompress_struct info;
    jpeg_error error;
    JSAMPLE *row = NULL;
    info.err = jpeg_std_error(&error.base);
    error.base.error_exit = jpeg_fail;
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&info);
        free(row);
        free(data);
        return 1;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, data, (unsigned long)length);
    jpeg_read_header(&info, TRUE);
    info.scale_num = 1;
    info.scale_denom = (unsigned)shrink_for(info.image_width, info.image_height, box);
    info.dct_method = JDCT_IFAST;
    info.do_fancy_upsampling = FALSE;
    info.out_color_space = JCS_EXT_RGBA;
    jpeg_start_decompress(&info);
    row = malloc((size_t)info.output_width * 4);
    while (info.output_scanline < info.output_height) jpeg_read_scanlines(&info, &row, 1);
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    free(row);
    free(data);
    return 0;
}

static void png_quiet(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;
}

static int decode_png(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) return 1;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, png_quiet);
    png_infop info = png_create_info_struct(png);
    png_bytep image = NULL;
    png_bytepp rows = NULL;
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        free(image);
        free(rows);
        fclose(file);
        return 1;
    }
    png_init_io(png, file);
    png_read_info(png, info);
    png_set_expand(png);
    png_set_scale_16(png);
    png_set_gray_to_rgb(png);
    png_set_add_alpha(png, 0xff, PNG_FILLER_AFTER);
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    png_uint_32 width = png_get_image_width(png, info), height = png_get_image_height(png, info);
    if (passes > 1) {  // Adam7 needs the whole image, as in thumbcache
        image = malloc((size_t)width * height * 4);
        rows = malloc(height * sizeof *rows);
        for (png_uint_32 y = 0; y < height; y++) rows[y] = image + (size_t)y * width * 4;
        png_read_image(png, rows);
    } else {
        image = malloc((size_t)width * 4);
        for (png_uint_32 y = 0; y < height; y++) png_read_row(png, image, NULL);
    }
    png_destroy_read_struct(&png, &info, NULL);
    free(image);
    free(rows);
    fclose(file);
    return 0;
}

static int decode_webp(const char *path, int box) {
    size_t size;
    uint8_t *data = read_whole(path, &size);
    int bad = data == NULL;
    WebPDecoderConfig config;
    if (bad || !WebPInitDecoderConfig(&config) || WebPGetFeatures(data, (size_t)size, &config.input) != VP8_STATUS_OK) {
        free(data);
        return 1;
    }
    int w = config.input.width, h = config.input.height;
    double scale = 2.0 * box / (w > h ? w : h);
    if (scale < 1) {
        config.options.use_scaling = 1;
        config.options.scaled_width = (int)(w * scale + 0.999);
        config.options.scaled_height = (int)(h * scale + 0.999);
        config.options.bypass_filtering = 1;
        config.options.no_fancy_upsampling = 1;
    }
    config.output.colorspace = MODE_RGBA;
    bad = WebPDecode(data, (size_t)size, &config) != VP8_STATUS_OK;
    WebPFreeDecBuffer(&config.output);
    free(data);
    return bad;
}

int main(int argc, char **argv) {
    const char *kind = argc > 1 ? argv[1] : "";
    if (argc < 4 || (strcmp(kind, "jpeg") != 0 && strcmp(kind, "png") != 0 && strcmp(kind, "webp") != 0)) {
        fprintf(stderr, "usage: floors jpeg|png|webp BOX FILE...\n");
        return 2;
    }
    int box = atoi(argv[2]), failed = 0;
    double best = 1e30;
    for (int pass = 0; pass < 3; pass++) {
        double start = now();
        failed = 0;
        for (int i = 3; i < argc; i++) {
            int bad = kind[0] == 'j' ? decode_jpeg(argv[i], box) : kind[0] == 'p' ? decode_png(argv[i]) : decode_webp(argv[i], box);
            if (bad && pass == 0) fprintf(stderr, "floors: %s could not be decoded\n", argv[i]);
            failed += bad;
        }
        double seconds = now() - start;
        if (seconds < best) best = seconds;
    }
    printf("%.4f\n", best);
    return 0;
}
