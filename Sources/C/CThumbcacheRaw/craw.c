#include "craw.h"

// LibRaw is loaded with dlopen at the first camera raw, not linked: with the OpenMP runtime and
// lcms2 it brings, it took about 0.4 ms of every image worker's start, which a JPEG never needs.
// A confined worker may still load it then: Landlock lets it read the system's libraries
// (Sources/C/CThumbcacheSandbox, SECURITY.md).
#include "tc_libraries.h"

#define TC_QUOTED(x) #x
#define TC_STRING(x) TC_QUOTED(x)
#define RAW_FUNCTIONS(X)                                                                    \
    X(libraw_init) X(libraw_open_buffer) X(libraw_unpack) X(libraw_unpack_thumb)          \
    X(libraw_dcraw_process) X(libraw_dcraw_make_mem_image) X(libraw_dcraw_clear_mem)      \
    X(libraw_strerror) X(libraw_close)

/// The functions used, each field named as the headers name the function.
static struct { RAW_FUNCTIONS(TC_LIBRARY_FIELD) } lib;
static const char *const names[] = {RAW_FUNCTIONS(TC_LIBRARY_NAME)};
// The headers' LibRaw (0.20: libraw_r.so.20, Debian's libraw20).
static tc_library library = TC_LIBRARY("LibRaw", "libraw_r.so." TC_STRING(LIBRAW_SHLIB_CURRENT),
                                       "libraw" TC_STRING(LIBRAW_SHLIB_CURRENT), names, lib);

const char *craw_load(void) { return tc_library_load(&library); }

libraw_data_t *craw_init(unsigned int flags) { return craw_load() ? NULL : lib.libraw_init(flags); }
int craw_open_buffer(libraw_data_t *raw, const void *buffer, size_t size) { return lib.libraw_open_buffer(raw, (void *)buffer, size); }
int craw_unpack(libraw_data_t *raw) { return lib.libraw_unpack(raw); }
int craw_unpack_thumb(libraw_data_t *raw) { return lib.libraw_unpack_thumb(raw); }
int craw_dcraw_process(libraw_data_t *raw) { return lib.libraw_dcraw_process(raw); }
libraw_processed_image_t *craw_dcraw_make_mem_image(libraw_data_t *raw, int *error) { return lib.libraw_dcraw_make_mem_image(raw, error); }
void craw_dcraw_clear_mem(libraw_processed_image_t *image) { lib.libraw_dcraw_clear_mem(image); }
const char *craw_strerror(int status) { return lib.libraw_strerror(status); }
void craw_close(libraw_data_t *raw) { lib.libraw_close(raw); }
