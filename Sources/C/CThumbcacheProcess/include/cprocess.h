#ifndef CTHUMBCACHE_PROCESS_H
#define CTHUMBCACHE_PROCESS_H

// This process (every thread, and the workers it starts, which inherit both) at idle CPU priority (nice 19)
// and in the idle I/O class, so background indexing yields to everything a user does. The I/O
// class needs ioprio_set, which has no libc wrapper: Swift cannot call the variadic syscall().
// Returns 0, or the errno of the first call that failed.
int tc_process_be_idle(void);

// Spawn attributes under which a child starts with every signal at its default disposition and
// none blocked: a parent's ignored SIGPIPE or blocked SIGTERM must not carry over to programs
// that expect the defaults. Initialises `attributes`; the caller destroys it.
#include <spawn.h>
int tc_spawnattr_init_default_signals(posix_spawnattr_t *attributes);

#endif
