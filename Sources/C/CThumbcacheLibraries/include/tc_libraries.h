#ifndef TC_LIBRARIES_H
#define TC_LIBRARIES_H
// A library loaded with dlopen when first needed rather than linked (nothing of it at a process's
// start), its functions resolved by name into a shim's table: what the shims for libsystemd, ICU,
// libcurl and libcrypto, libmemcached, libarchive, FreeType, libtiff and LibRaw share. Each lists its functions once, as an X-macro, for the table's typed
// fields (TC_LIBRARY_FIELD) and for their names (TC_LIBRARY_NAME, or versioned ones of its own).
// A C++ library (poppler's binding) has no table: it is loaded into the global scope, where the
// lazy binding finds the functions its shim declares weak (TC_LIBRARY_GLOBAL).
#include <pthread.h>
#include <stddef.h>

typedef struct {
    const char *what;            // the library as a message names it: "libarchive"
    const char *soname;          // what dlopen opens: "libarchive.so.13"
    const char *package;         // what to install when it is missing: "libarchive13"
    const char *const *names;    // the functions, in the table's order
    size_t count;
    void **table;                // `count` function pointers, filled by tc_library_load
    int global;                  // no table: loaded with RTLD_GLOBAL (and bound lazily, as if linked)
    pthread_mutex_t lock;
    int loaded;
    char error[256];
} tc_library;

#define TC_LIBRARY_FIELD(name) __typeof__(name) *name;
#define TC_LIBRARY_NAME(name) #name,

/// A library to load into `table` (a struct of `count` function pointers) by `names`.
#define TC_LIBRARY(what_, soname_, package_, names_, table_)                                      \
    {.what = what_, .soname = soname_, .package = package_, .names = names_,                      \
     .count = sizeof names_ / sizeof names_[0], .table = (void **)&table_,                        \
     .lock = PTHREAD_MUTEX_INITIALIZER, .loaded = 0, .error = {0}}

/// A library to load into the global scope, for calls its shim declares weak.
#define TC_LIBRARY_GLOBAL(what_, soname_, package_)                                               \
    {.what = what_, .soname = soname_, .package = package_, .names = NULL, .count = 0, .table = NULL, \
     .global = 1, .lock = PTHREAD_MUTEX_INITIALIZER, .loaded = 0, .error = {0}}

/// Loads `library` if no call has yet: NULL once its every function is resolved, else why not
/// ("cannot load libarchive: libarchive.so.13: cannot open shared object file… (install
/// libarchive13)"), the same for every later call. Safe from any thread.
const char *tc_library_load(tc_library *library);

#endif
