#include "tc_libraries.h"
#include <dlfcn.h>
#include <stdio.h>

static void load(tc_library *library) {
    void *handle = dlopen(library->soname, library->global ? RTLD_LAZY | RTLD_GLOBAL : RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(library->error, sizeof library->error, "cannot load %s: %s (install %s)", library->what, dlerror(), library->package);
        return;
    }
    for (size_t i = 0; i < library->count; i++) {
        if (!(library->table[i] = dlsym(handle, library->names[i]))) {
            snprintf(library->error, sizeof library->error, "%s has no %s", library->soname, library->names[i]);
            return;
        }
    }
}

const char *tc_library_load(tc_library *library) {
    // After the first load, one atomic read: the archive and TIFF shims ask at every file.
    if (!__atomic_load_n(&library->loaded, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&library->lock);
        if (!library->loaded) {
            load(library);
            __atomic_store_n(&library->loaded, 1, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&library->lock);
    }
    return library->error[0] ? library->error : NULL;
}
