#ifndef CDESCRIPTORS_H
#define CDESCRIPTORS_H
// Passing file descriptors over a Unix socket (SCM_RIGHTS), whose cmsg macros Swift cannot call,
// and the descriptor calls Swift's Glibc module does not export.
#include <stddef.h>
#include <sys/epoll.h>     // epoll and sendfile, for serve's hit loops (HitFront), which Swift's
#include <sys/sendfile.h>  // Glibc module does not export
#include <sys/types.h>

/// Sends `length` bytes with `fd` attached (none if `fd` < 0), retrying EINTR.
/// Returns the bytes sent, or -1 with errno set.
ssize_t cdesc_send(int socket, const void *bytes, size_t length, int fd);

/// Receives up to `capacity` bytes, retrying EINTR; a descriptor that came with them is stored in
/// `*fd` (close-on-exec), else -1. Returns the bytes received (0 at end of stream), or -1 with errno.
ssize_t cdesc_receive(int socket, void *bytes, size_t capacity, int *fd);

/// The user id of the process at the other end of a connected Unix socket (SO_PEERCRED), or -1
/// with errno.
int cdesc_peer_uid(int socket, uid_t *uid);

/// accept4(socket, NULL, NULL, SOCK_CLOEXEC), which Swift's Glibc module does not export.
int cdesc_accept(int socket);

/// accept4(socket, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK).
int cdesc_accept_nonblocking(int socket);

/// pipe2(fds, O_CLOEXEC), which Swift's Glibc module does not export.
int cdesc_pipe(int fds[2]);

/// memfd_create(name, MFD_CLOEXEC): an anonymous in-memory file, or -1 with errno.
int cdesc_memfd(const char *name);

#endif
