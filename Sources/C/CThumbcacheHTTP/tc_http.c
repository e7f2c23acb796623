#include "tc_http.h"

// libcurl and libcrypto are loaded with dlopen on first use, not linked: linking them put about
// twenty libraries (Kerberos, LDAP, SSH, RTMP…) into every start of every thumbcache process,
// and only a command given a remote needs them.
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <dlfcn.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TC_POOL_MAX 16

struct tc_http_client {
    pthread_mutex_t lock;
    CURLM *idle[TC_POOL_MAX];
    int idle_count;
    long connect_timeout_ms;
    long max_connections;
};

/// The functions used, resolved once.
static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_perform)(CURLM *, int *);
    CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned int, int, int *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    CURLMcode (*multi_cleanup)(CURLM *);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    int (*evp_digest)(const void *, size_t, unsigned char *, unsigned int *, const EVP_MD *, ENGINE *);
    const EVP_MD *(*evp_sha256)(void);
    unsigned char *(*hmac)(const EVP_MD *, const void *, int, const unsigned char *, size_t, unsigned char *, unsigned int *);
} lib;
static char load_error[256];
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void *resolve(void *handle, const char *library, const char *name, int *ok) {
    void *f = handle ? dlsym(handle, name) : NULL;
    if (!f && *ok) {
        snprintf(load_error, sizeof load_error, "%s has no %s", library, name);
        *ok = 0;
    }
    return f;
}

static void load(void) {
    void *curl = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    void *crypto = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
    if (!curl || !crypto) {
        snprintf(load_error, sizeof load_error, "%s (install %s)", dlerror(), curl ? "libssl3" : "libcurl4");
        return;
    }
    int ok = 1;
#define CURLFN(field, name) *(void **)&lib.field = resolve(curl, "libcurl", name, &ok)
#define SSLFN(field, name) *(void **)&lib.field = resolve(crypto, "libcrypto", name, &ok)
    CURLFN(global_init, "curl_global_init");
    CURLFN(easy_init, "curl_easy_init");
    CURLFN(easy_setopt, "curl_easy_setopt");
    CURLFN(easy_getinfo, "curl_easy_getinfo");
    CURLFN(easy_cleanup, "curl_easy_cleanup");
    CURLFN(easy_strerror, "curl_easy_strerror");
    CURLFN(multi_init, "curl_multi_init");
    CURLFN(multi_setopt, "curl_multi_setopt");
    CURLFN(multi_add_handle, "curl_multi_add_handle");
    CURLFN(multi_remove_handle, "curl_multi_remove_handle");
    CURLFN(multi_perform, "curl_multi_perform");
    CURLFN(multi_poll, "curl_multi_poll");
    CURLFN(multi_info_read, "curl_multi_info_read");
    CURLFN(multi_cleanup, "curl_multi_cleanup");
    CURLFN(slist_append, "curl_slist_append");
    CURLFN(slist_free_all, "curl_slist_free_all");
    SSLFN(evp_digest, "EVP_Digest");
    SSLFN(evp_sha256, "EVP_sha256");
    SSLFN(hmac, "HMAC");
    if (ok) {
        lib.global_init(CURL_GLOBAL_DEFAULT);
        load_error[0] = 0;
    }
}

const char *tc_http_load(void) {
    pthread_once(&load_once, load);
    return load_error[0] ? load_error : (lib.easy_init ? NULL : "libcurl could not be loaded");
}

tc_http_client *tc_http_client_create(long connect_timeout_ms, long max_connections) {
    if (tc_http_load()) return NULL;
    tc_http_client *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    pthread_mutex_init(&c->lock, NULL);
    c->connect_timeout_ms = connect_timeout_ms;
    c->max_connections = max_connections > 0 ? max_connections : 8;
    return c;
}

