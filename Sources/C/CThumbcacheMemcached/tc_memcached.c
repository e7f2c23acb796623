#include "tc_memcached.h"

// Loaded with dlopen on first use, as libcurl is: only a command given a memcached remote needs it.
#include <libmemcached/memcached.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    memcached_st *(*create)(memcached_st *);
    void (*free)(memcached_st *);
    memcached_st *(*clone)(memcached_st *, const memcached_st *);
    memcached_server_list_st (*servers_parse)(const char *);
    memcached_return_t (*server_push)(memcached_st *, const memcached_server_list_st);
    void (*server_list_free)(memcached_server_list_st);
    memcached_return_t (*behavior_set)(memcached_st *, const memcached_behavior_t, uint64_t);
    memcached_return_t (*mget)(memcached_st *, const char *const *, const size_t *, size_t);
    memcached_result_st *(*fetch_result)(memcached_st *, memcached_result_st *, memcached_return_t *);
    const char *(*result_key_value)(const memcached_result_st *);
    size_t (*result_key_length)(const memcached_result_st *);
    const char *(*result_value)(const memcached_result_st *);
    size_t (*result_length)(const memcached_result_st *);
    void (*result_free)(memcached_result_st *);
    memcached_return_t (*set)(memcached_st *, const char *, size_t, const char *, size_t, time_t, uint32_t);
    const char *(*strerror)(const memcached_st *, memcached_return_t);
} lib;
static char load_error[256];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *h = dlopen("libmemcached.so.11", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(load_error, sizeof load_error, "%s (install libmemcached11)", dlerror());
        return;
    }
    int ok = 1;
#define FN(field, name)                                                                     \
    do {                                                                                    \
        *(void **)&lib.field = dlsym(h, name);                                              \
        if (!lib.field && ok) {                                                             \
            snprintf(load_error, sizeof load_error, "libmemcached has no %s", name);        \
            ok = 0;                                                                         \
        }                                                                                   \
    } while (0)
    FN(create, "memcached_create");
    FN(free, "memcached_free");
    FN(clone, "memcached_clone");
    FN(servers_parse, "memcached_servers_parse");
    FN(server_push, "memcached_server_push");
    FN(server_list_free, "memcached_server_list_free");
    FN(behavior_set, "memcached_behavior_set");
    FN(mget, "memcached_mget");
    FN(fetch_result, "memcached_fetch_result");
    FN(result_key_value, "memcached_result_key_value");
    FN(result_key_length, "memcached_result_key_length");
    FN(result_value, "memcached_result_value");
    FN(result_length, "memcached_result_length");
    FN(result_free, "memcached_result_free");
    FN(set, "memcached_set");
    FN(strerror, "memcached_strerror");
    if (ok) load_error[0] = 0;
}

const char *tc_mc_load(void) {
    pthread_once(&load_once, load);
    return load_error[0] ? load_error : (lib.create ? NULL : "libmemcached could not be loaded");
}

#define TC_MC_POOL 16

struct tc_mc {
    memcached_st *master;
    pthread_mutex_t lock;
    memcached_st *idle[TC_MC_POOL];
    int idle_count;
};

