/* notifyrecv - a stand-in for systemd's notify socket, for the sd_notify
 * tests: binds a datagram unix socket at PATH (or the abstract name NAME)
 * and prints each line of each notification it receives as "PID LINE", PID
 * being the sender's as the kernel says (SCM_CREDENTIALS), flushed at once.
 * Its first line is "# bound ADDR". Runs until killed.
 *
 *   notifyrecv PATH|@NAME
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 2 || (argv[1][0] != '/' && argv[1][0] != '@')) {
        fprintf(stderr, "usage: notifyrecv PATH|@NAME\n");
        return 2;
    }
    const char *name = argv[1];
    size_t len = strlen(name);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (len < 2 || len >= sizeof(a.sun_path)) {
        fprintf(stderr, "notifyrecv: %s: bad length\n", name);
        return 2;
    }
    memcpy(a.sun_path, name, len);
    if (name[0] == '@')
        a.sun_path[0] = 0;
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int on = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) < 0) {
        fprintf(stderr, "notifyrecv: socket: %s\n", strerror(errno));
        return 1;
    }
    if (name[0] == '/')
        unlink(name);
    if (bind(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) <
        0) {
        fprintf(stderr, "notifyrecv: bind %s: %s\n", name, strerror(errno));
        return 1;
    }
    printf("# bound %s\n", name);
    fflush(stdout);
    for (;;) {
        char buf[4097];
        union {
            struct cmsghdr h;
            char space[CMSG_SPACE(sizeof(struct ucred))];
        } c;
        struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf) - 1};
        struct msghdr m = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &c, .msg_controllen = sizeof(c)};
        ssize_t n = recvmsg(fd, &m, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fprintf(stderr, "notifyrecv: recvmsg: %s\n", strerror(errno));
            return 1;
        }
        buf[n] = 0;
        int pid = 0;
        for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h))
            if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_CREDENTIALS) {
                struct ucred u;
                memcpy(&u, CMSG_DATA(h), sizeof(u));
                pid = (int)u.pid;
            }
        for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
            printf("%d %s\n", pid, l);
        fflush(stdout);
    }
}
