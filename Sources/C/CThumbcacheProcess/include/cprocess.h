#ifndef CTHUMBCACHE_PROCESS_H
#define CTHUMBCACHE_PROCESS_H

// This process (every thread, and the workers it starts, which inherit both) at idle CPU priority (nice 19)
// and in the idle I/O class, so background indexing yields to everything a user does. The I/O
// class needs ioprio_set, which has no libc wrapper: Swift cannot call the variadic syscall().
// Returns 0, or the errno of the first call that failed.
int tc_process_be_idle(void);

#endif
