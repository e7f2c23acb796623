#define _GNU_SOURCE
#include "cearly.h"
#include "cpdf.h"
#include "cprocess.h"
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int is_worker;
static int forked;
static cearly_worker parent_ends;

int cearly_is_worker(void) { return is_worker; }

int cearly_take(cearly_worker *worker) {
    if (!forked) return 0;
    forked = 0;
    *worker = parent_ends;
    return 1;
}

// The one file a `get` names, if its options are those of get's quick call (GetCommand.quickCall
// reads them again and decides; this only guesses whether a worker will be wanted).
static const char *single_file(int argc, char **argv) {
    static const char *valued[] = {"-o", "--output", "-s", "--size", "--scale", "--kind", "--page", "--cache"};
    const char *file = NULL;
    for (int i = 2; i < argc; i++) {
        const char *argument = argv[i];
        int takes_value = 0;
        for (size_t k = 0; k < sizeof valued / sizeof valued[0]; k++) takes_value |= strcmp(argument, valued[k]) == 0;
        if (takes_value) { i++; continue; }
        if (strcmp(argument, "--json") == 0 || strcmp(argument, "--no-daemon") == 0) continue;
        if (argument[0] == '-' || file) return NULL;
        file = argument;
    }
    return file;
}

static int starts_as_pdf(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return 0;
    char head[5];
    ssize_t n = pread(fd, head, sizeof head, 0);
    close(fd);
    return n == (ssize_t)sizeof head && memcmp(head, "%PDF-", sizeof head) == 0;
}

// `fd` moved above the descriptors the child's are put on (0 to 4), where the parent's can
// be closed in the child without closing those; -1 where it cannot be.
static int above_child_descriptors(int fd) {
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 10);
    close(fd);
    return moved;
}

static void close_all(const int *fds, int count) {
    for (int i = 0; i < count; i++) if (fds[i] >= 0) close(fds[i]);
}

// Before the executable's other constructors (the Swift runtime's), while the process has one
// thread. Any failure leaves nothing behind: the worker is then forked when needed, as without this.
__attribute__((constructor(101))) static void cearly_start(int argc, char **argv, char **envp) {
    (void)envp;
    if (argc < 4 || !argv || strcmp(argv[1], "get") != 0 || getenv("THUMBCACHE_REMOTE")) return;
    const char *file = single_file(argc, argv);
    if (!file || !starts_as_pdf(file)) return;
    // The channel's two ends, standard error's and the arguments' pipes' (read, write).
    int fds[6] = {-1, -1, -1, -1, -1, -1};
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0 || pipe2(fds + 2, O_CLOEXEC) != 0
        || pipe2(fds + 4, O_CLOEXEC) != 0) { close_all(fds, 6); return; }
    for (int i = 0; i < 6; i++) {
        if ((fds[i] = above_child_descriptors(fds[i])) < 0) { close_all(fds, 6); return; }
    }
    int pair[2] = {fds[0], fds[1]}, errors[2] = {fds[2], fds[3]}, arguments[2] = {fds[4], fds[5]};
    pid_t pid = tc_fork_worker(pair[1], errors[1], arguments[0]);
    if (pid == 0) {
        // The parent's ends: holding the arguments' write end, the child would never see the
        // parent go without it.
        close(pair[0]); close(errors[0]); close(arguments[1]);
        is_worker = 1;
        cpdf_load(NULL, 0);
        return;
    }
    close(pair[1]); close(errors[1]); close(arguments[0]);
    if (pid < 0) { close(pair[0]); close(errors[0]); close(arguments[1]); return; }
    parent_ends = (cearly_worker){.pid = pid, .channel = pair[0], .errors = errors[0], .arguments = arguments[1]};
    forked = 1;
}
