/*
 * nfq_delay: a fixed delay line for the packets a netfilter rule hands to
 * an NFQUEUE, for kernels that have neither netem nor fq (the device host's
 * and the dev VM's 6.18 kernels: bench/RESULTS-net.md, "added latency").
 *
 *   nfq_delay [-q QUEUE] [-r READY_FILE] [-s SPIN_US] DELAY_US
 *
 * Run it inside a network namespace, then queue that namespace's incoming
 * packets to it, e.g.
 *   iptables -t raw -A PREROUTING -i eth0 -j NFQUEUE --queue-num 0
 * Each packet is accepted DELAY_US microseconds after the daemon read it.
 * Delaying on the receiving side keeps the delay out of the sender's TCP
 * small-queue accounting (the skb no longer belongs to a socket), as a
 * wire would; delaying every machine's input by D adds 2 D to a round trip.
 *
 * The kernel keeps the packets; only their ids (NFQNL_COPY_META, GSO
 * packets whole) come here. A fixed delay releases them in the order they
 * came, so one batch verdict (NFQNL_MSG_VERDICT_BATCH: every id up to this
 * one) accepts all that are due. The daemon asks for SCHED_FIFO so a busy
 * core does not add its time slice to the delay (it sleeps otherwise).
 * A sleeping daemon wakes some tens of microseconds late in a virtual
 * machine (a timer through the hypervisor); -s SPIN_US sleeps only until
 * SPIN_US before a packet is due and polls from there, at the cost of a
 * core while packets are held.
 * READY_FILE is written once the queue is bound (add the rule after it:
 * a queue without a listener drops). On SIGTERM or SIGINT the packets held
 * are accepted at once and one line of counters goes to stderr: packets,
 * and how late they left (mean, max) against their due time.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The kernel queue holds at most this many packets (NFQA_CFG_QUEUE_MAXLEN),
 * so the ring of ids never overflows: 64k packets are 40 ms of a 10 Gb/s
 * link even at 1500 bytes. */
#define HELD_MAX 65536u

struct held {
	uint32_t id;
	uint64_t due_ns;
};

struct delay_line {
	int fd;
	uint16_t queue;
	uint64_t delay_ns;
	uint64_t spin_ns; /* waits shorter than this spin instead of sleeping */
	struct held *ring; /* HELD_MAX entries, head .. head + n */
	uint32_t head, n;
	uint64_t packets, late_sum_ns, late_max_ns;
};

static volatile sig_atomic_t stop_asked;

static void on_stop(int sig)
{
	(void)sig;
	stop_asked = 1;
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "nfq_delay: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* nfq_msg: a queue-subsystem request of TYPE with FLAGS, in BUF (room for
 * a few attributes); attributes follow with nfq_attr */
struct nfq_msg {
	struct nlmsghdr nh;
	struct nfgenmsg nf;
	unsigned char attrs[64];
};

static void nfq_msg_init(struct nfq_msg *m, struct delay_line *d, int type, int flags)
{
	memset(m, 0, sizeof(*m));
	m->nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct nfgenmsg));
	m->nh.nlmsg_type = (NFNL_SUBSYS_QUEUE << 8) | type;
	m->nh.nlmsg_flags = NLM_F_REQUEST | flags;
	m->nf.nfgen_family = AF_UNSPEC;
	m->nf.version = NFNETLINK_V0;
	m->nf.res_id = htons(d->queue);
}

