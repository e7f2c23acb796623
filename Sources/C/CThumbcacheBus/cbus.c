#include "cbus.h"

#include "tc_libraries.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

// libsystemd is loaded with dlopen when a bus is first opened, not linked: linking it put it and
// the five libraries it needs (libgcrypt, liblzma, liblz4, libcap, libgpg-error) into every start of
// every thumbcache process, a cache hit's included, and only the thumbnail service needs it.
#define SD_FUNCTIONS(X) \
    X(sd_bus_add_object_vtable) X(sd_bus_close_unref) X(sd_bus_emit_signal) \
    X(sd_bus_error_set) X(sd_bus_flush) X(sd_bus_get_events) \
    X(sd_bus_get_fd) X(sd_bus_get_timeout) X(sd_bus_message_append) \
    X(sd_bus_message_append_strv) X(sd_bus_message_new_method_return) X(sd_bus_message_new_signal) \
    X(sd_bus_message_read) X(sd_bus_message_read_strv) X(sd_bus_message_unref) \
    X(sd_bus_new) X(sd_bus_open_user) X(sd_bus_process) \
    X(sd_bus_reply_method_errorf) X(sd_bus_reply_method_return) X(sd_bus_request_name) \
    X(sd_bus_send) X(sd_bus_set_address) X(sd_bus_set_bus_client) \
    X(sd_bus_slot_unref) X(sd_bus_start)

/// The functions used, each field named as the headers name the function; and the vtables'
/// format, a variable of libsystemd's.
static struct { SD_FUNCTIONS(TC_LIBRARY_FIELD) TC_LIBRARY_FIELD(sd_bus_object_vtable_format) } lib;
static const char *const names[] = {SD_FUNCTIONS(TC_LIBRARY_NAME) "sd_bus_object_vtable_format"};
static tc_library library = TC_LIBRARY("libsystemd", "libsystemd.so.0", "libsystemd0", names, lib);
static pthread_once_t patched = PTHREAD_ONCE_INIT;
#pragma weak sd_bus_object_vtable_format

#define THUMBNAILER_PATH "/org/freedesktop/thumbnails/Thumbnailer1"
#define THUMBNAILER_INTERFACE "org.freedesktop.thumbnails.Thumbnailer1"
#define CACHE_PATH "/org/freedesktop/thumbnails/Cache1"
#define CACHE_INTERFACE "org.freedesktop.thumbnails.Cache1"

struct cbus {
    sd_bus *bus;
    sd_bus_slot *slots[2];
    int wake_fd;
    cbus_handlers handlers;
    void *context;
    char **schemes;
    char **mime_types;
};

static size_t count_of(char **list) {
    size_t n = 0;
    while (list && list[n]) n++;
    return n;
}

static void free_strv(char **list) {
    for (size_t i = 0; list && list[i]; i++) free(list[i]);
    free(list);
}

static char **copy_strv(const char *const *list, size_t count) {
    char **out = calloc(count + 1, sizeof *out);
    if (!out) return NULL;
    for (size_t i = 0; i < count; i++) {
        out[i] = strdup(list[i]);
        if (!out[i]) {
            free_strv(out);
            return NULL;
        }
    }
    return out;
}

// MARK: Thumbnailer1

static int method_queue(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    cbus *b = userdata;
    char **uris = NULL, **mimes = NULL;
    const char *flavor = NULL, *scheduler = NULL;
    uint32_t dequeue = 0;
    int r = lib.sd_bus_message_read_strv(m, &uris);
    if (r >= 0) r = lib.sd_bus_message_read_strv(m, &mimes);
    if (r >= 0) r = lib.sd_bus_message_read(m, "ssu", &flavor, &scheduler, &dequeue);
    if (r < 0) {
        free_strv(uris);
        free_strv(mimes);
        return r;
    }
    char name[128] = "", message[512] = "";
    uint32_t handle = b->handlers.queue(b->context, (const char *const *)uris, count_of(uris), (const char *const *)mimes,
                                        count_of(mimes), flavor, scheduler, dequeue, name, sizeof name, message, sizeof message);
    free_strv(uris);
    free_strv(mimes);
    if (handle == 0) {
        char full[192];
        snprintf(full, sizeof full, THUMBNAILER_INTERFACE ".Error.%s", name[0] ? name : "Failed");
        return lib.sd_bus_error_set(error, full, message);
    }
    return lib.sd_bus_reply_method_return(m, "u", handle);
}

