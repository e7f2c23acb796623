#ifndef CSANDBOX_H
#define CSANDBOX_H
// Confines a thumbcache worker process before it reads a byte of a file (Docs/SECURITY.md):
// no new privileges, resource limits, private user/mount/IPC namespaces where the kernel
// lets an unprivileged process have them, a Landlock rule set that lets it read fonts and the
// system's libraries and nothing else of the file system, and a seccomp allow-list (libseccomp).
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t address_space;   // RLIMIT_AS in bytes (0: leave as it is)
    uint64_t cpu_seconds;     // RLIMIT_CPU, a backstop behind the parent's wall-clock limit (0: leave)
    int channel;              // the socket to the parent: the only descriptor kept besides 0, 1, 2
    void (*load_libraries)(void);  // loads what the decoders load on first use; called when
                                   // Landlock cannot let them be read later (NULL: nothing)
    int without_landlock;     // 1: confine as where the kernel has no Landlock (stricter: no open at all)
    int prepared_filter;      // channel + 1 where a forked worker's parent sends its filter
                              // (csandbox_send_filter); -1: the worker builds its own
} csandbox_limits;

// Layers, as a bit set in csandbox_confine's result.
enum {
    CSANDBOX_NO_NEW_PRIVS = 1,
    CSANDBOX_RLIMITS = 2,
    CSANDBOX_USER_NAMESPACE = 4,
    CSANDBOX_MOUNT_NAMESPACE = 16,
    CSANDBOX_SECCOMP = 32,
    CSANDBOX_DESCRIPTORS_CLOSED = 64,
    CSANDBOX_LANDLOCK = 128,
    CSANDBOX_FILTER_PREPARED = 256,  // the seccomp filter came built from the parent (a forked worker)
};

/// Applies every layer it can to the calling process, which must be single-threaded. Namespaces
/// are skipped where the kernel refuses them (containers); the other layers are required.
/// Returns the layers applied, or -1 with a message in `message` when a required one failed.
int csandbox_confine(const csandbox_limits *limits, char *message, size_t message_size);

/// Builds the system-call filter of the forked worker `worker` (its own pid is in it: it may
/// signal itself only) and writes it to `fd`, for csandbox_confine to load instead of building
/// it: the parent builds it while the child loads its libraries. 0, or -errno.
#include <sys/types.h>
int csandbox_send_filter(pid_t worker, int without_landlock, int fd);

/// Whether a worker will be confined with Landlock (the filter then lets it open files to read).
int csandbox_landlock_expected(int without_landlock);

#endif
