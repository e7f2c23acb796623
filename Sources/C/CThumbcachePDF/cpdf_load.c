#include "cpdf.h"
#include "tc_libraries.h"
#include <stdio.h>

static tc_library library = TC_LIBRARY_GLOBAL("poppler's C++ binding", "libpoppler-cpp.so.0", "libpoppler-cpp0v5");

int cpdf_load(char *message, size_t message_size) {
    const char *unloaded = tc_library_load(&library);
    if (!unloaded) return 0;
    if (message && message_size) snprintf(message, message_size, "%s", unloaded);
    return -1;
}
