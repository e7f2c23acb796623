#include "cdav1d.h"

// dav1d is loaded with dlopen at the first AVIF, not linked: it took part of every image
// worker's start, which a JPEG never needs (PERFORMANCE.md). A confined worker may still load it
// then: Landlock lets it read the system's libraries (Sources/C/CThumbcacheSandbox, SECURITY.md).
#include "tc_libraries.h"

#define TC_QUOTED(x) #x
#define TC_STRING(x) TC_QUOTED(x)
#define DAV1D_FUNCTIONS(X)                                                                           \
    X(dav1d_default_settings) X(dav1d_open) X(dav1d_close) X(dav1d_flush) X(dav1d_data_create)      \
    X(dav1d_data_unref) X(dav1d_send_data) X(dav1d_get_picture) X(dav1d_picture_unref)

/// The functions used, each field named as the headers name the function.
static struct { DAV1D_FUNCTIONS(TC_LIBRARY_FIELD) } lib;
static const char *const names[] = {DAV1D_FUNCTIONS(TC_LIBRARY_NAME)};
// The headers' dav1d (API 6: libdav1d.so.6, Debian's libdav1d6).
static tc_library library = TC_LIBRARY("dav1d", "libdav1d.so." TC_STRING(DAV1D_API_VERSION_MAJOR),
                                       "libdav1d" TC_STRING(DAV1D_API_VERSION_MAJOR), names, lib);

const char *cdav1d_load(void) { return tc_library_load(&library); }

void cdav1d_default_settings(Dav1dSettings *s) {
    if (!cdav1d_load()) lib.dav1d_default_settings(s);
}
int cdav1d_open(Dav1dContext **c, const Dav1dSettings *s) { return cdav1d_load() ? -1 : lib.dav1d_open(c, s); }
void cdav1d_close(Dav1dContext **c) { lib.dav1d_close(c); }
void cdav1d_flush(Dav1dContext *c) { lib.dav1d_flush(c); }
uint8_t *cdav1d_data_create(Dav1dData *d, size_t n) { return lib.dav1d_data_create(d, n); }
void cdav1d_data_unref(Dav1dData *d) { lib.dav1d_data_unref(d); }
int cdav1d_send_data(Dav1dContext *c, Dav1dData *d) { return lib.dav1d_send_data(c, d); }
int cdav1d_get_picture(Dav1dContext *c, Dav1dPicture *p) { return lib.dav1d_get_picture(c, p); }
void cdav1d_picture_unref(Dav1dPicture *p) { lib.dav1d_picture_unref(p); }
