/* What the Swift side of the C API needs beside the public header; not installed. */
#ifndef THUMBCACHE_BINDING_H
#define THUMBCACHE_BINDING_H

#include "thumbcache.h"

/* Sets the calling thread's message for thumbcache_error_message (copied; NULL clears it). */
__attribute__((visibility("hidden"))) void thumbcache_binding_set_error(const char *message);

#endif
