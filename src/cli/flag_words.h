/* flag_words.h - library messages in the CLI's words.
 *
 * The library's messages name its option fields ("eta_decay",
 * "boar_load_options.format"), since a program other than boar has no
 * --flags. Before the CLI prints one, cli_flag_words() puts the flag the
 * user typed in place of each field the CLI has a flag for; the table of
 * field -> flag is flag_words.c, the one place that knows both names.
 */
#ifndef BOAR_CLI_FLAG_WORDS_H
#define BOAR_CLI_FLAG_WORDS_H

#include <stddef.h>

/* msg with each field of the table that stands as a whole word (not part of
 * a longer name) replaced by its flag, into buf[n] (cut at n - 1 bytes).
 * @return buf. */
const char *cli_flag_words(const char *msg, char *buf, size_t n);

#endif
