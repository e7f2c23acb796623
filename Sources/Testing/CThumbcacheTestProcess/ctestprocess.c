#define _GNU_SOURCE
#include "ctestprocess.h"
#include "cprocess.h"
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

static int cpus_of(pid_t pid) {
    cpu_set_t set;
    return sched_getaffinity(pid, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
}

int ctest_forked_worker_cpus(int *parent, int *child_at_start, int *child_started) {
    int go[2], report[2];
    if (pipe(go) != 0) return -1;
    if (pipe(report) != 0) { close(go[0]); close(go[1]); return -1; }
    *parent = cpus_of(0);
    pid_t pid = tc_fork_worker(go[0], report[1], -1);
    if (pid == 0) {
        // The child's channel (3) is the go pipe, its standard error (2) the report's.
        char byte;
        if (read(3, &byte, 1) != 1) _exit(1);
        tc_worker_started();
        unsigned char count = (unsigned char)cpus_of(0);
        _exit(write(2, &count, 1) == 1 ? 0 : 1);
    }
    close(go[0]);
    close(report[1]);
    int failed = pid < 0;
    *child_at_start = failed ? -1 : cpus_of(pid);
    unsigned char count = 0;
    if (!failed && (write(go[1], "g", 1) != 1 || read(report[0], &count, 1) != 1)) failed = 1;
    *child_started = failed ? -1 : count;
    close(go[1]);
    close(report[0]);
    if (pid > 0) waitpid(pid, NULL, 0);
    return failed ? -1 : 0;
}

static void *report_cpus(void *count) {
    *(int *)count = cpus_of(0);
    return NULL;
}

int ctest_thread_beside_cpus(int *creator, int *thread) {
    *creator = cpus_of(0);
    pthread_t started;
    if (tc_start_thread_beside(&started, report_cpus, thread) != 0) return -1;
    return pthread_join(started, NULL) == 0 ? 0 : -1;
}
