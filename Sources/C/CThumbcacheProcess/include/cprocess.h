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

// How many threads this process has (/proc/self/stat), or -1 if it cannot be read: a fork is
// safe to go on in only where the answer is 1.
#include <sys/types.h>
int tc_thread_count(void);

// fork(2) for a worker run by this very program: in the child, `channel` on descriptor 3,
// `errors` on 2, /dev/null on 0 and 1, every signal at its default and none blocked, as a
// spawned worker starts, and no shared mapping of the parent's (a store's LMDB map and lock
// table); `filter`, unless -1, on 4 (where the parent sends the child's prepared system-call
// filter); returns 0 there, the child's pid in the parent, -1 (errno set) on failure.
pid_t tc_fork_worker(int channel, int errors, int filter);

// pthread_create for a thread that works beside the caller for a short while (a decode's
// second half, its downscaling): it runs off the caller's CPU, where there is another (Linux put
// a new thread on its creator's CPU, where the two took turns while another CPU stood idle).
#include <pthread.h>
int tc_start_thread_beside(pthread_t *thread, void *(*run)(void *), void *argument);

// In a child of tc_fork_worker, once its libraries are loaded: it may run on every CPU its
// parent may (it started on the others only, so that the two start side by side).
void tc_worker_started(void);

#endif
