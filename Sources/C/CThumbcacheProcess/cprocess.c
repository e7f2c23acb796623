#define _GNU_SOURCE
#include "cprocess.h"

#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

int tc_thread_count(void) {
    int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char text[1024];
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0) return -1;
    text[n] = 0;
    // The command's name may hold spaces and parentheses: the fields start after the last ')'.
    char *p = strrchr(text, ')');
    if (!p) return -1;
    // Field 20, num_threads, is the 18th after the name.
    for (int field = 0; field < 18; field++) {
        p = strchr(p + 1, ' ');
        if (!p) return -1;
    }
    return atoi(p + 1);
}

// Unmaps every shared mapping this process has (a forked child's, inherited): a cache's LMDB
// map and its lock table, which a writable shared page would let a decoder corrupt. Reads
// /proc/self/maps again only after a full batch. 0, or -1 where it cannot read it.
static int unmap_shared(void) {
    for (int round = 0; round < 64; round++) {
        int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
        if (fd < 0) return -1;
        unsigned long starts[32], ends[32];
        int found = 0;
        char text[8192];
        size_t held = 0;
        for (;;) {
            ssize_t n = read(fd, text + held, sizeof text - 1 - held);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            held += (size_t)n;
            text[held] = 0;
            char *line = text, *end;
            while ((end = strchr(line, '\n')) != NULL) {
                // "start-end perms offset device inode path": the fourth letter of perms is 's' or 'p'.
                char *cursor;
                unsigned long start = strtoul(line, &cursor, 16), stop = 0;
                if (*cursor == '-') stop = strtoul(cursor + 1, &cursor, 16);
                if (*cursor == ' ' && cursor + 4 < end && cursor[4] == 's' && found < 32) {
                    starts[found] = start;
                    ends[found++] = stop;
                }
                line = end + 1;
            }
            // A partial line stays for the next read; a line longer than the buffer is dropped.
            held = (size_t)(text + held - line);
            if (held == sizeof text - 1) held = 0;
            memmove(text, line, held);
        }
        close(fd);
        for (int i = 0; i < found; i++) munmap((void *)starts[i], ends[i] - starts[i]);
        // A read that found room for every shared mapping saw them all.
        if (found < 32) return 0;
    }
    return -1;
}

// The CPUs this process may run on, and the one it forked on: Linux puts a new child on its
// parent's CPU, where a worker loading its libraries and the parent going on took turns on one
// CPU while the other stood idle (Docs/PERFORMANCE.md).
static cpu_set_t allowed;
static int forked_on = -1;

// `set` less `cpu`: 1 where that leaves another CPU, else 0 (`set` unchanged).
static int without(cpu_set_t *set, int cpu) {
    if (cpu < 0 || CPU_COUNT(set) < 2 || !CPU_ISSET(cpu, set)) return 0;
    CPU_CLR(cpu, set);
    return 1;
}

// The calling thread kept off `cpu`, where it may use another.
static void move_off(int cpu) {
    cpu_set_t others;
    if (sched_getaffinity(0, sizeof others, &others) == 0 && without(&others, cpu)) sched_setaffinity(0, sizeof others, &others);
}

typedef struct {
    void *(*run)(void *);
    void *argument;
    int cpu;
} beside_start;

static void *run_beside(void *start) {
    beside_start s = *(beside_start *)start;
    free(start);
    move_off(s.cpu);
    return s.run(s.argument);
}

int tc_start_thread_beside(pthread_t *thread, void *(*run)(void *), void *argument) {
    beside_start *start = malloc(sizeof *start);
    if (!start) return pthread_create(thread, NULL, run, argument);
    *start = (beside_start){.run = run, .argument = argument, .cpu = sched_getcpu()};
    int rc = pthread_create(thread, NULL, run_beside, start);
    if (rc != 0) {
        free(start);
        return rc;
    }
    // The new thread moves itself (a confined worker may set its own threads' CPUs only); where
    // Linux put it on this CPU, this lets it run now, not at the next tick.
    sched_yield();
    return 0;
}

void tc_worker_started(void) {
    if (forked_on >= 0) sched_setaffinity(0, sizeof allowed, &allowed);
    forked_on = -1;
}

pid_t tc_fork_worker(int channel, int errors, int filter) {
    forked_on = sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? sched_getcpu() : -1;
    // The CPUs the child may use until it has started: those allowed but the parent's.
    cpu_set_t others = allowed;
    int apart = forked_on >= 0 && without(&others, forked_on);
    pid_t pid = fork();
    // Both move the child: whichever of the two runs first on their shared CPU.
    if (pid >= 0 && apart) sched_setaffinity(pid > 0 ? pid : 0, sizeof others, &others);
    if (pid != 0) return pid;
    if (unmap_shared() != 0) _exit(127);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(errors, 2) < 0 || dup2(channel, 3) < 0) _exit(127);
    if (filter >= 0 && dup2(filter, 4) < 0) _exit(127);
    if (null > 3) close(null);
    struct sigaction action = {0};
    action.sa_handler = SIG_DFL;
    for (int signal = 1; signal < NSIG; signal++) sigaction(signal, &action, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    return 0;
}
