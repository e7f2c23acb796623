#include "thumbcache-binding.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// Per thread, as errno is: a handle is shared by threads, and each must read its own failure.
// A key rather than _Thread_local, so that a thread's last message is freed when it ends.
static pthread_key_t message_key;
static pthread_once_t message_once = PTHREAD_ONCE_INIT;

static void make_key(void) { pthread_key_create(&message_key, free); }

void thumbcache_binding_set_error(const char *message) {
    pthread_once(&message_once, make_key);
    free(pthread_getspecific(message_key));
    pthread_setspecific(message_key, message ? strdup(message) : NULL);
}

const char *thumbcache_error_message(void) {
    pthread_once(&message_once, make_key);
    const char *message = pthread_getspecific(message_key);
    return message ? message : "";
}

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
