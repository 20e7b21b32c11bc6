/* blocking_server.h - the baseline shard of the network benchmark: the same
 * wire format and the same semantics (apply pushes, answer pulls) served
 * the plain way, a thread per connection doing blocking read()/write(). */
#ifndef BOAR_BENCH_BLOCKING_SERVER_H
#define BOAR_BENCH_BLOCKING_SERVER_H

#include <stdint.h>

struct blocking_server;

/* Serves keys [0, dim) on the listening socket fd until stopped. */
struct blocking_server *blocking_server_start(int fd, uint64_t dim);
void blocking_server_stop(struct blocking_server *s);

#endif
