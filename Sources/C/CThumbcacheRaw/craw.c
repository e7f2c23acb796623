#include "craw.h"

// LibRaw is loaded with dlopen at the first camera raw, not linked: with the OpenMP runtime and
// lcms2 it brings, it took about 0.4 ms of every image worker's start, which a JPEG never needs.
// A confined worker may still load it then: Landlock lets it read the system's libraries
// (Sources/C/CThumbcacheSandbox, SECURITY.md).
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define TC_QUOTED(x) #x
#define TC_STRING(x) TC_QUOTED(x)
// The soname of the headers' LibRaw (0.20: libraw_r.so.20).
#define TC_SONAME "libraw_r.so." TC_STRING(LIBRAW_SHLIB_CURRENT)
#define RAW_FUNCTIONS(X)                                                                    \
    X(libraw_init) X(libraw_open_buffer) X(libraw_unpack) X(libraw_unpack_thumb)          \
    X(libraw_dcraw_process) X(libraw_dcraw_make_mem_image) X(libraw_dcraw_clear_mem)      \
    X(libraw_strerror) X(libraw_close)

/// The functions used, resolved once; each field is named as the headers name the function.
static struct {
#define TC_FIELD(name) __typeof__(name) *name;
    RAW_FUNCTIONS(TC_FIELD)
#undef TC_FIELD
} lib;
static char load_error[256];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *h = dlopen(TC_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(load_error, sizeof load_error, "cannot load LibRaw: %s (install libraw%d)", dlerror(), LIBRAW_SHLIB_CURRENT);
        return;
    }
#define TC_RESOLVE(name)                                                    \
    if (!load_error[0] && !(*(void **)&lib.name = dlsym(h, #name)))         \
        snprintf(load_error, sizeof load_error, TC_SONAME " has no " #name);
    RAW_FUNCTIONS(TC_RESOLVE)
#undef TC_RESOLVE
}

const char *craw_load(void) {
    pthread_once(&load_once, load);
    return load_error[0] ? load_error : NULL;
}

libraw_data_t *craw_init(unsigned int flags) { return craw_load() ? NULL : lib.libraw_init(flags); }
int craw_open_buffer(libraw_data_t *raw, const void *buffer, size_t size) { return lib.libraw_open_buffer(raw, (void *)buffer, size); }
int craw_unpack(libraw_data_t *raw) { return lib.libraw_unpack(raw); }
int craw_unpack_thumb(libraw_data_t *raw) { return lib.libraw_unpack_thumb(raw); }
int craw_dcraw_process(libraw_data_t *raw) { return lib.libraw_dcraw_process(raw); }
libraw_processed_image_t *craw_dcraw_make_mem_image(libraw_data_t *raw, int *error) { return lib.libraw_dcraw_make_mem_image(raw, error); }
void craw_dcraw_clear_mem(libraw_processed_image_t *image) { lib.libraw_dcraw_clear_mem(image); }
const char *craw_strerror(int status) { return lib.libraw_strerror(status); }
void craw_close(libraw_data_t *raw) { lib.libraw_close(raw); }
