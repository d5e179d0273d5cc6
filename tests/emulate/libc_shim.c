/* macOS's C library calls the server looks up, carried out by their Linux equivalents
 * (an emulated macOS on a Linux kernel: tests/emulate/sitecustomize.py). Every other
 * symbol is found in glibc, which this library links to. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

/* renameatx_np(2): RENAME_SWAP (0x2) is Linux's RENAME_EXCHANGE, RENAME_EXCL (0x4) its
 * RENAME_NOREPLACE. */
int renameatx_np(int fromfd, const char *from, int tofd, const char *to, unsigned int flags) {
    unsigned int linux_flags = 0;
    if (flags & 0x2)
        linux_flags |= RENAME_EXCHANGE;
    if (flags & 0x4)
        linux_flags |= RENAME_NOREPLACE;
    if (flags & ~0x6u) {
        errno = EINVAL;
        return -1;
    }
    return renameat2(fromfd, from, tofd, to, linux_flags);
}

/* fcopyfile(3) with COPYFILE_ACL | COPYFILE_XATTR: nothing to copy that this emulation
 * could stand for; the server takes it as best effort. */
int fcopyfile(int from, int to, void *state, unsigned int flags) {
    (void)from;
    (void)to;
    (void)state;
    (void)flags;
    return 0;
}

/* getpeereid(3): the effective uid and gid of the process at the other end of a Unix
 * domain socket, as the kernel recorded them when it connected; Linux's SO_PEERCRED
 * records the same. (macOS's own LOCAL_PEERCRED is a socket option a Linux kernel
 * refuses on a Unix socket, so the server falls back to this call, as it does on a
 * BSD without that option.) */
int getpeereid(int fd, uid_t *uid, gid_t *gid) {
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return -1;
    if (len < sizeof cred) {
        errno = EINVAL;
        return -1;
    }
    *uid = cred.uid;
    *gid = cred.gid;
    return 0;
}
