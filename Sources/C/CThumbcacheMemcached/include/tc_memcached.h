#ifndef TC_MEMCACHED_H
#define TC_MEMCACHED_H

#include <stddef.h>
#include <stdint.h>

/// A set of memcached servers behind libmemcached (consistent hashing, a server that fails
/// taken out for a while), with a pool of connections so that any thread may call. libmemcached
/// is loaded with dlopen on first use.
typedef struct tc_mc tc_mc;

/// Loads libmemcached (once); NULL when it is there, else why not.
const char *tc_mc_load(void);

/// `servers` is "host:port,host:port"; NULL (with `error` filled) when it cannot be used.
tc_mc *tc_mc_create(const char *servers, long timeout_ms, char *error, size_t error_size);
void tc_mc_destroy(tc_mc *mc);

/// Fetches `count` keys in one multi-get. `values[i]` is malloc'ed (free with tc_mc_free), or
/// NULL for a miss. Returns 0, or -1 when no server could be asked (`error` says why).
int tc_mc_get_many(tc_mc *mc, const char *const *keys, const size_t *key_lengths, size_t count,
                   uint8_t **values, size_t *value_lengths, char *error, size_t error_size);

/// Stores one value. Returns 0, 1 when it is larger than the server takes, or -1 (`error`).
int tc_mc_set(tc_mc *mc, const char *key, size_t key_length, const uint8_t *value, size_t length,
              char *error, size_t error_size);

void tc_mc_free(void *value);

#endif
