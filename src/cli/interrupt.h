/* interrupt.h - Ctrl-C and SIGTERM while `boar train` runs.
 *
 * A scheduler stopping a job sends SIGTERM; a user presses Ctrl-C. Either
 * way the hours already trained should not be lost, and nothing half
 * written should be left behind:
 *   - while the data is read: quit at once with a message (nothing to keep);
 *   - while training, the first signal: say so, finish the running epoch,
 *     and let the caller keep (and save) the best model so far;
 *   - a second signal: quit at once with a message;
 *   - while the model is written: signals wait until the file is complete
 *     (interrupt_hold/release), so it is never left partial.
 */
#ifndef BOAR_CLI_INTERRUPT_H
#define BOAR_CLI_INTERRUPT_H

#include <signal.h>

/* Installs the handlers for SIGINT and SIGTERM, in the reading phase. */
void interrupt_install(void);

/* From now on the first signal only asks training to stop. */
void interrupt_training(void);

/* The first signal received while training (SIGINT or SIGTERM), or 0. */
int interrupt_requested(void);

/* Defers signals while a file is written, and delivers them after. */
void interrupt_hold(sigset_t *saved);
void interrupt_release(const sigset_t *saved);

#endif
