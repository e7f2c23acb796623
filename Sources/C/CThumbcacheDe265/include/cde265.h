#ifndef CDE265_H
#define CDE265_H
// libde265's C interface, its library loaded on first use: each function here is libde265's of
// the same name after `de265_`, called through the loaded library.
#include <libde265/de265.h>

/// Loads libde265 if it is not yet loaded: NULL, or why it cannot be. cde265_new_decoder loads it
/// itself; a worker whose confinement would not let it load later calls this before.
const char *cde265_load(void);

/// NULL when libde265 cannot be loaded (cde265_load says why) or is out of memory.
de265_decoder_context *cde265_new_decoder(void);
de265_error cde265_free_decoder(de265_decoder_context *context);
void cde265_set_parameter_bool(de265_decoder_context *context, enum de265_param param, int value);
void cde265_set_image_allocation_functions(de265_decoder_context *context, struct de265_image_allocation *functions, void *userdata);
const struct de265_image_allocation *cde265_get_default_image_allocation_functions(void);
void cde265_set_image_plane(struct de265_image *image, int channel, void *memory, int stride, void *userdata);
de265_error cde265_push_NAL(de265_decoder_context *context, const void *data, int length, de265_PTS pts, void *user_data);
de265_error cde265_flush_data(de265_decoder_context *context);
de265_error cde265_decode(de265_decoder_context *context, int *more);
void cde265_reset(de265_decoder_context *context);
const struct de265_image *cde265_get_next_picture(de265_decoder_context *context);
void cde265_release_next_picture(de265_decoder_context *context);
int cde265_isOK(de265_error error);
const char *cde265_get_error_text(de265_error error);
int cde265_get_image_width(const struct de265_image *image, int channel);
int cde265_get_image_height(const struct de265_image *image, int channel);
enum de265_chroma cde265_get_chroma_format(const struct de265_image *image);
int cde265_get_bits_per_pixel(const struct de265_image *image, int channel);
const uint8_t *cde265_get_image_plane(const struct de265_image *image, int channel, int *out_stride);

#endif