static int method_dequeue(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    cbus *b = userdata;
    uint32_t handle = 0;
    int r = lib.sd_bus_message_read(m, "u", &handle);
    if (r < 0) return r;
    b->handlers.dequeue(b->context, handle);
    return lib.sd_bus_reply_method_return(m, "");
}

static int reply_strv(sd_bus_message *m, char **list) {
    sd_bus_message *reply = NULL;
    int r = lib.sd_bus_message_new_method_return(m, &reply);
    if (r >= 0) r = lib.sd_bus_message_append_strv(reply, list);
    if (r >= 0) r = lib.sd_bus_send(NULL, reply, NULL);
    lib.sd_bus_message_unref(reply);
    return r;
}

static int method_get_supported(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)error;
    cbus *b = userdata;
    sd_bus_message *reply = NULL;
    int r = lib.sd_bus_message_new_method_return(m, &reply);
    if (r >= 0) r = lib.sd_bus_message_append_strv(reply, b->schemes);
    if (r >= 0) r = lib.sd_bus_message_append_strv(reply, b->mime_types);
    if (r >= 0) r = lib.sd_bus_send(NULL, reply, NULL);
    lib.sd_bus_message_unref(reply);
    return r;
}

static int method_get_schedulers(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)userdata;
    (void)error;
    char *list[] = {"default", "foreground", "background", NULL};
    return reply_strv(m, list);
}

static int method_get_flavors(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)userdata;
    (void)error;
    char *list[] = {"normal", "large", "x-large", "xx-large", NULL};
    return reply_strv(m, list);
}

