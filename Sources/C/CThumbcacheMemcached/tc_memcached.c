#include "tc_memcached.h"

// Loaded with dlopen on first use, as libcurl is: only a command given a memcached remote needs it.
#include <libmemcached/memcached.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tc_libraries.h"

#define MEMCACHED_FUNCTIONS(X)                                                                      \
    X(memcached_create) X(memcached_free) X(memcached_clone) X(memcached_servers_parse)             \
    X(memcached_server_push) X(memcached_server_list_free) X(memcached_behavior_set)                \
    X(memcached_mget) X(memcached_fetch_result) X(memcached_result_key_value)                       \
    X(memcached_result_key_length) X(memcached_result_value) X(memcached_result_length)             \
    X(memcached_result_free) X(memcached_set) X(memcached_strerror)

/// The functions used, each field named as the headers name the function.
static struct { MEMCACHED_FUNCTIONS(TC_LIBRARY_FIELD) } lib;
static const char *const names[] = {MEMCACHED_FUNCTIONS(TC_LIBRARY_NAME)};
static tc_library library = TC_LIBRARY("libmemcached", "libmemcached.so.11", "libmemcached11", names, lib);

const char *tc_mc_load(void) { return tc_library_load(&library); }

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
    memcached_server_list_st list = lib.memcached_servers_parse(servers);
    if (!list) {
        snprintf(error, error_size, "'%s' is not a list of host:port", servers);
        return NULL;
    }
    memcached_st *m = lib.memcached_create(NULL);
    tc_mc *mc = calloc(1, sizeof *mc);
    if (!m || !mc) {
        lib.memcached_server_list_free(list);
        if (m) lib.memcached_free(m);
        free(mc);
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    memcached_return_t rc = lib.memcached_server_push(m, list);
    lib.memcached_server_list_free(list);
    if (rc != MEMCACHED_SUCCESS) {
        snprintf(error, error_size, "%s", lib.memcached_strerror(m, rc));
        lib.memcached_free(m);
        free(mc);
        return NULL;
    }
    // Consistent hashing (ketama): a server that goes costs only its share of keys. After two
    // failures a server is left out for 30 s, its keys going to the others meanwhile.
    lib.memcached_behavior_set(m, MEMCACHED_BEHAVIOR_KETAMA, 1);
    lib.memcached_behavior_set(m, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT, (uint64_t)timeout_ms);
    lib.memcached_behavior_set(m, MEMCACHED_BEHAVIOR_POLL_TIMEOUT, (uint64_t)timeout_ms);
    lib.memcached_behavior_set(m, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
    lib.memcached_behavior_set(m, MEMCACHED_BEHAVIOR_SERVER_FAILURE_LIMIT, 2);
    lib.memcached_behavior_set(m, MEMCACHED_BEHAVIOR_REMOVE_FAILED_SERVERS, 1);
    lib.memcached_behavior_set(m, MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, 30);
    lib.memcached_behavior_set(m, MEMCACHED_BEHAVIOR_DEAD_TIMEOUT, 30);
    mc->master = m;
    pthread_mutex_init(&mc->lock, NULL);
    return mc;
}

void tc_mc_destroy(tc_mc *mc) {
    if (!mc) return;
    for (int i = 0; i < mc->idle_count; i++) lib.memcached_free(mc->idle[i]);
    lib.memcached_free(mc->master);
    pthread_mutex_destroy(&mc->lock);
    free(mc);
}

static memcached_st *take(tc_mc *mc) {
    memcached_st *m = NULL;
    pthread_mutex_lock(&mc->lock);
    if (mc->idle_count > 0) m = mc->idle[--mc->idle_count];
    else m = lib.memcached_clone(NULL, mc->master);
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
    if (m) lib.memcached_free(m);
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
    memcached_return_t rc = lib.memcached_mget(m, keys, key_lengths, count);
    // SOME_ERRORS: a server failed; the others answer, and its keys are misses.
    if (rc != MEMCACHED_SUCCESS && rc != MEMCACHED_SOME_ERRORS) {
        snprintf(error, error_size, "%s", lib.memcached_strerror(m, rc));
        give_back(mc, m);
        return -1;
    }
    memcached_result_st *r;
    while ((r = lib.memcached_fetch_result(m, NULL, &rc)) != NULL) {
        const char *key = lib.memcached_result_key_value(r);
        size_t key_length = lib.memcached_result_key_length(r);
        for (size_t i = 0; i < count; i++) {
            if (values[i] || key_lengths[i] != key_length || memcmp(keys[i], key, key_length) != 0) continue;
            size_t n = lib.memcached_result_length(r);
            values[i] = malloc(n ? n : 1);
            if (values[i]) {
                memcpy(values[i], lib.memcached_result_value(r), n);
                value_lengths[i] = n;
            }
            break;
        }
        lib.memcached_result_free(r);
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
    memcached_return_t rc = lib.memcached_set(m, key, key_length, (const char *)value, length, 0, 0);
    int result = 0;
    if (rc == MEMCACHED_E2BIG) {
        result = 1;
    } else if (rc != MEMCACHED_SUCCESS) {
        snprintf(error, error_size, "%s", lib.memcached_strerror(m, rc));
        result = -1;
    }
    give_back(mc, m);
    return result;
}

void tc_mc_free(void *value) { free(value); }