tc_mc *tc_mc_create(const char *servers, long timeout_ms, char *error, size_t error_size) {
    const char *why = tc_mc_load();
    if (why) {
        snprintf(error, error_size, "%s", why);
        return NULL;
    }
    memcached_server_list_st list = lib.servers_parse(servers);
    if (!list) {
        snprintf(error, error_size, "'%s' is not a list of host:port", servers);
        return NULL;
    }
    memcached_st *m = lib.create(NULL);
    tc_mc *mc = calloc(1, sizeof *mc);
    if (!m || !mc) {
        lib.server_list_free(list);
        if (m) lib.free(m);
        free(mc);
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    memcached_return_t rc = lib.server_push(m, list);
    lib.server_list_free(list);
    if (rc != MEMCACHED_SUCCESS) {
        snprintf(error, error_size, "%s", lib.strerror(m, rc));
        lib.free(m);
        free(mc);
        return NULL;
    }
    // Consistent hashing (ketama): a server that goes costs only its share of keys. After two
    // failures a server is left out for 30 s, its keys going to the others meanwhile.
    lib.behavior_set(m, MEMCACHED_BEHAVIOR_KETAMA, 1);
    lib.behavior_set(m, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT, (uint64_t)timeout_ms);
    lib.behavior_set(m, MEMCACHED_BEHAVIOR_POLL_TIMEOUT, (uint64_t)timeout_ms);
    lib.behavior_set(m, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
    lib.behavior_set(m, MEMCACHED_BEHAVIOR_SERVER_FAILURE_LIMIT, 2);
    lib.behavior_set(m, MEMCACHED_BEHAVIOR_REMOVE_FAILED_SERVERS, 1);
    lib.behavior_set(m, MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, 30);
    lib.behavior_set(m, MEMCACHED_BEHAVIOR_DEAD_TIMEOUT, 30);
    mc->master = m;
    pthread_mutex_init(&mc->lock, NULL);
    return mc;
}

void tc_mc_destroy(tc_mc *mc) {
    if (!mc) return;
    for (int i = 0; i < mc->idle_count; i++) lib.free(mc->idle[i]);
    lib.free(mc->master);
    pthread_mutex_destroy(&mc->lock);
    free(mc);
}

static memcached_st *take(tc_mc *mc) {
    memcached_st *m = NULL;
    pthread_mutex_lock(&mc->lock);
    if (mc->idle_count > 0) m = mc->idle[--mc->idle_count];
    else m = lib.clone(NULL, mc->master);
    pthread_mutex_unlock(&mc->lock);
    return m;
}

static void give_back(tc_mc *mc, memcached_st *m) {
    pthread_mutex_lock(&mc->lock);
    if (mc->idle_count < TC_MC_POOL) {
        mc->idle[mc->idle_count++] = m;
        m = NULL;
    }
    pthread_mutex_unlock(&mc->lock);
    if (m) lib.free(m);
}

int tc_mc_get_many(tc_mc *mc, const char *const *keys, const size_t *key_lengths, size_t count, uint8_t **values,
                   size_t *value_lengths, char *error, size_t error_size) {
    memset(values, 0, count * sizeof *values);
    memset(value_lengths, 0, count * sizeof *value_lengths);
    memcached_st *m = take(mc);
    if (!m) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    memcached_return_t rc = lib.mget(m, keys, key_lengths, count);
    // SOME_ERRORS: a server failed; the others answer, and its keys are misses.
    if (rc != MEMCACHED_SUCCESS && rc != MEMCACHED_SOME_ERRORS) {
        snprintf(error, error_size, "%s", lib.strerror(m, rc));
        give_back(mc, m);
        return -1;
    }
    memcached_result_st *r;
    while ((r = lib.fetch_result(m, NULL, &rc)) != NULL) {
        const char *key = lib.result_key_value(r);
        size_t key_length = lib.result_key_length(r);
        for (size_t i = 0; i < count; i++) {
            if (values[i] || key_lengths[i] != key_length || memcmp(keys[i], key, key_length) != 0) continue;
            size_t n = lib.result_length(r);
            values[i] = malloc(n ? n : 1);
            if (values[i]) {
                memcpy(values[i], lib.result_value(r), n);
                value_lengths[i] = n;
            }
            break;
        }
        lib.result_free(r);
    }
    give_back(mc, m);
    return 0;
}

int tc_mc_set(tc_mc *mc, const char *key, size_t key_length, const uint8_t *value, size_t length, char *error,
              size_t error_size) {
    memcached_st *m = take(mc);
    if (!m) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    memcached_return_t rc = lib.set(m, key, key_length, (const char *)value, length, 0, 0);
    int result = 0;
    if (rc == MEMCACHED_E2BIG) {
        result = 1;
    } else if (rc != MEMCACHED_SUCCESS) {
        snprintf(error, error_size, "%s", lib.strerror(m, rc));
        result = -1;
    }
    give_back(mc, m);
    return result;
}

void tc_mc_free(void *value) { free(value); }
