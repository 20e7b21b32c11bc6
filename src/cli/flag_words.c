/* flag_words.c - the library's option fields and the CLI flags that set
 * them, for messages (see flag_words.h). */
#include <string.h>

#include "flag_words.h"

/* Field (as the library's messages write it) and the flag that sets it.
 * A field without an underscore is written qualified by its struct, so
 * that an ordinary word of a message is never taken for it. */
static const struct {
	const char *field, *flag;
} flag_words[] = {
	{ "boar_load_options.format", "--format" },
	{ "eta_decay", "--eta-decay" },
	{ "hash_bits", "--hash-bits" },
	{ "init_scale", "--init-scale" },
	{ "early_stop", "--early-stop" },
	{ "gpu_id", "--gpu" },
	{ "n_gpus", "--gpus" },
	{ "threads = 1", "--threads 1" },
	{ "max_memory", "--max-memory" },
	{ "csv_categorical", "--csv-categorical" },
	{ "mf_storage", "--mf-storage" },
	{ "save_resume", "--save-resume" },
	{ "ps_client_config.key", "--secret-file" },
	{ "ps_config.dim", "--dim" },
	{ "l2_user", "--l2-user" },
	{ "l2_item", "--l2-item" },
	{ "mf_nonneg", "--mf-nonneg" },
	{ "mf_loss", "--mf-loss" },
	{ "bias_scale", "--bias-scale" },
};
#define N_FLAG_WORDS (sizeof flag_words / sizeof flag_words[0])

static int is_name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.';
}

/* The table entry that starts at msg as a whole word, or N_FLAG_WORDS. */
static size_t field_at(const char *start, const char *msg)
{
	if (msg > start && is_name_char(msg[-1]))
		return N_FLAG_WORDS;
	for (size_t k = 0; k < N_FLAG_WORDS; k++) {
		size_t len = strlen(flag_words[k].field);
		if (!strncmp(msg, flag_words[k].field, len) &&
		    !(is_name_char(msg[len]) && msg[len] != '.'))
			return k;
	}
	return N_FLAG_WORDS;
}

const char *cli_flag_words(const char *msg, char *buf, size_t n)
{
	size_t at = 0;
	const char *p = msg;
	if (!n)
		return buf;
	while (*p && at + 1 < n) {
		size_t k = field_at(msg, p);
		if (k == N_FLAG_WORDS) {
			buf[at++] = *p++;
			continue;
		}
		size_t len = strlen(flag_words[k].flag);
		if (len > n - 1 - at)
			len = n - 1 - at;
		memcpy(buf + at, flag_words[k].flag, len);
		at += len;
		p += strlen(flag_words[k].field);
	}
	buf[at] = '\0';
	return buf;
}
