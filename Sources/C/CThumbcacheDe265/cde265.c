#include "cde265.h"

// libde265 (with the C++ runtime it brings) is loaded with dlopen at the first HEIC, not linked:
// it took part of every image worker's start, which a JPEG never needs (PERFORMANCE.md). A
// confined worker may still load it then: Landlock lets it read the system's libraries
// (Sources/C/CThumbcacheSandbox, SECURITY.md).
#include "tc_libraries.h"

#define DE265_FUNCTIONS(X)                                                                              \
    X(de265_new_decoder) X(de265_free_decoder) X(de265_set_parameter_bool)                              \
    X(de265_set_image_allocation_functions) X(de265_get_default_image_allocation_functions)             \
    X(de265_set_image_plane) X(de265_push_NAL) X(de265_flush_data) X(de265_decode) X(de265_reset)       \
    X(de265_get_next_picture) X(de265_release_next_picture) X(de265_isOK) X(de265_get_error_text)       \
    X(de265_get_image_width) X(de265_get_image_height) X(de265_get_chroma_format)                       \
    X(de265_get_bits_per_pixel) X(de265_get_image_plane)

/// The functions used, each field named as the header names the function.
static struct { DE265_FUNCTIONS(TC_LIBRARY_FIELD) } lib;
static const char *const names[] = {DE265_FUNCTIONS(TC_LIBRARY_NAME)};
// Debian's libde265-0 (the soname has stayed .0 since 1.0).
static tc_library library = TC_LIBRARY("libde265", "libde265.so.0", "libde265-0", names, lib);

const char *cde265_load(void) { return tc_library_load(&library); }

de265_decoder_context *cde265_new_decoder(void) { return cde265_load() ? NULL : lib.de265_new_decoder(); }
de265_error cde265_free_decoder(de265_decoder_context *c) { return lib.de265_free_decoder(c); }
void cde265_set_parameter_bool(de265_decoder_context *c, enum de265_param p, int v) { lib.de265_set_parameter_bool(c, p, v); }
void cde265_set_image_allocation_functions(de265_decoder_context *c, struct de265_image_allocation *f, void *u) {
    lib.de265_set_image_allocation_functions(c, f, u);
}
const struct de265_image_allocation *cde265_get_default_image_allocation_functions(void) {
    return lib.de265_get_default_image_allocation_functions();
}
void cde265_set_image_plane(struct de265_image *i, int c, void *m, int s, void *u) { lib.de265_set_image_plane(i, c, m, s, u); }
de265_error cde265_push_NAL(de265_decoder_context *c, const void *d, int n, de265_PTS pts, void *u) {
    return lib.de265_push_NAL(c, d, n, pts, u);
}
de265_error cde265_flush_data(de265_decoder_context *c) { return lib.de265_flush_data(c); }
de265_error cde265_decode(de265_decoder_context *c, int *more) { return lib.de265_decode(c, more); }
void cde265_reset(de265_decoder_context *c) { lib.de265_reset(c); }
const struct de265_image *cde265_get_next_picture(de265_decoder_context *c) { return lib.de265_get_next_picture(c); }
void cde265_release_next_picture(de265_decoder_context *c) { lib.de265_release_next_picture(c); }
int cde265_isOK(de265_error e) { return lib.de265_isOK(e); }
const char *cde265_get_error_text(de265_error e) { return lib.de265_get_error_text(e); }
int cde265_get_image_width(const struct de265_image *i, int c) { return lib.de265_get_image_width(i, c); }
int cde265_get_image_height(const struct de265_image *i, int c) { return lib.de265_get_image_height(i, c); }
enum de265_chroma cde265_get_chroma_format(const struct de265_image *i) { return lib.de265_get_chroma_format(i); }
int cde265_get_bits_per_pixel(const struct de265_image *i, int c) { return lib.de265_get_bits_per_pixel(i, c); }
const uint8_t *cde265_get_image_plane(const struct de265_image *i, int c, int *s) { return lib.de265_get_image_plane(i, c, s); }