static sd_bus_vtable thumbnailer_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Queue", "asasssu", "u", method_queue, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Dequeue", "u", "", method_dequeue, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("GetSupported", "", "asas", method_get_supported, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("GetSchedulers", "", "as", method_get_schedulers, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("GetFlavors", "", "as", method_get_flavors, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL("Started", "u", 0),
    SD_BUS_SIGNAL("Finished", "u", 0),
    SD_BUS_SIGNAL("Ready", "uas", 0),
    SD_BUS_SIGNAL("Error", "uasis", 0),
    SD_BUS_VTABLE_END,
};

// MARK: Cache1

static int cache_call(sd_bus_message *m, cbus *b, int kind, int has_to, int has_since) {
    char **from = NULL, **to = NULL;
    uint32_t since = 0;
    int r = lib.sd_bus_message_read_strv(m, &from);
    if (r >= 0 && has_to) r = lib.sd_bus_message_read_strv(m, &to);
    if (r >= 0 && has_since) r = lib.sd_bus_message_read(m, "u", &since);
    if (r >= 0) {
        if (has_to && count_of(from) != count_of(to)) {
            r = lib.sd_bus_reply_method_errorf(m, CACHE_INTERFACE ".Error.InvalidArguments", "%zu source URIs for %zu destinations",
                                           count_of(from), count_of(to));
        } else {
            b->handlers.cache(b->context, kind, (const char *const *)from, count_of(from), (const char *const *)to, count_of(to), since);
            r = lib.sd_bus_reply_method_return(m, "");
        }
    }
    free_strv(from);
    free_strv(to);
    return r;
}

static int method_move(sd_bus_message *m, void *userdata, sd_bus_error *e) { (void)e; return cache_call(m, userdata, 0, 1, 0); }
static int method_copy(sd_bus_message *m, void *userdata, sd_bus_error *e) { (void)e; return cache_call(m, userdata, 1, 1, 0); }
static int method_delete(sd_bus_message *m, void *userdata, sd_bus_error *e) { (void)e; return cache_call(m, userdata, 2, 0, 0); }
static int method_cleanup(sd_bus_message *m, void *userdata, sd_bus_error *e) { (void)e; return cache_call(m, userdata, 3, 0, 1); }

static sd_bus_vtable cache_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Move", "asas", "", method_move, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Copy", "asas", "", method_copy, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Delete", "as", "", method_delete, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Cleanup", "asu", "", method_cleanup, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_VTABLE_END,
};

// MARK: Life

// Set by SIGTERM or SIGINT (cbus_stop_on_signals): the loop ends after what it is doing.
static volatile sig_atomic_t stop_requested;
static int signal_wake_fd = -1;

static void on_stop_signal(int sig) {
    (void)sig;
    stop_requested = 1;
    if (signal_wake_fd >= 0) {
        uint64_t one = 1;
        ssize_t n = write(signal_wake_fd, &one, sizeof one);
        (void)n;
    }
}

void cbus_stop_on_signals(int wake_fd) {
    signal_wake_fd = wake_fd;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    // A parent may have left them blocked (posix_spawn passes its thread's mask on).
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

// The vtables refer to libsystemd's format as its headers have them do: set once it is loaded.
static void patch_vtables(void) {
    thumbnailer_vtable[0].x.start.vtable_format_reference = lib.sd_bus_object_vtable_format;
    cache_vtable[0].x.start.vtable_format_reference = lib.sd_bus_object_vtable_format;
}

static void set_message(char *message, size_t size, const char *what, int r) {
    if (message && size) snprintf(message, size, "%s: %s", what, strerror(-r));
}

cbus *cbus_open(const char *address, const cbus_handlers *handlers, void *context, const char *const *schemes,
                size_t scheme_count, const char *const *mime_types, size_t mime_count, int replace, int wake_fd,
                char *message, size_t message_size) {
    const char *unloaded = tc_library_load(&library);
    if (unloaded) {
        if (message && message_size) snprintf(message, message_size, "D-Bus: %s", unloaded);
        return NULL;
    }
    pthread_once(&patched, patch_vtables);
    cbus *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->wake_fd = wake_fd;
    b->handlers = *handlers;
    b->context = context;
    b->schemes = copy_strv(schemes, scheme_count);
    b->mime_types = copy_strv(mime_types, mime_count);
    int r;
    if (address) {
        r = lib.sd_bus_new(&b->bus);
        if (r >= 0) r = lib.sd_bus_set_address(b->bus, address);
        if (r >= 0) r = lib.sd_bus_set_bus_client(b->bus, 1);
        if (r >= 0) r = lib.sd_bus_start(b->bus);
    } else {
        r = lib.sd_bus_open_user(&b->bus);
    }
    if (r < 0) {
        set_message(message, message_size, "cannot connect to the session bus", r);
        goto fail;
    }
    r = lib.sd_bus_add_object_vtable(b->bus, &b->slots[0], THUMBNAILER_PATH, THUMBNAILER_INTERFACE, thumbnailer_vtable, b);
    if (r >= 0) r = lib.sd_bus_add_object_vtable(b->bus, &b->slots[1], CACHE_PATH, CACHE_INTERFACE, cache_vtable, b);
    if (r < 0) {
        set_message(message, message_size, "cannot export the interfaces", r);
        goto fail;
    }
    uint64_t flags = replace ? (SD_BUS_NAME_REPLACE_EXISTING | SD_BUS_NAME_ALLOW_REPLACEMENT) : SD_BUS_NAME_ALLOW_REPLACEMENT;
    r = lib.sd_bus_request_name(b->bus, THUMBNAILER_INTERFACE, flags);
    if (r >= 0) r = lib.sd_bus_request_name(b->bus, CACHE_INTERFACE, flags);
    if (r < 0) {
        if (r == -EEXIST) {
            if (replace) {
                // A service started on demand from a D-Bus service file (tumblerd's, as a rule)
                // that does not let its name be taken: --replace cannot help.
                snprintf(message, message_size, "another thumbnailer (tumblerd?) owns " THUMBNAILER_INTERFACE
                         " on this bus and does not let it be replaced; stop it, and keep the bus from starting it again "
                         "(for tumbler: systemctl --user mask --now tumblerd)");
            } else {
                snprintf(message, message_size, "another thumbnailer (tumblerd?) owns " THUMBNAILER_INTERFACE " on this bus; stop it or use --replace");
            }
        } else {
            set_message(message, message_size, "cannot take the bus names", r);
        }
        goto fail;
    }
    return b;
fail:
    cbus_close(b);
    return NULL;
}

int cbus_run(cbus *b) {
    for (;;) {
        int r;
        while ((r = lib.sd_bus_process(b->bus, NULL)) > 0) {}
        if (r < 0) return r;
        if (stop_requested || b->handlers.tick(b->context)) break;
        struct pollfd fds[2] = {{.fd = lib.sd_bus_get_fd(b->bus), .events = (short)lib.sd_bus_get_events(b->bus)},
                                {.fd = b->wake_fd, .events = POLLIN}};
        int timeout = 1000;
        uint64_t until = 0;
        if (lib.sd_bus_get_timeout(b->bus, &until) > 0 && until != UINT64_MAX) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            uint64_t current = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
            uint64_t left = until > current ? (until - current + 999) / 1000 : 0;
            if (left < (uint64_t)timeout) timeout = (int)left;
        }
        if (poll(fds, 2, timeout) < 0 && errno != EINTR) return -errno;
        if (fds[1].revents & POLLIN) {
            uint64_t value;
            while (read(b->wake_fd, &value, sizeof value) > 0) {}
            b->handlers.drain(b->context);
        }
    }
    lib.sd_bus_flush(b->bus);
    return 0;
}

int cbus_emit_started(cbus *b, uint32_t handle) {
    return lib.sd_bus_emit_signal(b->bus, THUMBNAILER_PATH, THUMBNAILER_INTERFACE, "Started", "u", handle);
}

int cbus_emit_finished(cbus *b, uint32_t handle) {
    return lib.sd_bus_emit_signal(b->bus, THUMBNAILER_PATH, THUMBNAILER_INTERFACE, "Finished", "u", handle);
}

static int emit_list(cbus *b, const char *member, uint32_t handle, const char *const *uris, size_t count, int with_error,
                     int32_t code, const char *text) {
    sd_bus_message *m = NULL;
    char **list = copy_strv(uris, count);
    if (!list) return -ENOMEM;
    int r = lib.sd_bus_message_new_signal(b->bus, &m, THUMBNAILER_PATH, THUMBNAILER_INTERFACE, member);
    if (r >= 0) r = lib.sd_bus_message_append(m, "u", handle);
    if (r >= 0) r = lib.sd_bus_message_append_strv(m, list);
    if (r >= 0 && with_error) r = lib.sd_bus_message_append(m, "is", code, text);
    if (r >= 0) r = lib.sd_bus_send(b->bus, m, NULL);
    lib.sd_bus_message_unref(m);
    free_strv(list);
    return r;
}

int cbus_emit_ready(cbus *b, uint32_t handle, const char *const *uris, size_t count) {
    return emit_list(b, "Ready", handle, uris, count, 0, 0, NULL);
}

int cbus_emit_error(cbus *b, uint32_t handle, const char *const *uris, size_t count, int32_t code, const char *message) {
    return emit_list(b, "Error", handle, uris, count, 1, code, message);
}

void cbus_close(cbus *b) {
    if (!b) return;
    for (int i = 0; i < 2; i++) lib.sd_bus_slot_unref(b->slots[i]);
    if (b->bus) {
        lib.sd_bus_flush(b->bus);
        lib.sd_bus_close_unref(b->bus);
    }
    free_strv(b->schemes);
    free_strv(b->mime_types);
    free(b);
}

int cbus_new_wake_fd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }

void cbus_wake(int wake_fd) {
    uint64_t one = 1;
    ssize_t n = write(wake_fd, &one, sizeof one);
    (void)n;  // a counter already set wakes the loop all the same
}
