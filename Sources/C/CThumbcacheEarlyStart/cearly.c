#define _GNU_SOURCE
#include "cearly.h"
#include "cpdf.h"
#include "cprocess.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { IMAGES, DOCUMENTS };
static const char *family_names[] = {"images", "documents"};

static int is_worker;
static int forked;
static cearly_worker record;

int cearly_is_worker(void) { return is_worker; }

cearly_worker cearly_child(void) { return record; }

int cearly_take(cearly_worker *worker) {
    if (!forked) return 0;
    forked = 0;
    *worker = record;
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

// The family and format of a file whose first bytes are a PDF's, a JPEG's or a PNG's; 0 for any
// other (the catalogue, read later, decides about those, and their worker is forked then).
static int format_of(const char *path, int *family, const char **format) {
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) return 0;
    unsigned char head[8];
    ssize_t n = pread(fd, head, sizeof head, 0);
    close(fd);
    if (n >= 5 && memcmp(head, "%PDF-", 5) == 0) {
        *family = DOCUMENTS, *format = "pdf";
    } else if (n >= 3 && head[0] == 0xFF && head[1] == 0xD8 && head[2] == 0xFF) {
        *family = IMAGES, *format = "jpeg";
    } else if (n == 8 && memcmp(head, "\x89PNG\r\n\x1a\n", 8) == 0) {
        *family = IMAGES, *format = "png";
    } else {
        return 0;
    }
    return 1;
}

// The file of a command line that will want a worker forked: `thumbcache get` of one PDF (the
// only family `thumbcache` forks), or the plug-in's call `--size N INPUT OUTPUT`.
static const char *file_wanting_worker(int argc, char **argv, int *family, const char **format) {
    const char *file = NULL;
    int plug_in = argc == 5 && (strcmp(argv[1], "--size") == 0 || strcmp(argv[1], "-s") == 0);
    if (argc >= 4 && strcmp(argv[1], "get") == 0 && !getenv("THUMBCACHE_REMOTE")) file = single_file(argc, argv);
    else if (plug_in && strncmp(argv[3], "file://", 7) != 0) file = argv[3];
    if (!file || !format_of(file, family, format)) return NULL;
    return plug_in || *family == DOCUMENTS ? file : NULL;
}

// The record's family and format, by name.
static void name(cearly_worker *worker, int family, const char *format) {
    snprintf(worker->family, sizeof worker->family, "%s", family_names[family]);
    snprintf(worker->format, sizeof worker->format, "%s", format);
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
    int family = 0;
    const char *format = NULL;
    if (argc < 4 || !argv || !file_wanting_worker(argc, argv, &family, &format)) return;
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
        name(&record, family, format);
        if (family == DOCUMENTS) cpdf_load(NULL, 0);
        return;
    }
    close(pair[1]); close(errors[1]); close(arguments[0]);
    if (pid < 0) { close(pair[0]); close(errors[0]); close(arguments[1]); return; }
    record = (cearly_worker){.pid = pid, .channel = pair[0], .errors = errors[0], .arguments = arguments[1]};
    name(&record, family, format);
    forked = 1;
}
