/* test_feature_names_api.c - boar_feature_names, the library's way to the
 * names behind a hashed model's slots (the CLI's dump --names uses the
 * same scan): each feature comes with the slot boar_hash_vw gives it,
 * an interaction with its names joined by '*', a stop asked by the
 * callback is BOAR_ECANCELLED, LIBSVM data is refused. */
#include <stdio.h>
#include <string.h>

#include "boar.h"
#include "testutil.h"

struct seen {
	int n, stop_after;
	uint32_t slot[16];
	char name[16][32];
};

static int collect(void *ctx, uint32_t slot, const char *name, size_t len)
{
	struct seen *s = ctx;
	if (s->n < 16 && len < sizeof s->name[0]) {
		s->slot[s->n] = slot;
		memcpy(s->name[s->n], name, len);
		s->name[s->n][len] = 0;
	}
	s->n++;
	return s->stop_after && s->n >= s->stop_after;
}

static int find(const struct seen *s, const char *name, uint32_t slot)
{
	for (int k = 0; k < s->n && k < 16; k++)
		if (!strcmp(s->name[k], name))
			return s->slot[k] == slot;
	return 0;
}

int main(void)
{
	test_dir_make("feature_names");
	static const char text[] = "1 |u alice |d sports\n-1 |u bob\n";
	char vw[512];
	snprintf(vw, sizeof vw, "%s", test_put_file("names.vw", text,
						      sizeof text - 1));
	uint32_t mask = (1u << 18) - 1; /* hash_bits 0: VW's 18 */
	boar_load_options o;
	boar_load_options_default(&o);
	boar_error err;
	struct seen s = {0};
	CHECK_EQ_INT(boar_feature_names(vw, &o, collect, &s, &err), 0);
	CHECK_EQ_INT(s.n, 3);
	CHECK(find(&s, "u^alice", boar_hash_vw("u", "alice") & mask),
	      "u^alice missing or in the wrong slot");
	CHECK(find(&s, "d^sports", boar_hash_vw("d", "sports") & mask),
	      "d^sports missing or in the wrong slot");
	CHECK(find(&s, "u^bob", boar_hash_vw("u", "bob") & mask),
	      "u^bob missing or in the wrong slot");

	/* an interaction's name joins its parts */
	o.vw_interactions = "ud";
	memset(&s, 0, sizeof s);
	CHECK_EQ_INT(boar_feature_names(vw, &o, collect, &s, &err), 0);
	int crossed = 0;
	for (int k = 0; k < s.n && k < 16; k++)
		crossed += !strcmp(s.name[k], "u^alice*d^sports");
	CHECK_EQ_INT(crossed, 1);
	o.vw_interactions = NULL;

	/* the callback stops the scan */
	memset(&s, 0, sizeof s);
	s.stop_after = 1;
	CHECK_EQ_INT(boar_feature_names(vw, &o, collect, &s, &err),
		     BOAR_ECANCELLED);
	CHECK_EQ_INT(s.n, 1);

	/* LIBSVM features are ids, not names */
	static const char lib[] = "+1 1:1 2:0.5\n";
	const char *svm = test_put_file("names.svm", lib, sizeof lib - 1);
	memset(&s, 0, sizeof s);
	CHECK_EQ_INT(boar_feature_names(svm, &o, collect, &s, &err),
		     BOAR_EINVAL);
	CHECK(strstr(err.message, "names.svm") != NULL,
	      "the refusal names the file: %s", err.message);
	CHECK_EQ_INT(boar_feature_names(vw, &o, NULL, NULL, &err), BOAR_EINVAL);
	test_dir_remove();
	return TEST_RESULT();
}
