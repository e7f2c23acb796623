#include "tc_http.h"

// libcurl and libcrypto are loaded with dlopen on first use, not linked: linking them put about
// twenty libraries (Kerberos, LDAP, SSH, RTMP…) into every start of every thumbcache process,
// and only a command given a remote needs them.
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include "tc_libraries.h"
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

#define CURL_FUNCTIONS(X)                                                                            \
    X(curl_global_init) X(curl_easy_init) X(curl_easy_setopt) X(curl_easy_getinfo) X(curl_easy_cleanup) \
    X(curl_easy_strerror) X(curl_multi_init) X(curl_multi_setopt) X(curl_multi_add_handle)           \
    X(curl_multi_remove_handle) X(curl_multi_perform) X(curl_multi_poll) X(curl_multi_info_read)     \
    X(curl_multi_cleanup) X(curl_slist_append) X(curl_slist_free_all)
#define CRYPTO_FUNCTIONS(X) X(EVP_Digest) X(EVP_sha256) X(HMAC)

/// The functions used, each field named as the headers name the function.
static struct { CURL_FUNCTIONS(TC_LIBRARY_FIELD) } lib;
static struct { CRYPTO_FUNCTIONS(TC_LIBRARY_FIELD) } crypto;
static const char *const curl_names[] = {CURL_FUNCTIONS(TC_LIBRARY_NAME)};
static const char *const crypto_names[] = {CRYPTO_FUNCTIONS(TC_LIBRARY_NAME)};
static tc_library curl_library = TC_LIBRARY("libcurl", "libcurl.so.4", "libcurl4", curl_names, lib);
static tc_library crypto_library = TC_LIBRARY("libcrypto", "libcrypto.so.3", "libssl3", crypto_names, crypto);
static pthread_once_t global_once = PTHREAD_ONCE_INIT;

static void global_init(void) { lib.curl_global_init(CURL_GLOBAL_DEFAULT); }

const char *tc_http_load(void) {
    const char *unloaded = tc_library_load(&curl_library);
    if (!unloaded) unloaded = tc_library_load(&crypto_library);
    if (!unloaded) pthread_once(&global_once, global_init);
    return unloaded;
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
    for (int i = 0; i < c->idle_count; i++) lib.curl_multi_cleanup(c->idle[i]);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static CURLM *take_multi(tc_http_client *c) {
    CURLM *m = NULL;
    pthread_mutex_lock(&c->lock);
    if (c->idle_count > 0) m = c->idle[--c->idle_count];
    pthread_mutex_unlock(&c->lock);
    if (m) return m;
    m = lib.curl_multi_init();
    if (!m) return NULL;
    lib.curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, c->max_connections);
    lib.curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, c->max_connections);
    return m;
}

static void give_back(tc_http_client *c, CURLM *m) {
    pthread_mutex_lock(&c->lock);
    if (c->idle_count < TC_POOL_MAX) {
        c->idle[c->idle_count++] = m;
        m = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    if (m) lib.curl_multi_cleanup(m);
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
        CURL *e = lib.curl_easy_init();
        easy[i] = e;
        if (!e) {
            responses[i].transport_error = CURLE_OUT_OF_MEMORY;
            snprintf(responses[i].error, sizeof responses[i].error, "out of memory");
            continue;
        }
        lib.curl_easy_setopt(e, CURLOPT_URL, q->url);
        lib.curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for timeouts
        lib.curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
        lib.curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, q->timeout_ms);
        lib.curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
        lib.curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
        lib.curl_easy_setopt(e, CURLOPT_WRITEDATA, &transfers[i]);
        lib.curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
        lib.curl_easy_setopt(e, CURLOPT_HEADERDATA, &transfers[i]);
        lib.curl_easy_setopt(e, CURLOPT_ERRORBUFFER, responses[i].error);
        lib.curl_easy_setopt(e, CURLOPT_PRIVATE, (void *)(uintptr_t)i);
        if (strcmp(q->method, "HEAD") == 0) {
            lib.curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
        } else if (strcmp(q->method, "GET") != 0) {
            lib.curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, q->method);
            if (q->body || strcmp(q->method, "PUT") == 0 || strcmp(q->method, "POST") == 0) {
                lib.curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)q->body_length);
                lib.curl_easy_setopt(e, CURLOPT_POSTFIELDS, q->body ? (const char *)q->body : "");
            }
        }
        struct curl_slist *list = NULL;
        for (size_t h = 0; h < q->header_count; h++) list = lib.curl_slist_append(list, q->headers[h]);
        // The body is signed and sent at once: no "Expect: 100-continue" round trip, and no
        // default form content type beside the one signed.
        list = lib.curl_slist_append(list, "Expect:");
        list = lib.curl_slist_append(list, "Accept:");
        lists[i] = list;
        lib.curl_easy_setopt(e, CURLOPT_HTTPHEADER, list);
        lib.curl_multi_add_handle(m, e);
    }
    int running = 0;
    int failed = 0;
    do {
        CURLMcode mc = lib.curl_multi_perform(m, &running);
        if (mc != CURLM_OK) { failed = 1; break; }
        if (running) lib.curl_multi_poll(m, NULL, 0, 1000, NULL);
    } while (running);
    CURLMsg *msg;
    int left;
    while ((msg = lib.curl_multi_info_read(m, &left))) {
        if (msg->msg != CURLMSG_DONE) continue;
        void *private = NULL;
        lib.curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &private);
        size_t i = (size_t)(uintptr_t)private;
        tc_http_response *r = &responses[i];
        CURLcode code = msg->data.result;
        if (code == CURLE_OK) {
            lib.curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &r->status);
        } else {
            r->status = 0;
            r->transport_error = (int)code;
            r->connect_failed = code == CURLE_COULDNT_CONNECT || code == CURLE_COULDNT_RESOLVE_HOST ||
                                (code == CURLE_OPERATION_TIMEDOUT && r->headers_length == 0 && r->body_length == 0);
            if (transfers[i].too_large) snprintf(r->error, sizeof r->error, "response larger than %zu bytes", max_body);
            else if (r->error[0] == 0) snprintf(r->error, sizeof r->error, "%s", lib.curl_easy_strerror(code));
        }
    }
    for (size_t i = 0; i < count; i++) {
        if (easy[i]) {
            lib.curl_multi_remove_handle(m, easy[i]);
            lib.curl_easy_cleanup(easy[i]);
        }
        lib.curl_slist_free_all(lists[i]);
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
    return crypto.EVP_Digest(data, length, out, &n, crypto.EVP_sha256(), NULL) == 1 ? 0 : -1;
}

int tc_hmac_sha256(const void *key, size_t key_length, const void *data, size_t length, uint8_t out[32]) {
    if (tc_http_load()) return -1;
    unsigned int n = 32;
    return crypto.HMAC(crypto.EVP_sha256(), key, (int)key_length, data, length, out, &n) ? 0 : -1;
}