static void nfq_attr(struct nfq_msg *m, int type, const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)m + NLMSG_ALIGN(m->nh.nlmsg_len));
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	m->nh.nlmsg_len = NLMSG_ALIGN(m->nh.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static void nfq_send(struct delay_line *d, struct nfq_msg *m)
{
	struct sockaddr_nl to = { .nl_family = AF_NETLINK };
	if (sendto(d->fd, m, m->nh.nlmsg_len, 0, (struct sockaddr *)&to, sizeof(to)) < 0)
		die("netlink send");
}

/* nfq_config: one configuration request, and the kernel's answer to it */
static void nfq_config(struct delay_line *d, struct nfq_msg *m, const char *what)
{
	char buf[4096];
	nfq_send(d, m);
	ssize_t got = recv(d->fd, buf, sizeof(buf), 0);
	if (got < 0)
		die(what);
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	if (!NLMSG_OK(h, got) || h->nlmsg_type != NLMSG_ERROR) {
		fprintf(stderr, "nfq_delay: %s: unexpected answer %d\n", what, h->nlmsg_type);
		exit(1);
	}
	int err = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
	if (err) {
		errno = -err;
		die(what);
	}
}

static void bind_queue(struct delay_line *d)
{
	struct nfq_msg m;
	struct nfqnl_msg_config_cmd cmd = { .command = NFQNL_CFG_CMD_BIND, .pf = htons(AF_INET) };
	nfq_msg_init(&m, d, NFQNL_MSG_CONFIG, NLM_F_ACK);
	nfq_attr(&m, NFQA_CFG_CMD, &cmd, sizeof(cmd));
	nfq_config(d, &m, "bind queue (another listener? no NFNETLINK_QUEUE?)");

	/* ids only, GSO packets whole (no segmenting for us), a long queue */
	struct nfqnl_msg_config_params params = { .copy_range = 0, .copy_mode = NFQNL_COPY_META };
	uint32_t maxlen = htonl(HELD_MAX), flags = htonl(NFQA_CFG_F_GSO);
	nfq_msg_init(&m, d, NFQNL_MSG_CONFIG, NLM_F_ACK);
	nfq_attr(&m, NFQA_CFG_PARAMS, &params, sizeof(params));
	nfq_attr(&m, NFQA_CFG_QUEUE_MAXLEN, &maxlen, sizeof(maxlen));
	nfq_attr(&m, NFQA_CFG_MASK, &flags, sizeof(flags));
	nfq_attr(&m, NFQA_CFG_FLAGS, &flags, sizeof(flags));
	nfq_config(d, &m, "configure queue");
}

/* release: accept every held packet due by NOW (all if NOW is UINT64_MAX) */
static void release(struct delay_line *d, uint64_t now)
{
	uint32_t last = 0, count = 0;
	while (count < d->n) {
		struct held *h = &d->ring[(d->head + count) % HELD_MAX];
		if (h->due_ns > now)
			break;
		if (now != UINT64_MAX) {
			uint64_t late = now - h->due_ns;
			d->late_sum_ns += late;
			if (late > d->late_max_ns)
				d->late_max_ns = late;
		}
		last = h->id;
		count++;
	}
	if (!count)
		return;
	struct nfq_msg m;
	struct nfqnl_msg_verdict_hdr v = { .verdict = htonl(NF_ACCEPT), .id = htonl(last) };
	nfq_msg_init(&m, d, NFQNL_MSG_VERDICT_BATCH, 0);
	nfq_attr(&m, NFQA_VERDICT_HDR, &v, sizeof(v));
	nfq_send(d, &m);
	d->head = (d->head + count) % HELD_MAX;
	d->n -= count;
}

/* hold: the packet message H, read at NOW, joins the line */
static void hold(struct delay_line *d, struct nlmsghdr *h, uint64_t now)
{
	struct nlattr *a = (struct nlattr *)((char *)NLMSG_DATA(h) + NLA_ALIGN(sizeof(struct nfgenmsg)));
	int left = (int)h->nlmsg_len - (int)((char *)a - (char *)h);
	while (left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= left) {
		if ((a->nla_type & NLA_TYPE_MASK) == NFQA_PACKET_HDR &&
		    a->nla_len >= NLA_HDRLEN + sizeof(uint32_t)) {
			struct nfqnl_msg_packet_hdr ph;
			memcpy(&ph, (char *)a + NLA_HDRLEN, sizeof(uint32_t));
			if (d->n == HELD_MAX) /* cannot happen with the queue's limit */
				release(d, UINT64_MAX);
			d->ring[(d->head + d->n) % HELD_MAX] =
				(struct held){ ntohl(ph.packet_id), now + d->delay_ns };
			d->n++;
			d->packets++;
			return;
		}
		left -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
	fprintf(stderr, "nfq_delay: a packet message without its id\n");
	exit(1);
}

/* drain: read the packets waiting on the socket (at most a batch, so the
 * due ones are not kept waiting behind a burst) */
static void drain(struct delay_line *d)
{
	static char buf[1 << 16];
	for (int batch = 0; batch < 64; batch++) {
		ssize_t got = recv(d->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (got < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			die("netlink receive");
		}
		uint64_t now = now_ns();
		int len = (int)got;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				int err = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
				if (err) {
					errno = -err;
					die("verdict");
				}
			} else if (h->nlmsg_type == ((NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET)) {
				hold(d, h, now);
			}
		}
	}
}

static void run(struct delay_line *d)
{
	sigset_t during_poll;
	sigemptyset(&during_poll);
	struct pollfd pfd = { .fd = d->fd, .events = POLLIN };
	while (!stop_asked) {
		uint64_t now = now_ns();
		release(d, now);
		struct timespec wait, *waitp = NULL;
		if (d->n) {
			uint64_t due = d->ring[d->head].due_ns, t = due > now ? due - now : 0;
			if (t <= d->spin_ns)
				t = 0;
			else
				t -= d->spin_ns;
			wait.tv_sec = (time_t)(t / 1000000000u);
			wait.tv_nsec = (long)(t % 1000000000u);
			waitp = &wait;
		}
		int r = ppoll(&pfd, 1, waitp, &during_poll);
		if (r < 0 && errno != EINTR)
			die("poll");
		if (r > 0)
			drain(d);
	}
	release(d, UINT64_MAX);
}

static void usage(void)
{
	fprintf(stderr, "usage: nfq_delay [-q QUEUE] [-r READY_FILE] [-s SPIN_US] DELAY_US\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct delay_line d = { 0 };
	const char *ready = NULL;
	int opt;
	while ((opt = getopt(argc, argv, "q:r:s:")) != -1) {
		char *end;
		if (opt == 'q') {
			long q = strtol(optarg, &end, 10);
			if (*end || q < 0 || q > 65535)
				usage();
			d.queue = (uint16_t)q;
		} else if (opt == 'r') {
			ready = optarg;
		} else if (opt == 's') {
			double s = strtod(optarg, &end);
			if (*end || !(s >= 0 && s <= 1e6))
				usage();
			d.spin_ns = (uint64_t)(s * 1000);
		} else {
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	char *end;
	double us = strtod(argv[optind], &end);
	if (*end || !(us >= 0 && us <= 10e6))
		usage();
	d.delay_ns = (uint64_t)(us * 1000 + 0.5);

	d.ring = malloc(HELD_MAX * sizeof(*d.ring));
	if (!d.ring)
		die("memory");
	d.fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (d.fd < 0)
		die("netlink socket");
	int big = 64 << 20, one = 1;
	if (setsockopt(d.fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) < 0)
		setsockopt(d.fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	setsockopt(d.fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one));
	bind_queue(&d);

	struct sched_param rt = { .sched_priority = 50 };
	if (sched_setscheduler(0, SCHED_FIFO, &rt) < 0)
		fprintf(stderr, "nfq_delay: no SCHED_FIFO (%s): delays may stretch on busy cores\n",
			strerror(errno));

	struct sigaction sa = { .sa_handler = on_stop };
	sigemptyset(&sa.sa_mask);
	sigset_t blocked;
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGTERM);
	sigaddset(&blocked, SIGINT);
	sigprocmask(SIG_BLOCK, &blocked, NULL); /* delivered only inside ppoll */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	if (ready) {
		FILE *f = fopen(ready, "w");
		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f))
			die(ready);
	}
	run(&d);
	fprintf(stderr, "nfq_delay: queue %u, delay %.1f us: %llu packets, left late by %.1f us mean, %.1f us max\n",
		d.queue, us, (unsigned long long)d.packets,
		d.packets ? d.late_sum_ns / 1e3 / d.packets : 0.0, d.late_max_ns / 1e3);
	return 0;
}
