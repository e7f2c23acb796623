#ifndef CBUS_H
#define CBUS_H
// thumbcache's shim over sd-bus (libsystemd) for the freedesktop thumbnail service: it owns the
// bus, the object vtables of org.freedesktop.thumbnails.Thumbnailer1 and .Cache1, the message
// (un)marshalling and the loop, and calls Swift with plain C strings and numbers. sd-bus is not
// thread-safe: every call here runs on the thread inside cbus_run (or before it, cbus_open).
#include <stddef.h>
#include <stdint.h>

typedef struct cbus cbus;

/// What the service answers; each gets the context given to cbus_open.
typedef struct {
    /// Queue: returns a handle > 0, or 0 with `error` (a D-Bus error name's last part) and `message` set.
    uint32_t (*queue)(void *context, const char *const *uris, size_t uri_count, const char *const *mime_types,
                      size_t mime_count, const char *flavor, const char *scheduler, uint32_t dequeue,
                      char *error, size_t error_size, char *message, size_t message_size);
    void (*dequeue)(void *context, uint32_t handle);
    /// Cache1: kind 0 move, 1 copy (from → to), 2 delete (from only), 3 cleanup (from = base URIs, since).
    void (*cache)(void *context, int kind, const char *const *from, size_t from_count, const char *const *to,
                  size_t to_count, uint32_t since);
    /// Called on the loop's thread when wake_fd became readable: emit what is pending with cbus_emit_*.
    void (*drain)(void *context);
    /// Called at least every second; returns nonzero to end cbus_run.
    int (*tick)(void *context);
} cbus_handlers;

/// Connects to `address` (NULL: the session bus), exports both interfaces and takes their names.
/// `supported_*` are what GetSupported returns (copied). `wake_fd` (an eventfd the caller owns)
/// made readable from any thread makes `drain` run. On failure returns NULL with a message.
cbus *cbus_open(const char *address, const cbus_handlers *handlers, void *context, const char *const *schemes,
                size_t scheme_count, const char *const *mime_types, size_t mime_count, int replace, int wake_fd,
                char *message, size_t message_size);

/// Serves until `tick` says to stop or the connection ends; returns 0, or a negative errno.
int cbus_run(cbus *bus);

int cbus_emit_started(cbus *bus, uint32_t handle);
int cbus_emit_finished(cbus *bus, uint32_t handle);
int cbus_emit_ready(cbus *bus, uint32_t handle, const char *const *uris, size_t count);
int cbus_emit_error(cbus *bus, uint32_t handle, const char *const *uris, size_t count, int32_t code, const char *message);

void cbus_close(cbus *bus);

/// A new eventfd for cbus_open's `wake_fd` (close it after cbus_close), or -1 with errno set.
int cbus_new_wake_fd(void);

/// Makes SIGTERM and SIGINT end cbus_run (through `wake_fd`) instead of the process, so that
/// what is pending is flushed; unblocks them in the calling thread.
void cbus_stop_on_signals(int wake_fd);

/// Makes `wake_fd` readable: async-signal- and thread-safe.
void cbus_wake(int wake_fd);

#endif
