#ifndef CFILEINFO_H
#define CFILEINFO_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/// getxattr(2) without following a final symbolic link: the value's length, or -1 with errno.
ssize_t cfi_getxattr(const char *path, const char *name, void *buffer, size_t size);

/// setxattr(2): 0, or -1 with errno.
int cfi_setxattr(const char *path, const char *name, const void *value, size_t size);

/// removexattr(2): 0, or -1 with errno.
int cfi_removexattr(const char *path, const char *name);

/// The file's birth time (statx STATX_BTIME) in nanoseconds since 1970: 0 on success, -1 if the
/// file system does not record it or statx fails.
int cfi_birthtime(const char *path, int64_t *nanoseconds);

#endif
