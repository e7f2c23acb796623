#ifndef TC_HTTP_H
#define TC_HTTP_H

#include <stddef.h>
#include <stdint.h>

/// A pool of libcurl multi handles whose connections are kept alive between calls. Thread-safe:
/// each call takes a handle of its own from the pool (or makes one) and gives it back.
typedef struct tc_http_client tc_http_client;

typedef struct {
    const char *method;              ///< "GET", "PUT", "HEAD", "DELETE"
    const char *url;
    const char *const *headers;      ///< "Name: value" lines
    size_t header_count;
    const uint8_t *body;             ///< sent as is (PUT); may be NULL
    size_t body_length;
    long timeout_ms;                 ///< the whole request
} tc_http_request;

typedef struct {
    long status;                     ///< HTTP status; 0 when the transport failed
    int transport_error;             ///< 0, or the CURLcode
    int connect_failed;              ///< 1 when no connection could be made (refused, unresolved, timed out connecting)
    char error[256];                 ///< what the transport said
    uint8_t *body;                   ///< malloc'ed; freed by tc_http_response_free
    size_t body_length;
    char *headers;                   ///< the final response's header block, NUL-terminated
    size_t headers_length;
} tc_http_response;

/// Loads libcurl and libcrypto (once); NULL when they are there, else why not.
const char *tc_http_load(void);

/// NULL when libcurl cannot be loaded (tc_http_load says why) or memory is short.
tc_http_client *tc_http_client_create(long connect_timeout_ms, long max_connections);
void tc_http_client_destroy(tc_http_client *client);

/// Performs `count` requests at once on one multi handle (at most the client's connection limit
/// in flight). A response body above `max_body` bytes ends that request with an error.
/// Returns 0, or -1 when the multi interface itself failed (each response says its own fate).
int tc_http_perform(tc_http_client *client, const tc_http_request *requests, tc_http_response *responses,
                    size_t count, size_t max_body);

void tc_http_response_free(tc_http_response *response);

/// 0, or -1 when libcrypto cannot be loaded.
int tc_sha256(const void *data, size_t length, uint8_t out[32]);
int tc_hmac_sha256(const void *key, size_t key_length, const void *data, size_t length, uint8_t out[32]);

#endif
