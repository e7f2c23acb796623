#include "cprocess.h"

#include <dirent.h>
#include <signal.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

// From linux/ioprio.h, which older kernels' headers lack.
enum { who_process = 1, class_idle = 3, class_shift = 13 };

// Linux keeps both priorities per thread: every thread there is now is lowered (threads and
// processes started later inherit from the one that starts them).
int tc_process_be_idle(void) {
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) return errno;
    int failed = 0;
    struct dirent *entry;
    while ((entry = readdir(tasks)) != NULL) {
        int tid = atoi(entry->d_name);
        if (tid <= 0) continue;
        if (setpriority(PRIO_PROCESS, (id_t)tid, 19) != 0 && !failed) failed = errno;
        if (syscall(SYS_ioprio_set, who_process, tid, class_idle << class_shift) != 0 && !failed) failed = errno;
    }
    closedir(tasks);
    return failed;
}

int tc_spawnattr_init_default_signals(posix_spawnattr_t *attributes) {
    int rc = posix_spawnattr_init(attributes);
    if (rc != 0) return rc;
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(attributes, &all);
    posix_spawnattr_setsigmask(attributes, &none);
    return posix_spawnattr_setflags(attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
}
