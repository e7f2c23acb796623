#ifndef CRAW_H
#define CRAW_H
// LibRaw's C interface, its library loaded on first use: each function here is LibRaw's of the
// same name after `libraw_`, called through the loaded library.
#include <libraw/libraw.h>

/// Loads LibRaw if it is not yet loaded: NULL, or why it cannot be. craw_init loads it itself; a
/// worker whose confinement would not let it load later calls this before.
const char *craw_load(void);

/// NULL when LibRaw cannot be loaded (craw_load says why) or is out of memory.
libraw_data_t *craw_init(unsigned int flags);
int craw_open_buffer(libraw_data_t *raw, const void *buffer, size_t size);
int craw_unpack(libraw_data_t *raw);
int craw_unpack_thumb(libraw_data_t *raw);
int craw_dcraw_process(libraw_data_t *raw);
libraw_processed_image_t *craw_dcraw_make_mem_image(libraw_data_t *raw, int *error);
void craw_dcraw_clear_mem(libraw_processed_image_t *image);
const char *craw_strerror(int status);
void craw_close(libraw_data_t *raw);

#endif
