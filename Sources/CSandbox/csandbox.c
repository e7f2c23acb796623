#define _GNU_SOURCE
#include "csandbox.h"
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fail(char *message, size_t size, const char *what, int error) {
    snprintf(message, size, "%s: %s", what, strerror(error));
    return -1;
}

// What a worker may do once confined: compute, use memory, talk to its parent on the channel and
// read the descriptors the parent hands it. Anything not listed kills the process (SIGSYS).
static const int allowed[] = {
    SCMP_SYS(read), SCMP_SYS(pread64), SCMP_SYS(readv), SCMP_SYS(write), SCMP_SYS(writev),
    SCMP_SYS(recvmsg), SCMP_SYS(sendmsg), SCMP_SYS(recvfrom), SCMP_SYS(sendto),
    SCMP_SYS(close), SCMP_SYS(lseek), SCMP_SYS(fstat), SCMP_SYS(newfstatat), SCMP_SYS(statx),
    SCMP_SYS(dup), SCMP_SYS(dup2), SCMP_SYS(dup3), SCMP_SYS(fcntl), SCMP_SYS(poll), SCMP_SYS(ppoll),
    SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(mprotect), SCMP_SYS(brk), SCMP_SYS(madvise),
    SCMP_SYS(futex), SCMP_SYS(sched_yield), SCMP_SYS(nanosleep), SCMP_SYS(clock_nanosleep),
    SCMP_SYS(clock_gettime), SCMP_SYS(gettimeofday), SCMP_SYS(getrandom),
    SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(getuid), SCMP_SYS(geteuid), SCMP_SYS(getgid), SCMP_SYS(getegid),
    SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigaction), SCMP_SYS(sigaltstack),
    SCMP_SYS(restart_syscall), SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(getrlimit),
    // Read-only facts libraries size their buffers and thread pools by (libtiff asks for physical
    // memory, dav1d for the CPUs it may use).
    SCMP_SYS(sysinfo), SCMP_SYS(sched_getaffinity),
    // What a new thread does as it starts (glibc registers its robust futex list and rseq area).
    SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
};

// Refused with an error rather than killed: library code may try these and cope (a decoder that
// tries to open a file or a socket sees EACCES; nothing is created, nothing connects).
static const int refused[] = {
    SCMP_SYS(open), SCMP_SYS(openat), SCMP_SYS(openat2), SCMP_SYS(creat), SCMP_SYS(socket), SCMP_SYS(socketpair),
    SCMP_SYS(fork), SCMP_SYS(vfork),
    // Path probes (fontconfig looks for its configuration when librsvg lays out text).
    SCMP_SYS(access), SCMP_SYS(faccessat), SCMP_SYS(faccessat2), SCMP_SYS(readlink), SCMP_SYS(readlinkat),
};

static int install_seccomp(char *message, size_t size) {
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
    if (!ctx) return fail(message, size, "seccomp_init", ENOMEM);
    int rc = 0;
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0] && rc == 0; i++) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, allowed[i], 0);
    for (size_t i = 0; i < sizeof refused / sizeof refused[0] && rc == 0; i++)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), refused[i], 0);
    // Threads, never processes: HEVC (libde265) and AV1 (dav1d) decoders start worker threads
    // and wait for them. clone is allowed only with CLONE_THREAD (a thread shares this filter,
    // the namespaces and the limits); clone3 passes its flags in memory a filter cannot read, so
    // it answers ENOSYS and glibc falls back to clone.
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    // A thread may name itself (dav1d does); no other prctl.
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
    // Signals to itself only (abort() raises SIGABRT with tgkill, whose first argument is this
    // pid from any of its threads): a worker runs as the user, so the kernel would let it signal
    // the parent. Limits of itself only (pid 0): prlimit64 on another pid would change that process's.
    pid_t self = getpid();
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(kill), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self));
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self));
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tkill), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self));
    if (rc == 0) rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 1, SCMP_A0(SCMP_CMP_EQ, 0));
    if (rc == 0) rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
    if (rc == 0) rc = seccomp_load(ctx);
    seccomp_release(ctx);
    return rc == 0 ? 0 : fail(message, size, "seccomp", -rc);
}

int csandbox_confine(const csandbox_limits *limits, char *message, size_t size) {
    int layers = 0;
    // Only the standard streams and the channel stay open.
    for (int fd = 3; fd < 1024; fd++) if (fd != limits->channel) close(fd);
    layers |= CSANDBOX_DESCRIPTORS_CLOSED;

    // Namespaces first (they need the capabilities a new user namespace grants, which
    // no_new_privs does not take away but seccomp would forbid asking for).
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC) == 0) {
        layers |= CSANDBOX_USER_NAMESPACE | CSANDBOX_NETWORK_NAMESPACE;
        // Nothing mounted here propagates anywhere, and nothing from outside propagates in.
        if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0) layers |= CSANDBOX_MOUNT_NAMESPACE;
    }

    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return fail(message, size, "PR_SET_NO_NEW_PRIVS", errno);
    layers |= CSANDBOX_NO_NEW_PRIVS;
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) return fail(message, size, "RLIMIT_CORE", errno);
    if (setrlimit(RLIMIT_FSIZE, &none) != 0) return fail(message, size, "RLIMIT_FSIZE", errno);
    struct rlimit files = {16, 16};
    if (setrlimit(RLIMIT_NOFILE, &files) != 0) return fail(message, size, "RLIMIT_NOFILE", errno);
    if (limits->address_space) {
        struct rlimit as = {limits->address_space, limits->address_space};
        if (setrlimit(RLIMIT_AS, &as) != 0) return fail(message, size, "RLIMIT_AS", errno);
    }
    if (limits->cpu_seconds) {
        struct rlimit cpu = {limits->cpu_seconds, limits->cpu_seconds};
        if (setrlimit(RLIMIT_CPU, &cpu) != 0) return fail(message, size, "RLIMIT_CPU", errno);
    }
    layers |= CSANDBOX_RLIMITS;

    if (install_seccomp(message, size) != 0) return -1;
    layers |= CSANDBOX_SECCOMP;
    return layers;
}
