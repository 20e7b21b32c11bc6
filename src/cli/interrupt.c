/* interrupt.c - what SIGINT and SIGTERM do during training (interrupt.h).
 * The handler calls only async-signal-safe functions (write, _exit). */
#include <string.h>
#include <unistd.h>

#include "interrupt.h"

static volatile sig_atomic_t training; /* 0: reading the data */
static volatile sig_atomic_t first;    /* the first signal while training */

static void say(const char *msg)
{
	ssize_t r = write(STDERR_FILENO, msg, strlen(msg));
	(void)r;
}

static void on_signal(int sig)
{
	if (!training) {
		say("\nboar: interrupted while reading the data: no model "
		    "written\n");
		_exit(128 + sig);
	}
	if (!first) {
		first = sig;
		say("\nboar: interrupted: stopping after this epoch and keeping "
		    "the best model so far (interrupt again to quit now)\n");
		return;
	}
	say("\nboar: interrupted again: quitting now; no model file was "
	    "left half written\n");
	_exit(128 + sig);
}

void interrupt_install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* One handler at a time: a TERM during the INT handler waits. */
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

void interrupt_training(void)
{
	training = 1;
}

int interrupt_requested(void)
{
	return first;
}

void interrupt_hold(sigset_t *saved)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGINT);
	sigaddset(&s, SIGTERM);
	sigprocmask(SIG_BLOCK, &s, saved);
}

void interrupt_release(const sigset_t *saved)
{
	sigprocmask(SIG_SETMASK, saved, NULL);
}
