#ifndef CEPOLL_SHIM_H
#define CEPOLL_SHIM_H
// Linux's epoll and eventfd, which the Swift Glibc module leaves out. `struct epoll_event` is packed on x86-64, so
// the server passes its two fields through these wrappers instead of building the struct in Swift.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <stdint.h>

static inline int cepoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

static inline int cepoll_control(int epoll, int operation, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event = { .events = events, .data = { .u64 = token } };
    return epoll_ctl(epoll, operation, fd, &event);
}

/// Set in a stored token of 2^32 or more (a connection's) when its event says the peer hung up or the socket failed:
/// edge-triggered, a close that comes with the last bytes is reported once, with them.
static const uint64_t cepoll_hangup_bit = 1ull << 31;

/// Waits for up to `max` events (at most 64) and stores their tokens. The number stored, 0 on timeout, -1 on error
/// (errno set).
static inline int cepoll_wait_tokens(int epoll, int timeout_ms, uint64_t *tokens, int max) {
    struct epoll_event events[64];
    int n = epoll_wait(epoll, events, max < 64 ? max : 64, timeout_ms);
    for (int i = 0; i < n; i++) {
        uint64_t token = events[i].data.u64;
        if ((token >> 32) != 0 && (events[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))) token |= cepoll_hangup_bit;
        tokens[i] = token;
    }
    return n;
}

static const int cepoll_add = EPOLL_CTL_ADD;
static const int cepoll_modify = EPOLL_CTL_MOD;
static const int cepoll_delete = EPOLL_CTL_DEL;
static const uint32_t cepoll_in = EPOLLIN;
static const uint32_t cepoll_one_shot = EPOLLONESHOT;
static const uint32_t cepoll_edge_triggered = EPOLLET;
static const uint32_t cepoll_read_hangup = EPOLLRDHUP;

static inline int cepoll_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }
#endif
