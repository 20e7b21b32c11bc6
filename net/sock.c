/* sock.c - plain socket helpers: address parsing, listen, connect.
 *
 * Shared by the shard (which hands the listening socket to its io_uring
 * loop) and the worker client (which talks over blocking sockets).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "net/loop.h"

int net_split_hostport(const char *s, char *host, size_t hostlen,
		       unsigned *port)
{
	const char *colon, *h = s;
	size_t hl;
	if (s[0] == '[') {
		const char *end = strchr(s, ']');
		if (!end || end[1] != ':')
			return -1;
		h = s + 1;
		hl = (size_t)(end - h);
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -1;
		hl = (size_t)(colon - s);
	}
	if (hl == 0 || hl >= hostlen)
		return -1;
	char *endp;
	errno = 0;
	unsigned long p = strtoul(colon + 1, &endp, 10);
	if (errno || endp == colon + 1 || *endp || p > 65535)
		return -1;
	memcpy(host, h, hl);
	host[hl] = '\0';
	*port = (unsigned)p;
	return 0;
}

static int resolve(const char *host, unsigned port, int passive,
		   struct addrinfo **res, boar_error *err)
{
	struct addrinfo hints = { 0 };
	char ps[16];
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = passive ? AI_PASSIVE : 0;
	snprintf(ps, sizeof ps, "%u", port);
	int rc = getaddrinfo(host, ps, &hints, res);
	if (rc)
		return boar_fail(err, BOAR_ENET, "%s:%u: %s", host, port,
				 gai_strerror(rc));
	return 0;
}

/* How long a listen on a port in use is tried again (every 50 ms): a
 * shard restarted on its address right after a kill -9 found it in use
 * (tests/cli/net_kill_shard.sh, now and then), the dead process's
 * listening socket not yet gone (likely its io_uring's files, which the
 * kernel closes after the process). */
#define LISTEN_RETRY_S 3

static int listen_once(struct addrinfo *res, int *out, int *e)
{
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
				0);
		if (fd < 0) {
			*e = errno;
			continue;
		}
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, 128)) {
			*out = fd;
			return 0;
		}
		*e = errno;
		close(fd);
	}
	return -1;
}

int net_listen(const char *host, unsigned port, int *out, boar_error *err)
{
	struct addrinfo *res;
	int rc = resolve(host, port, 1, &res, err), e = 0;
	if (rc)
		return rc;
	for (int tries = 0; listen_once(res, out, &e); tries++) {
		if (e != EADDRINUSE || !port || tries >= LISTEN_RETRY_S * 20) {
			freeaddrinfo(res);
			return boar_fail(err, BOAR_ENET, "listen on %s:%u: %s",
					 host, port, strerror(e));
		}
		nanosleep(&(struct timespec){ .tv_nsec = 50000000 }, NULL);
	}
	freeaddrinfo(res);
	return 0;
}

unsigned net_bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl))
		return 0;
	return ntohs(ss.ss_family == AF_INET6
			     ? ((struct sockaddr_in6 *)&ss)->sin6_port
			     : ((struct sockaddr_in *)&ss)->sin_port);
}

int net_connect(const char *host, unsigned port, int *out, boar_error *err)
{
	struct addrinfo *res, *ai;
	int rc = resolve(host, port, 0, &res, err), e = 0;
	if (rc)
		return rc;
	for (ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
				0);
		if (fd < 0) {
			e = errno;
			continue;
		}
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen)) {
			int one = 1;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
				   sizeof one);
			freeaddrinfo(res);
			*out = fd;
			return 0;
		}
		e = errno;
		close(fd);
	}
	freeaddrinfo(res);
	return boar_fail(err, BOAR_ENET, "connect to %s:%u: %s", host, port,
			 strerror(e));
}

int net_host_is_loopback(const char *host)
{
	struct addrinfo hints = { 0 }, *res, *ai;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, NULL, &hints, &res))
		return 0;
	int all = 1;
	for (ai = res; ai; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET) {
			struct sockaddr_in *a = (struct sockaddr_in *)ai->ai_addr;
			if ((ntohl(a->sin_addr.s_addr) >> 24) != 127)
				all = 0;
		} else if (ai->ai_family == AF_INET6) {
			struct sockaddr_in6 *a =
				(struct sockaddr_in6 *)ai->ai_addr;
			if (!IN6_IS_ADDR_LOOPBACK(&a->sin6_addr))
				all = 0;
		} else {
			all = 0;
		}
	}
	freeaddrinfo(res);
	return all;
}