void tc_http_client_destroy(tc_http_client *c) {
    if (!c) return;
    for (int i = 0; i < c->idle_count; i++) lib.multi_cleanup(c->idle[i]);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static CURLM *take_multi(tc_http_client *c) {
    CURLM *m = NULL;
    pthread_mutex_lock(&c->lock);
    if (c->idle_count > 0) m = c->idle[--c->idle_count];
    pthread_mutex_unlock(&c->lock);
    if (m) return m;
    m = lib.multi_init();
    if (!m) return NULL;
    lib.multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, c->max_connections);
    lib.multi_setopt(m, CURLMOPT_MAXCONNECTS, c->max_connections);
    return m;
}

static void give_back(tc_http_client *c, CURLM *m) {
    pthread_mutex_lock(&c->lock);
    if (c->idle_count < TC_POOL_MAX) {
        c->idle[c->idle_count++] = m;
        m = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    if (m) lib.multi_cleanup(m);
}

typedef struct {
    tc_http_response *response;
    size_t body_capacity;
    size_t max_body;
    size_t headers_capacity;
    int too_large;
} transfer;

static int grow(uint8_t **buffer, size_t *capacity, size_t needed) {
    if (needed <= *capacity) return 1;
    size_t size = *capacity ? *capacity : 4096;
    while (size < needed) size *= 2;
    uint8_t *bigger = realloc(*buffer, size);
    if (!bigger) return 0;
    *buffer = bigger;
    *capacity = size;
    return 1;
}

static size_t on_body(char *data, size_t size, size_t count, void *user) {
    transfer *t = user;
    size_t n = size * count;
    tc_http_response *r = t->response;
    if (r->body_length + n > t->max_body) {
        t->too_large = 1;
        return 0;
    }
    if (!grow(&r->body, &t->body_capacity, r->body_length + n)) return 0;
    memcpy(r->body + r->body_length, data, n);
    r->body_length += n;
    return n;
}

static size_t on_header(char *data, size_t size, size_t count, void *user) {
    transfer *t = user;
    size_t n = size * count;
    tc_http_response *r = t->response;
    // A new status line (after a redirect or a 100 Continue) starts a new header block.
    if (n >= 5 && memcmp(data, "HTTP/", 5) == 0) r->headers_length = 0;
    if (r->headers_length + n + 1 > 64 * 1024) return n;  // keep the first 64 KiB; the rest is not ours to read
    if (!grow((uint8_t **)&r->headers, &t->headers_capacity, r->headers_length + n + 1)) return 0;
    memcpy(r->headers + r->headers_length, data, n);
    r->headers_length += n;
    r->headers[r->headers_length] = 0;
    return n;
}

int tc_http_perform(tc_http_client *c, const tc_http_request *requests, tc_http_response *responses, size_t count,
                    size_t max_body) {
    memset(responses, 0, count * sizeof *responses);
    if (count == 0) return 0;
    CURLM *m = take_multi(c);
    if (!m) return -1;
    CURL **easy = calloc(count, sizeof *easy);
    transfer *transfers = calloc(count, sizeof *transfers);
    struct curl_slist **lists = calloc(count, sizeof *lists);
    if (!easy || !transfers || !lists) {
        free(easy); free(transfers); free(lists);
        give_back(c, m);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        const tc_http_request *q = &requests[i];
        transfers[i].response = &responses[i];
        transfers[i].max_body = max_body;
        CURL *e = lib.easy_init();
        easy[i] = e;
        if (!e) {
            responses[i].transport_error = CURLE_OUT_OF_MEMORY;
            snprintf(responses[i].error, sizeof responses[i].error, "out of memory");
            continue;
        }
        lib.easy_setopt(e, CURLOPT_URL, q->url);
        lib.easy_setopt(e, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for timeouts
        lib.easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
        lib.easy_setopt(e, CURLOPT_TIMEOUT_MS, q->timeout_ms);
        lib.easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
        lib.easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
        lib.easy_setopt(e, CURLOPT_WRITEDATA, &transfers[i]);
        lib.easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
        lib.easy_setopt(e, CURLOPT_HEADERDATA, &transfers[i]);
        lib.easy_setopt(e, CURLOPT_ERRORBUFFER, responses[i].error);
        lib.easy_setopt(e, CURLOPT_PRIVATE, (void *)(uintptr_t)i);
        if (strcmp(q->method, "HEAD") == 0) {
            lib.easy_setopt(e, CURLOPT_NOBODY, 1L);
        } else if (strcmp(q->method, "GET") != 0) {
            lib.easy_setopt(e, CURLOPT_CUSTOMREQUEST, q->method);
            if (q->body || strcmp(q->method, "PUT") == 0 || strcmp(q->method, "POST") == 0) {
                lib.easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)q->body_length);
                lib.easy_setopt(e, CURLOPT_POSTFIELDS, q->body ? (const char *)q->body : "");
            }
        }
        struct curl_slist *list = NULL;
        for (size_t h = 0; h < q->header_count; h++) list = lib.slist_append(list, q->headers[h]);
        // The body is signed and sent at once: no "Expect: 100-continue" round trip, and no
        // default form content type beside the one signed.
        list = lib.slist_append(list, "Expect:");
        list = lib.slist_append(list, "Accept:");
        lists[i] = list;
        lib.easy_setopt(e, CURLOPT_HTTPHEADER, list);
        lib.multi_add_handle(m, e);
    }
    int running = 0;
    int failed = 0;
    do {
        CURLMcode mc = lib.multi_perform(m, &running);
        if (mc != CURLM_OK) { failed = 1; break; }
        if (running) lib.multi_poll(m, NULL, 0, 1000, NULL);
    } while (running);
    CURLMsg *msg;
    int left;
    while ((msg = lib.multi_info_read(m, &left))) {
        if (msg->msg != CURLMSG_DONE) continue;
        void *private = NULL;
        lib.easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &private);
        size_t i = (size_t)(uintptr_t)private;
        tc_http_response *r = &responses[i];
        CURLcode code = msg->data.result;
        if (code == CURLE_OK) {
            lib.easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &r->status);
        } else {
            r->status = 0;
            r->transport_error = (int)code;
            r->connect_failed = code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST ||
                                (code == CURLE_OPERATION_TIMEDOUT && r->headers_length == 0 && r->body_length == 0);
            if (transfers[i].too_large) snprintf(r->error, sizeof r->error, "response larger than %zu bytes", max_body);
            else if (r->error[0] == 0) snprintf(r->error, sizeof r->error, "%s", lib.easy_strerror(code));
        }
    }
    for (size_t i = 0; i < count; i++) {
        if (easy[i]) {
            lib.multi_remove_handle(m, easy[i]);
            lib.easy_cleanup(easy[i]);
        }
        lib.slist_free_all(lists[i]);
        if (failed && responses[i].status == 0 && responses[i].transport_error == 0) {
            responses[i].transport_error = CURLE_FAILED_INIT;
            snprintf(responses[i].error, sizeof responses[i].error, "libcurl's multi interface failed");
        }
    }
    free(easy);
    free(transfers);
    free(lists);
    give_back(c, m);
    return failed ? -1 : 0;
}

void tc_http_response_free(tc_http_response *r) {
    free(r->body);
    free(r->headers);
    r->body = NULL;
    r->headers = NULL;
    r->body_length = 0;
    r->headers_length = 0;
}

int tc_sha256(const void *data, size_t length, uint8_t out[32]) {
    if (tc_http_load()) return -1;
    unsigned int n = 32;
    return lib.evp_digest(data, length, out, &n, lib.evp_sha256(), NULL) == 1 ? 0 : -1;
}

int tc_hmac_sha256(const void *key, size_t key_length, const void *data, size_t length, uint8_t out[32]) {
    if (tc_http_load()) return -1;
    unsigned int n = 32;
    return lib.hmac(lib.evp_sha256(), key, (int)key_length, data, length, out, &n) ? 0 : -1;
}
