#define _GNU_SOURCE
#include "cfileinfo.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

ssize_t cfi_getxattr(const char *path, const char *name, void *buffer, size_t size) {
    return lgetxattr(path, name, buffer, size);
}

int cfi_setxattr(const char *path, const char *name, const void *value, size_t size) {
    return setxattr(path, name, value, size, 0);
}

int cfi_removexattr(const char *path, const char *name) {
    return removexattr(path, name);
}

int cfi_birthtime(const char *path, int64_t *nanoseconds) {
    struct statx sx;
    if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_BTIME, &sx) != 0) return -1;
    if (!(sx.stx_mask & STATX_BTIME)) return -1;
    *nanoseconds = (int64_t)sx.stx_btime.tv_sec * 1000000000 + sx.stx_btime.tv_nsec;
    return 0;
}
