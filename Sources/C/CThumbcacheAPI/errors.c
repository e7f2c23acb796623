#include "thumbcache-binding.h"

#include <stdlib.h>
#include <string.h>

// Per thread, as errno is: a handle is shared by threads, and each must read its own failure.
static _Thread_local char *last_error;

void thumbcache_binding_set_error(const char *message) {
    free(last_error);
    last_error = message ? strdup(message) : NULL;
}

const char *thumbcache_error_message(void) { return last_error ? last_error : ""; }

const char *thumbcache_status_name(thumbcache_status status) {
    switch (status) {
    case THUMBCACHE_OK: return "THUMBCACHE_OK";
    case THUMBCACHE_ERROR_ARGUMENT: return "THUMBCACHE_ERROR_ARGUMENT";
    case THUMBCACHE_ERROR_CACHE: return "THUMBCACHE_ERROR_CACHE";
    case THUMBCACHE_ERROR_UNREADABLE: return "THUMBCACHE_ERROR_UNREADABLE";
    case THUMBCACHE_ERROR_UNSUPPORTED: return "THUMBCACHE_ERROR_UNSUPPORTED";
    case THUMBCACHE_ERROR_DECODE: return "THUMBCACHE_ERROR_DECODE";
    case THUMBCACHE_ERROR_QUERY: return "THUMBCACHE_ERROR_QUERY";
    case THUMBCACHE_ERROR_OTHER: return "THUMBCACHE_ERROR_OTHER";
    }
    return "THUMBCACHE_ERROR_UNKNOWN";
}
