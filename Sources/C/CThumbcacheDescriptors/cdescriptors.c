#define _GNU_SOURCE
#include "cdescriptors.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

int cdesc_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC); }

int cdesc_memfd(const char *name) { return memfd_create(name, MFD_CLOEXEC); }

int cdesc_accept(int socket) { return accept4(socket, NULL, NULL, SOCK_CLOEXEC); }

int cdesc_peer_uid(int socket, uid_t *uid) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    *uid = credentials.uid;
    return 0;
}

ssize_t cdesc_send(int socket, const void *bytes, size_t length, int fd) {
    struct iovec iov = {.iov_base = (void *)bytes, .iov_len = length};
    union {
        char buffer[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        memset(&control, 0, sizeof control);
        msg.msg_control = control.buffer;
        msg.msg_controllen = sizeof control.buffer;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    ssize_t n;
    do { n = sendmsg(socket, &msg, MSG_NOSIGNAL); } while (n < 0 && errno == EINTR);
    return n;
}

ssize_t cdesc_receive(int socket, void *bytes, size_t capacity, int *fd) {
    struct iovec iov = {.iov_base = bytes, .iov_len = capacity};
    union {
        char buffer[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buffer, .msg_controllen = sizeof control.buffer};
    *fd = -1;
    ssize_t n;
    do { n = recvmsg(socket, &msg, MSG_CMSG_CLOEXEC); } while (n < 0 && errno == EINTR);
    if (n < 0) return n;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len >= CMSG_LEN(sizeof(int))) {
            // Keep the first; close any extra a confused peer sent, so none leak.
            size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < count; i++) {
                int received;
                memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                if (*fd < 0) *fd = received; else close(received);
            }
        }
    }
    return n;
}

int cdesc_accept_nonblocking(int socket) { return accept4(socket, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK); }
