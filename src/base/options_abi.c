/* options_abi.c - boar_options across library versions.
 *
 * A program fills its options with boar_options_default(), a macro that
 * passes the size of boar_options as that program was compiled. The
 * library writes and reads only that many bytes and keeps its defaults
 * for the fields a smaller (older) struct lacks, so adding a field at the
 * end breaks no program built before it. The smallest size it takes is
 * the struct of boar 0.1 (up to n_class_weights). boar_load_options and
 * boar_gen_options follow the same rule.
 */
#include <stddef.h>
#include <string.h>

#include "base/error.h"
#include "options.h"

#define OPTIONS_MIN_SIZE \
	(offsetof(boar_options, n_class_weights) + sizeof(int))

static int size_known(size_t size)
{
	return size >= OPTIONS_MIN_SIZE && size <= sizeof(boar_options);
}

void boar_options_init(boar_options *o, size_t size)
{
	boar_options full;
	boar_options_fill(&full);
	full.size = size;
	if (o && size_known(size))
		memcpy(o, &full, size);
}

/* The caller's bytes over the defaults; NULL or why not. */
static const char *widen(const boar_options *in, boar_options *out)
{
	if (!in)
		return "no options given";
	if (!size_known(in->size))
		return "boar_options.size is not a size this libboar knows: "
		       "fill the options with boar_options_default()";
	boar_options_fill(out);
	memcpy(out, in, in->size);
	out->size = sizeof *out;
	return NULL;
}

int boar_options_check(const boar_options *o, const boar_dataset *d,
		       boar_error *err)
{
	boar_options full;
	return boar_options_import(o, d, &full, err);
}

int boar_options_import(const boar_options *in, const boar_dataset *train,
			boar_options *out, boar_error *err)
{
	const char *why = widen(in, out);
	if (!why)
		why = boar_options_validate(out, train);
	return why ? boar_fail(err, BOAR_EINVAL, "%s", why) : 0;
}

/* boar_load_options and boar_gen_options: the same rule, from their first
 * published shapes (up to csv_log and seed). */
#define LOAD_MIN_SIZE (offsetof(boar_load_options, csv_log) + sizeof(int))
#define GEN_MIN_SIZE (offsetof(boar_gen_options, seed) + sizeof(uint64_t))

void boar_load_options_init(boar_load_options *o, size_t size)
{
	boar_load_options full;
	boar_load_options_fill(&full);
	full.size = size;
	if (o && size >= LOAD_MIN_SIZE && size <= sizeof full)
		memcpy(o, &full, size);
}

int boar_load_options_widen(const boar_load_options *o,
			    boar_load_options *out)
{
	boar_load_options_fill(out);
	if (!o)
		return 0;
	if (o->size < LOAD_MIN_SIZE || o->size > sizeof *out)
		return -1;
	memcpy(out, o, o->size);
	out->size = sizeof *out;
	return 0;
}

void boar_gen_options_init(boar_gen_options *o, size_t size)
{
	boar_gen_options full;
	boar_gen_options_fill(&full);
	full.size = size;
	if (o && size >= GEN_MIN_SIZE && size <= sizeof full)
		memcpy(o, &full, size);
}

int boar_gen_options_widen(const boar_gen_options *o, boar_gen_options *out)
{
	boar_gen_options_fill(out);
	if (o->size < GEN_MIN_SIZE || o->size > sizeof *out)
		return -1;
	memcpy(out, o, o->size);
	out->size = sizeof *out;
	return 0;
}
